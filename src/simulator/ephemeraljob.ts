// EphemeralJob in the simulator: its CompositeController (no children, customize asks for Pods),
// running Pods to inject into, and a scripted kubelet that moves injected ephemeral containers
// through waiting → running → terminated in simulated time, with the exit code a scenario gives
// each Pod (or each container of a Pod).
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { JOB_NAME_ENV } from '../controllers/ephemeraljob/spec.js'
import { kubeTime, refOf, type ObjectRef } from './objects.js'
import type { ObjectStore } from './store.js'
import type { ContainerExit, ControllerConfig, EphemeralBehaviour, HookVersion } from './types.js'
import { controllerFromManifest } from './controllers.js'

/** EphemeralJob: no child resources; customize asks for the Pods its selector matches. */
export function ephemeraljobController (hookVersion?: HookVersion): ControllerConfig {
  return controllerFromManifest('ephemeraljobs', hookVersion)
}

export type { ContainerExit, EphemeralBehaviour }

export interface KubeletHost {
  store: ObjectStore
  nowMs: () => number
  /** Runs `run` after `seconds` of simulated time if the object still exists with this uid. */
  schedule: (seconds: number, ref: ObjectRef, uid: string, what: string, run: () => void) => void
  record: (type: 'container-started' | 'container-finished', pod: ObjectRef, message: string) => void
}

/** The kubelet's part for ephemeral containers: statuses in `status.ephemeralContainerStatuses`. */
export class EphemeralKubelet {
  constructor (private readonly host: KubeletHost, private readonly behaviour: EphemeralBehaviour = {}) {}

  /** Sets an exit for a Pod (all its containers), read when its containers start running. */
  setExit (pod: string, exit: ContainerExit | Record<string, ContainerExit>): void {
    this.behaviour.exits = { ...this.behaviour.exits, [pod]: exit }
  }

  injected (pod: KubeObject, containers: EphemeralContainer[]): void {
    const ref = refOf(pod)
    const uid = pod.metadata.uid as string
    for (const container of containers) {
      this.setState(ref, container, { waiting: { reason: 'ContainerCreating' } })
      const start = `start ${container.name} in Pod ${ref.name}`
      this.host.schedule(this.behaviour.startAfterSeconds ?? 1, ref, uid, start, () => {
        this.setState(ref, container, { running: { startedAt: kubeTime(this.host.nowMs()) } })
        this.host.record('container-started', ref, container.name)
        const exit = this.exitOf(ref.name, container.name)
        if (exit === 'hang') return
        const startedAt = kubeTime(this.host.nowMs())
        const finish = `finish ${container.name} in Pod ${ref.name}`
        this.host.schedule(this.behaviour.runSeconds ?? 5, ref, uid, finish, () => {
          const reason = exit === 0 ? 'Completed' : 'Error'
          const finishedAt = kubeTime(this.host.nowMs())
          this.setState(ref, container, { terminated: { exitCode: exit, reason, startedAt, finishedAt } })
          this.host.record('container-finished', ref, `${container.name} exit code ${exit}`)
        })
      })
    }
  }

  private exitOf (pod: string, container: string): ContainerExit {
    const exit = this.behaviour.exits?.[pod]
    if (exit === undefined) return 0
    if (typeof exit === 'number' || exit === 'hang') return exit
    return exit[container] ?? 0
  }

  private setState (ref: ObjectRef, container: EphemeralContainer, state: Record<string, unknown>): void {
    const pod = this.host.store.get(ref)
    if (pod === undefined) return
    const status = isRecord(pod.status) ? pod.status : {}
    const list = Array.isArray(status.ephemeralContainerStatuses)
      ? status.ephemeralContainerStatuses.filter(isRecord)
      : []
    const entry = {
      name: container.name, image: container.image, imageID: '', lastState: {}, ready: false, restartCount: 0, state
    }
    const known = list.some(s => s.name === container.name)
    const next = known ? list.map(s => (s.name === container.name ? entry : s)) : [...list, entry]
    this.host.store.updateStatus(ref, { ...status, ephemeralContainerStatuses: next })
  }
}

/** A standalone Pod that runs (as the kubelet reports it), with one container per name. */
export function runningPod (
  name: string, labels: Record<string, string>,
  options: { namespace?: string, containers?: string[], phase?: string } = {}
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? 'default', labels },
    spec: {
      containers: (options.containers ?? ['app']).map(c => ({ name: c, image: 'busybox:1.36' })),
      nodeName: 'node-1'
    },
    status: { phase: options.phase ?? 'Running' }
  }
}

/**
 * The ephemeral containers of one EphemeralJob (by the name in their env) in the stored Pods,
 * with their state: `waiting` from injection until running, then `running`, then `terminated`.
 */
export function jobContainers (
  store: ObjectStore, jobName: string, namespace = 'default'
): Array<{ pod: string, name: string, state: 'waiting' | 'running' | 'terminated', exitCode?: number }> {
  const found: Array<{ pod: string, name: string, state: 'waiting' | 'running' | 'terminated', exitCode?: number }> = []
  for (const pod of store.list('v1', 'Pod', namespace)) {
    const spec = isRecord(pod.spec) ? pod.spec : {}
    const status = isRecord(pod.status) ? pod.status : {}
    const statuses = Array.isArray(status.ephemeralContainerStatuses)
      ? status.ephemeralContainerStatuses.filter(isRecord)
      : []
    for (
      const container of Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers as EphemeralContainer[] : []
    ) {
      if (!(container.env ?? []).some(e => e.name === JOB_NAME_ENV && e.value === jobName)) continue
      const state = statuses.find(s => s.name === container.name)?.state
      const seen = { pod: pod.metadata.name, name: container.name }
      if (isRecord(state) && isRecord(state.terminated)) {
        found.push({ ...seen, state: 'terminated', exitCode: state.terminated.exitCode as number })
      } else if (isRecord(state) && isRecord(state.running)) {
        found.push({ ...seen, state: 'running' })
      } else found.push({ pod: pod.metadata.name, name: container.name, state: 'waiting' })
    }
  }
  return found
}
