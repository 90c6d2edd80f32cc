// What scenario tests read from a simulated cluster: a Pod's condition, the Pods not being deleted,
// a guard that fails a test the moment fewer Pods than wanted are Ready, and from the timeline the
// Jobs created and the most running at once.
import type { KubeObject } from '../../src/k8s/types.js'
import type { Simulator } from '../../src/simulator/simulator.js'
import { conditionsOf } from '../../src/simulator/collaset.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'

/** The status of a Pod's condition `type`, if it has one. */
export function podCondition (pod: KubeObject | undefined, type: string): string | undefined {
  if (pod === undefined) return undefined
  const status = conditionsOf(pod).find(c => c.type === type)?.status
  return typeof status === 'string' ? status : undefined
}

/** The Pods of `namespace` that are not being deleted. */
export function livePods (sim: Simulator, namespace = 'default'): KubeObject[] {
  return sim.list({ apiVersion: 'v1', kind: 'Pod' }, namespace).filter(p => p.metadata.deletionTimestamp === undefined)
}

/** A check for `PodKubelet.run`: fails the test the first second fewer than `min` live Pods are Ready. */
export function capacityGuard (
  t: { fail: (message: string) => void },
  sim: Simulator,
  min: number,
  namespace = 'default'
): () => void {
  let failed = false
  return () => {
    const ready = livePods(sim, namespace).filter(p => podCondition(p, 'Ready') === 'True')
    if (!failed && ready.length < min) {
      failed = true
      t.fail(
        `t=${sim.seconds()}s: only ${ready.length} Pods Ready ` +
          `(${ready.map(p => p.metadata.name).join(', ')}), want at least ${min}`
      )
    }
  }
}

/** The Jobs created over the timeline, in the order they were. */
export function createdJobs (sim: Simulator): string[] {
  return sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name)
}

/** The most Jobs running at once over the timeline: started and not yet finished or deleted. */
export function mostRunning (sim: Simulator): number {
  const running = new Set<string>()
  let most = 0
  for (const event of sim.timeline) {
    if (event.object.kind !== 'Job') continue
    if (event.type === 'job-started') running.add(event.object.name)
    if (['job-succeeded', 'job-failed', 'deleted'].includes(event.type)) running.delete(event.object.name)
    most = Math.max(most, running.size)
  }
  return most
}

/** A step of a scenario's JobFlow: `name` with an inline Job of one container, and `extra` fields. */
export function inlineStep (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

/** A JobFlow `name` in namespace default, of `spec`, as a scenario applies it. */
export function scenarioJobFlow (name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', metadata: { name, namespace: 'default' }, spec }
}
