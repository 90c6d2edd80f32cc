// CollaSet in the simulator: its CompositeController (children: Pods), and a scripted kubelet for
// its Pods. The kubelet moves a Pod from Pending to Running with its containers ready a fixed
// delay after the Pod was created, and computes Ready as the real kubelet does: containers ready
// AND every readiness gate's condition True. The readiness gate itself is set by the service's
// SetPodCondition effect (src/simulator/effects.ts), after which Ready follows at once. A running
// Pod whose container's image changed (an in-place update) has that container restarted as the
// kubelet does: not ready at once, back with the new image and one more restart after the same delay.
// It resizes in place as a 1.33+ kubelet does: each container's status reports its resources, and a
// container whose resources changed reports the new ones after the same delay, without a restart.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { REVISION_LABEL } from '../controllers/collaset/pods.js'
import { sameResources } from '../k8s/quantity.js'
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
  /** Reports each container's resources and resizes in place, as 1.33 and later do. Default true. */
  resizes?: boolean
  /** The Pods this kubelet runs. Default: CollaSet Pods (those with a jobhooks.io/revision label). */
  runs?: (pod: KubeObject) => boolean
}

/** The kubelet's part for Pods: CollaSet Pods unless told otherwise. */
interface ContainerStatus {
  name: string
  image?: string
  ready?: boolean
  restartCount?: number
  resources?: Record<string, unknown>
  [field: string]: unknown
}

interface ContainerSpec {
  name: string
  image?: string
  resources?: Record<string, unknown>
}

function containersOf (pod: KubeObject): ContainerSpec[] {
  const spec = isRecord(pod.spec) ? pod.spec : {}
  const containers: ContainerSpec[] = []
  for (const c of Array.isArray(spec.containers) ? spec.containers.filter(isRecord) : []) {
    containers.push({ ...c, name: String(c.name) })
  }
  return containers
}

export class PodKubelet {
  /** Pods whose containers restart for a new image: when they are back (ms), by UID. */
  private readonly restarting = new Map<string, number>()

  constructor (private readonly sim: Simulator, private readonly behaviour: PodKubeletBehaviour = {}) {}

  /**
   * Restarts the containers whose image the Pod's spec changed (down now, back after the start
   * delay) and applies a resize (its resources reported after the same delay, no restart).
   */
  private restartChanged (pod: KubeObject, now: number, time: string): void {
    const status = isRecord(pod.status) ? pod.status : {}
    const specs = new Map(containersOf(pod).map(c => [c.name, c]))
    const statuses = (Array.isArray(status.containerStatuses) ? status.containerStatuses : []) as ContainerStatus[]
    const imageChanged = (c: ContainerStatus): boolean => specs.has(c.name) && specs.get(c.name)?.image !== c.image
    const resized = (c: ContainerStatus): boolean => c.resources !== undefined &&
      specs.has(c.name) && !sameResources(specs.get(c.name)?.resources ?? {}, c.resources)
    const changed = statuses.filter(c => imageChanged(c) || resized(c))
    const uid = String(pod.metadata.uid)
    if (changed.length === 0) return
    const due = this.restarting.get(uid)
    if (due === undefined) {
      this.restarting.set(uid, now + (this.behaviour.startAfterSeconds ?? 3) * 1000)
      const waiting = { waiting: { reason: 'ContainerCreating' } }
      const down = statuses.map(c => (imageChanged(c) ? { ...c, ready: false, state: waiting } : c))
      if (down.some((c, i) => c !== statuses[i])) this.setContainers(pod, down, time)
      return
    }
    if (now < due) return
    this.restarting.delete(uid)
    const running = { running: { startedAt: time } }
    const back = statuses.map(c => {
      const spec = specs.get(c.name)
      if (spec === undefined || !changed.includes(c)) return c
      const restart = imageChanged(c) ? { restartCount: (c.restartCount ?? 0) + 1, state: running } : {}
      const resources = c.resources === undefined ? {} : { resources: spec.resources ?? {} }
      return { ...c, ...restart, ...resources, image: spec.image, ready: true }
    })
    this.setContainers(pod, back, time)
  }

  /** The containers' statuses, and ContainersReady and Ready after them. */
  private setContainers (pod: KubeObject, containerStatuses: ContainerStatus[], time: string): void {
    const status = isRecord(pod.status) ? pod.status : {}
    const ready = containerStatuses.every(c => c.ready === true) ? 'True' : 'False'
    const conditions = setCondition(conditionsOf(pod), 'ContainersReady', ready, time)
    const next = withReadiness({ ...pod, status: { ...status, conditions, containerStatuses } }, time)
    this.sim.store.updateStatus(refOf(pod), next.status)
  }

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
      if (status.phase === 'Running') {
        this.restartChanged(pod, now, time)
      } else if (status.phase === undefined) {
        const scheduled = setCondition([], 'PodScheduled', 'True', time)
        const conditions = setCondition(scheduled, 'ContainersReady', 'False', time)
        const pending = withReadiness({ ...pod, status: { ...status, phase: 'Pending', conditions } }, time)
        this.sim.store.updateStatus(refOf(pod), pending.status)
      } else if (status.phase === 'Pending' && due && this.behaviour.neverStarts?.(pod) !== true) {
        const containers = containersOf(pod)
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
              ...(this.behaviour.resizes === false ? {} : { resources: c.resources ?? {} }),
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
