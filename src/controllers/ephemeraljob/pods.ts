// Reading Pods for an EphemeralJob: which ephemeral containers are ours, what state each is in,
// what a Pod's outcome is, and which Pods may receive containers.
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { markedBy, isTerminating, podPhaseOf } from '../../k8s/pods.js'
import { JOB_NAME_ENV, JOB_UID_ENV } from './spec.js'

export type PodPhase = 'Waiting' | 'Running' | 'Succeeded' | 'Failed'
/** A template container in one Pod: not injected yet (`Absent`), someone else's, or ours in a state. */
export type ContainerState = 'Absent' | 'Foreign' | PodPhase

/** Who an EphemeralJob is: its containers carry its name, and its UID when it has one. */
export interface JobIdentity {
  name: string
  uid?: string
}

/**
 * Waiting reasons after which an ephemeral container never starts: it is not restarted, so
 * these are failures. Other waiting reasons (ContainerCreating, ErrImagePull, ImagePullBackOff)
 * may still resolve.
 */
const FATAL_WAITING = new Set(
  ['RunContainerError', 'CreateContainerError', 'CreateContainerConfigError', 'InvalidImageName', 'ErrImageNeverPull']
)

export interface ContainerView {
  name: string
  state: ContainerState
  /** Why it failed ("exit code 1", a waiting reason). */
  message?: string
  finishedAt?: string
}

function specContainers (pod: KubeObject): Record<string, unknown>[] {
  const spec = isRecord(pod.spec) ? pod.spec : {}
  return Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers.filter(isRecord) : []
}

/** Whether an ephemeral container of a Pod was injected by this job (same name, same UID). */
export function isOurs (container: Record<string, unknown>, job: JobIdentity): boolean {
  return markedBy(container, { name: JOB_NAME_ENV, uid: JOB_UID_ENV }, job)
}

/** The state of each template container in `pod`. */
export function containerViews (pod: KubeObject, template: EphemeralContainer[], job: JobIdentity): ContainerView[] {
  const inSpec = specContainers(pod)
  const status = isRecord(pod.status) ? pod.status : {}
  const statuses = Array.isArray(
    status.ephemeralContainerStatuses
  )
    ? status.ephemeralContainerStatuses.filter(isRecord)
    : []
  return template.map(({ name }) => {
    const container = inSpec.find(c => c.name === name)
    if (container === undefined) return { name, state: 'Absent' }
    if (!isOurs(container, job)) return { name, state: 'Foreign' }
    return readStatus(name, statuses.find(s => s.name === name))
  })
}

function readStatus (name: string, status: Record<string, unknown> | undefined): ContainerView {
  const state = isRecord(status?.state) ? status.state : {}
  if (isRecord(state.terminated)) {
    const code = typeof state.terminated.exitCode === 'number' ? state.terminated.exitCode : undefined
    const finishedAt = typeof state.terminated.finishedAt === 'string' ? state.terminated.finishedAt : undefined
    if (code === 0) return { name, state: 'Succeeded', ...(finishedAt !== undefined ? { finishedAt } : {}) }
    const { reason: why } = state.terminated
    const reason = typeof why === 'string' && why !== '' ? ` (${why})` : ''
    return {
      name,
      state: 'Failed',
      message: `${name} exited with code ${code ?? 'unknown'}${reason}`,
      ...(finishedAt !== undefined ? { finishedAt } : {})
    }
  }
  if (isRecord(state.running)) return { name, state: 'Running' }
  if (isRecord(state.waiting) && typeof state.waiting.reason === 'string' && FATAL_WAITING.has(state.waiting.reason)) {
    const { message } = state.waiting
    const detail = typeof message === 'string' && message !== '' ? `: ${message}` : ''
    return { name, state: 'Failed', message: `${name} could not start: ${state.waiting.reason}${detail}` }
  }
  return { name, state: 'Waiting' }
}

/**
 * A Pod's outcome from its containers: finished once every container finished (Failed if one
 * failed); Running while one runs; Waiting otherwise (injected or still to inject, not started).
 */
export function podPhase (views: ContainerView[]): PodPhase {
  const settled = views.every(v => v.state === 'Succeeded' || v.state === 'Failed' || v.state === 'Foreign')
  if (settled) return views.some(v => v.state === 'Failed' || v.state === 'Foreign') ? 'Failed' : 'Succeeded'
  return views.some(v => v.state === 'Running') ? 'Running' : 'Waiting'
}

/** The names of the Pod's regular containers, which `targetContainerName` must name. */
function regularContainers (pod: KubeObject): Set<string> {
  const spec = isRecord(pod.spec) ? pod.spec : {}
  const list = Array.isArray(spec.containers) ? spec.containers.filter(isRecord) : []
  return new Set(list.map(c => c.name).filter((n): n is string => typeof n === 'string'))
}

/**
 * Why a Pod cannot receive the template's containers now, or undefined when it can: it must run,
 * not be terminating, have every target container, and hold no ephemeral container of a template
 * name already (ours would have made it chosen; anyone else's is theirs).
 */
export function ineligibility (pod: KubeObject, template: EphemeralContainer[]): string | undefined {
  if (typeof pod.metadata.uid !== 'string') return 'it has no uid'
  if (isTerminating(pod)) return 'it is terminating'
  if (podPhaseOf(pod) !== 'Running') return `it is ${podPhaseOf(pod) ?? 'not running'}`
  const names = new Set(specContainers(pod).map(c => c.name))
  const taken = template.filter(c => names.has(c.name)).map(c => c.name)
  if (taken.length > 0) {
    return `it already has an ephemeral container named ${taken.join(', ')} that this job did ` +
    'not inject'
  }
  const regular = regularContainers(pod)
  const missing = template.filter(
    c => c.targetContainerName !== undefined && !regular.has(c.targetContainerName)
  ).map(c => c.targetContainerName as string)
  if (missing.length > 0) return `it has no container ${[...new Set(missing)].join(', ')} to target`
  return undefined
}

/** A template container as injected into a Pod: the template plus the env that marks it as this job's. */
export function injectedContainer (container: EphemeralContainer, job: JobIdentity): EphemeralContainer {
  const copy = structuredClone(container)
  const env = (copy.env ?? []).filter(e => e.name !== JOB_NAME_ENV && e.name !== JOB_UID_ENV)
  env.push({ name: JOB_NAME_ENV, value: job.name })
  if (job.uid !== undefined) env.push({ name: JOB_UID_ENV, value: job.uid })
  copy.env = env
  return copy
}
