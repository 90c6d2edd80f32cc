// What a Pod says about itself: whether it is going away or finished, ready, serving; the order
// in which kinds pick Pods; and the env marks that say who put a container into it.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from './types.js'
import { isRecord } from './types.js'
import { findCondition } from './conditions.js'
import { SERVICE_READY } from './labels.js'

function conditions (pod: KubeObject): unknown {
  return isRecord(pod.status) ? pod.status.conditions : undefined
}

export function isTerminating (pod: KubeObject): boolean {
  return typeof pod.metadata.deletionTimestamp === 'string'
}

export function podPhaseOf (pod: KubeObject): string | undefined {
  return isRecord(pod.status) && typeof pod.status.phase === 'string' ? pod.status.phase : undefined
}

/** A Pod that has finished for good (evicted, or its containers exited with restartPolicy Never/OnFailure). */
export function isFinished (pod: KubeObject): boolean {
  const phase = podPhaseOf(pod)
  return phase === 'Succeeded' || phase === 'Failed'
}

export function isReady (pod: KubeObject): boolean {
  return findCondition(conditions(pod), 'Ready')?.status === 'True'
}

export function containersReady (pod: KubeObject): boolean {
  return findCondition(conditions(pod), 'ContainersReady')?.status === 'True'
}

/** The status of the Pod's service-ready condition, if it has one. */
export function serviceReadyStatus (pod: KubeObject): string | undefined {
  const status = findCondition(conditions(pod), SERVICE_READY)?.status
  return typeof status === 'string' ? status : undefined
}

/** The Pod's service-ready condition (the readiness gate's), if it has one: its reason says who set it. */
export function serviceReadyCondition (pod: KubeObject): Record<string, unknown> | undefined {
  return findCondition(conditions(pod), SERVICE_READY)
}

/** A list's entries that are objects; none of a value that is no list. */
export function recordsOf (value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter(isRecord) : []
}

/** The Pod's containers as its spec lists them. */
export function podContainers (pod: KubeObject): Array<Record<string, unknown>> {
  return recordsOf(isRecord(pod.spec) ? pod.spec.containers : undefined)
}

/** The Pod's container statuses as its status lists them. */
export function podContainerStatuses (pod: KubeObject): Array<Record<string, unknown>> {
  return recordsOf(isRecord(pod.status) ? pod.status.containerStatuses : undefined)
}

export function serviceReady (pod: KubeObject): boolean {
  return serviceReadyStatus(pod) === 'True'
}

/** Ready and serving: Ready (which needs every readiness gate) and the service-ready condition True. */
export function isAvailable (pod: KubeObject): boolean {
  return isReady(pod) && serviceReady(pod)
}

export function hasServiceGate (pod: KubeObject): boolean {
  const spec = isRecord(pod.spec) ? pod.spec : {}
  return (
    Array.isArray(spec.readinessGates) &&
    spec.readinessGates.some(g => isRecord(g) && g.conditionType === SERVICE_READY)
  )
}

/** Oldest first, then by name: the order in which kinds pick Pods. */
export function byCreation (a: KubeObject, b: KubeObject): number {
  const at = a.metadata.creationTimestamp ?? ''
  const bt = b.metadata.creationTimestamp ?? ''
  if (at !== bt) return at < bt ? -1 : 1
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0
}

/** The value of a container's env variable `name`, when it is a plain value. */
export function envValue (container: Record<string, unknown>, name: string): string | undefined {
  const env = Array.isArray(container.env) ? container.env : []
  const found = env.find((e): e is EnvVar => isRecord(e) && e.name === name)
  return typeof found?.value === 'string' ? found.value : undefined
}

/** Which env variables mark a container as someone's: one holds their name, one their UID. */
export interface EnvMarks {
  name: string
  uid: string
}

/** Whether `container` carries the marks of `owner` (its name, and its UID when it has one). */
export function markedBy (
  container: Record<string, unknown>,
  marks: EnvMarks,
  owner: { name: string; uid?: string }
): boolean {
  if (envValue(container, marks.name) !== owner.name) return false
  return owner.uid === undefined || envValue(container, marks.uid) === owner.uid
}

/** A node is assigned: `spec.nodeName` is set, or the scheduler reports `PodScheduled`. */
export function isScheduled (pod: KubeObject): boolean {
  if (isRecord(pod.spec) && typeof pod.spec.nodeName === 'string' && pod.spec.nodeName !== '') return true
  return isRecord(pod.status) && findCondition(pod.status.conditions, 'PodScheduled')?.status === 'True'
}
