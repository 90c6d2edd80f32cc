// CollaSet in the simulator: its CompositeController (children: Pods), and a scripted kubelet for
// its Pods. The kubelet moves a Pod from Pending to Running with its containers ready a fixed
// delay after the Pod was created, and computes Ready as the real kubelet does: containers ready
// AND every readiness gate's condition True. The readiness gate itself is set by the service's
// SetPodCondition effect (src/simulator/effects.ts), after which Ready follows at once.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { REVISION_LABEL } from '../controllers/collaset/pods.js'
import { kubeTime, refOf } from './objects.js'
import type { ControllerConfig, HookVersion } from './types.js'
import type { Simulator } from './simulator.js'
import { conditionsOf, setCondition, withReadiness } from './readiness.js'
import { controllerFromManifest } from './controllers.js'

export { conditionsOf, withReadiness }

export function collasetController (hookVersion?: HookVersion): ControllerConfig {
  return controllerFromManifest('collasets', hookVersion)
}

export interface PodKubeletBehaviour {
  /** Seconds from the Pod's creation to Running with its containers ready. Default 3. */
  startAfterSeconds?: number
  /** Pods whose containers never become ready (a bad image, say): they stay Pending. */
  neverStarts?: (pod: KubeObject) => boolean
  /** The Pods this kubelet runs. Default: CollaSet Pods (those with a jobhooks.io/revision label). */
  runs?: (pod: KubeObject) => boolean
}

/** The kubelet's part for Pods: CollaSet Pods unless told otherwise. */
export class PodKubelet {
  constructor (private readonly sim: Simulator, private readonly behaviour: PodKubeletBehaviour = {}) {}

  /** Brings every CollaSet Pod up to date with the clock. */
  tick (): void {
    const now = this.sim.now().getTime()
    const time = kubeTime(now)
    for (const pod of this.sim.store.list('v1', 'Pod')) {
      const runs = this.behaviour.runs ?? (p => p.metadata.labels?.[REVISION_LABEL] !== undefined)
      if (!runs(pod) || pod.metadata.deletionTimestamp !== undefined) continue
      const status = isRecord(pod.status) ? pod.status : {}
      const created = Date.parse(pod.metadata.creationTimestamp ?? time)
      const due = now >= created + (this.behaviour.startAfterSeconds ?? 3) * 1000
      if (status.phase === undefined) {
        const scheduled = setCondition([], 'PodScheduled', 'True', time)
        const conditions = setCondition(scheduled, 'ContainersReady', 'False', time)
        const pending = withReadiness({ ...pod, status: { ...status, phase: 'Pending', conditions } }, time)
        this.sim.store.updateStatus(refOf(pod), pending.status)
      } else if (status.phase === 'Pending' && due && this.behaviour.neverStarts?.(pod) !== true) {
        const spec = pod.spec as Record<string, unknown> | undefined
        const containers = Array.isArray(spec?.containers)
          ? (spec.containers as Array<{ name: string, image: string }>)
          : []
        const conditions = setCondition(conditionsOf(pod), 'ContainersReady', 'True', time)
        this.sim.store.updateStatus(refOf(pod), withReadiness({
          ...pod,
          status: {
            ...status,
            phase: 'Running',
            startTime: time,
            conditions,
            containerStatuses: containers.map(c => ({
              name: c.name,
              image: c.image,
              ready: true,
              restartCount: 0,
              started: true,
              state: { running: { startedAt: time } }
            }))
          }
        }, time).status)
      }
    }
  }

  /** Runs the simulation a second at a time until `condition` holds; throws, with the timeline, after `seconds`. */
  async runUntil (condition: () => boolean, seconds = 120, check: () => void = () => {}): Promise<void> {
    for (let i = 0; i < seconds && !condition(); i++) await this.run(1, check)
    if (!condition()) throw new Error(`not reached within ${seconds}s:\n${this.sim.timelineText()}`)
  }

  /** Runs the simulation `seconds` seconds, a second at a time, the kubelet first; `check` after each second. */
  async run (seconds: number, check: () => void = () => {}): Promise<void> {
    for (let i = 0; i < seconds; i++) {
      this.tick()
      await this.sim.advance(1)
      this.tick()
      await this.sim.advance(0)
      check()
    }
  }
}
