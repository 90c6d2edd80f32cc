// What scenario tests read from a simulated cluster: a Pod's condition, the Pods not being deleted,
// and a guard that fails a test the moment fewer Pods than wanted are Ready.
import type { KubeObject } from '../../src/k8s/types.js'
import type { Simulator } from '../../src/simulator/simulator.js'
import { conditionsOf } from '../../src/simulator/collaset.js'

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
