// The parent, pods, effects and outcomes the Event tests share (test/effects/events-*.test.ts).
import type { EventRecord } from '../../src/effects/events.js'
import type { Effect, EffectOutcome, ObjectRef } from '../../src/effects/types.js'

export const NOW = new Date('2026-01-02T03:04:05.000Z')
export const PARENT: ObjectRef = {
  apiVersion: 'jobhooks.io/v1alpha1',
  kind: 'OperationJob',
  namespace: 'team-a',
  name: 'opj',
  uid: 'uid-opj'
}
export const pod = (name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'team-a',
  name,
  uid: `uid-${name}`
})
export const evict = (name: string): Effect => ({ type: 'Evict', target: pod(name) })
export const inject = (name: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: pod(name),
  containers: [{ name: 'debug', image: 'busybox:1.36' }]
})
export const applied = (effect: Effect): EffectOutcome => ({ effect, result: 'applied' })
export const BUDGET = 'The disruption budget web needs 2 healthy pods and has 2 currently'
export const refusedByBudget = (name: string): EffectOutcome => ({
  effect: evict(name),
  result: 'failed',
  message: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.",
  disruptionBudget: BUDGET
})
export const after = (seconds: number): Date => new Date(NOW.getTime() + seconds * 1000)

export const record = (message: string, type: EventRecord['type'] = 'Normal', reason = 'EvictedPod'): EventRecord => ({
  type,
  reason,
  message,
  action: 'Evict',
  related: pod('web-0')
})
