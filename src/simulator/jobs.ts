// The simulated Job controller and the API server's defaulting of batch/v1 Jobs. A Job starts on
// the step after it is created (startTime, active 1) and then succeeds, fails, or runs forever
// as its script says, unless its `activeDeadlineSeconds` ends it first. Terminal states are
// written the way the Job controller of Kubernetes ≥ 1.31 writes them: first SuccessCriteriaMet /
// FailureTarget, then Complete / Failed; a failure's reason is BackoffLimitExceeded,
// PodFailurePolicy when its script says a FailJob rule matched, or DeadlineExceeded.
//
// `spec.suspend` as Kubernetes 1.36 has it: a suspended Job that has not finished runs no pod
// (active 0), its condition Suspended is True (reason JobSuspended) and its startTime is cleared;
// resumed, Suspended turns False (reason JobResumed), startTime is the time of the resumption and
// it runs again. A script's time counts while the Job runs, so a Job suspended 4 s into a 10 s
// script finishes 6 s after it is resumed (a real Job's pod is deleted and starts over: scripts
// model work that carries on where it stopped).
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { kubeTime } from './objects.js'
import { JOB_NAME_LABEL, LEGACY_JOB_NAME_LABEL } from '../k8s/jobs.js'

export type JobResult = 'succeed' | 'fail' | 'hang'

/**
 * Why a failing Job fails: its pods' retries ran out, a `FailJob` rule of its podFailurePolicy
 * matched a pod's failure (the user's final word, which no retry may defeat), or it ran past its
 * `activeDeadlineSeconds`.
 */
export type FailureReason = 'BackoffLimitExceeded' | 'PodFailurePolicy' | 'DeadlineExceeded'

/** What happens to one Job once it started. */
export interface JobScript {
  result: JobResult
  /** Seconds from start to the outcome; the simulator's default duration when unset. */
  afterSeconds?: number
  /** The reason of a failure's conditions (FailureTarget, Failed). Default BackoffLimitExceeded. */
  reason?: FailureReason
  /** A success's termination message, in its pod's first container (./job-pods.ts). */
  output?: string
}

export interface JobBehaviour {
  /** Seconds a Job runs before its outcome, unless its script says otherwise. Default 10. */
  durationSeconds?: number
  /** Seconds between a Job's creation and its start. Default 0: it starts on the next step. */
  startDelaySeconds?: number
  /**
   * Scripts by Job name, or by the value of the Job's `jobhooks.io/flow` label (a flow name);
   * the Job name wins. Unlisted Jobs succeed after `durationSeconds`.
   */
  outcomes?: Record<string, JobScript | JobResult>
  /**
   * Termination messages by Job name or flow name (the Job name wins), in every container of the
   * Job's succeeded pod, over a script's `output` and what the command writes: `--output-of`.
   */
  outputs?: Record<string, string>
  /** Asked before `outcomes`; undefined falls through to them. */
  outcomeFor?: (job: KubeObject) => JobScript | JobResult | undefined
  /** Write SuccessCriteriaMet / FailureTarget before Complete / Failed, as Kubernetes ≥ 1.31. Default true. */
  interimConditions?: boolean
  /** Apply the API server's Job defaults (selector, pod template labels, backoffLimit…). Default true. */
  apiDefaults?: boolean
}

export const FLOW_LABEL_FOR_OUTCOMES = 'jobhooks.io/flow'

export function jobScript (
  job: KubeObject,
  behaviour: JobBehaviour
): Required<Omit<JobScript, 'output'>> & Pick<JobScript, 'output'> {
  const duration = behaviour.durationSeconds ?? 10
  const name = job.metadata.name
  const flow = job.metadata.labels?.[FLOW_LABEL_FOR_OUTCOMES]
  const raw = behaviour.outcomeFor?.(job) ??
    behaviour.outcomes?.[name] ??
    (flow !== undefined ? behaviour.outcomes?.[flow] : undefined) ??
    'succeed'
  const script = typeof raw === 'string' ? { result: raw } : raw
  return {
    result: script.result,
    afterSeconds: script.afterSeconds ?? duration,
    reason: script.reason ?? 'BackoffLimitExceeded',
    ...(script.output !== undefined ? { output: script.output } : {})
  }
}

/** The termination message `behaviour.outputs` gives every container of the Job's succeeded pod, if any. */
export function givenOutput (job: KubeObject, behaviour: JobBehaviour): string | undefined {
  const flow = job.metadata.labels?.[FLOW_LABEL_FOR_OUTCOMES]
  return behaviour.outputs?.[job.metadata.name] ?? (flow !== undefined ? behaviour.outputs?.[flow] : undefined)
}

/** What the API server adds to a Job on create. Mutates `job`, whose uid is already set. */
export function defaultJob (job: KubeObject): void {
  const uid = job.metadata.uid as string
  const name = job.metadata.name
  const spec = isRecord(job.spec) ? job.spec : {}
  job.spec = spec
  spec.parallelism ??= 1
  spec.completions ??= 1
  spec.backoffLimit ??= 6
  spec.completionMode ??= 'NonIndexed'
  spec.suspend ??= false
  spec.podReplacementPolicy ??= 'TerminatingOrFailed'
  const selectorLabels = { 'batch.kubernetes.io/controller-uid': uid }
  spec.selector ??= { matchLabels: selectorLabels }
  const template = isRecord(spec.template) ? spec.template : {}
  spec.template = template
  const metadata = isRecord(template.metadata) ? template.metadata : {}
  template.metadata = metadata
  metadata.labels = {
    ...(isRecord(metadata.labels) ? metadata.labels : {}),
    'batch.kubernetes.io/controller-uid': uid,
    [JOB_NAME_LABEL]: name,
    'controller-uid': uid,
    [LEGACY_JOB_NAME_LABEL]: name
  }
  const pod = isRecord(template.spec) ? template.spec : undefined
  if (pod === undefined) return
  pod.restartPolicy ??= 'Never'
  pod.terminationGracePeriodSeconds ??= 30
  pod.dnsPolicy ??= 'ClusterFirst'
  pod.schedulerName ??= 'default-scheduler'
  pod.securityContext ??= {}
  for (const list of [pod.containers, pod.initContainers]) {
    if (!Array.isArray(list)) continue
    for (const container of list) {
      if (!isRecord(container)) continue
      container.terminationMessagePath ??= '/dev/termination-log'
      container.terminationMessagePolicy ??= 'File'
      container.resources ??= {}
      const image = typeof container.image === 'string' ? container.image : ''
      const pinned = (image.includes(':') && !image.endsWith(':latest')) || image.includes('@')
      container.imagePullPolicy ??= pinned ? 'IfNotPresent' : 'Always'
    }
  }
}

function condition (
  type: string, reason: string, message: string, nowMs: number, status: 'True' | 'False' = 'True'
): Record<string, unknown> {
  const time = kubeTime(nowMs)
  return { type, status, lastProbeTime: time, lastTransitionTime: time, reason, message }
}

function status (job: KubeObject): Record<string, unknown> {
  return isRecord(job.status) ? { ...job.status } : {}
}

function conditions (job: KubeObject): unknown[] {
  const list = status(job).conditions
  return Array.isArray(list) ? list : []
}

export function startedStatus (job: KubeObject, nowMs: number): Record<string, unknown> {
  return {
    ...status(job), startTime: kubeTime(nowMs), active: 1, ready: 0, terminating: 0, uncountedTerminatedPods: {}
  }
}

/** Whether the Job has an outcome, or is about to write it: nothing suspends it any more. */
export function jobFinished (job: KubeObject): boolean {
  return conditions(job).some(c => isRecord(c) && c.status === 'True' && FINISHED.has(c.type as string))
}

const FINISHED = new Set(['Complete', 'Failed', 'SuccessCriteriaMet', 'FailureTarget'])

export function isSuspended (job: KubeObject): boolean {
  return isRecord(job.spec) && job.spec.suspend === true
}

/**
 * The Suspended condition set to `status` with `reason` and `message` as the Job controller sets
 * it: replaced when any of the three differs, added only when True. Whether it changed too.
 */
function withSuspended (
  job: KubeObject, status: 'True' | 'False', reason: string, message: string, nowMs: number
): { list: unknown[], changed: boolean } {
  const list = [...conditions(job)]
  const i = list.findIndex(c => isRecord(c) && c.type === 'Suspended')
  const current = list[i]
  if (isRecord(current)) {
    const same = current.status === status && current.reason === reason && current.message === message
    if (same) return { list, changed: false }
    list[i] = condition('Suspended', reason, message, nowMs, status)
    return { list, changed: true }
  }
  if (status === 'False') return { list, changed: false }
  return { list: [...list, condition('Suspended', reason, message, nowMs)], changed: true }
}

/** The status of a Job that is suspended: no pod, Suspended True, no startTime once it turned so. */
export function suspendedStatus (
  job: KubeObject, nowMs: number
): { status: Record<string, unknown>, changed: boolean } {
  const next = status(job)
  const { list, changed } = withSuspended(job, 'True', 'JobSuspended', 'Job suspended', nowMs)
  next.conditions = list
  if (changed) delete next.startTime
  delete next.active
  next.ready = 0
  next.terminating = 0
  next.uncountedTerminatedPods = {}
  return { status: next, changed }
}

/** The status of a Job resumed (or started) now: running, Suspended False and startTime now if it was suspended. */
export function resumedStatus (job: KubeObject, nowMs: number): { status: Record<string, unknown>, changed: boolean } {
  const { list, changed } = withSuspended(job, 'False', 'JobResumed', 'Job resumed', nowMs)
  const next = startedStatus(job, nowMs)
  if (list.length > 0) next.conditions = list
  const previous = status(job).startTime
  if (!changed && typeof previous === 'string') next.startTime = previous
  return { status: next, changed }
}

const SUCCESS = { reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' }
const BACKOFF_LIMIT = 'Job has reached the specified backoff limit'
const DEADLINE = 'Job was active longer than specified deadline'

/** The failure's reason and message, as the Job controller words them. */
function failure (job: KubeObject, reason: FailureReason): { reason: string, message: string } {
  if (reason === 'BackoffLimitExceeded') return { reason, message: BACKOFF_LIMIT }
  if (reason === 'DeadlineExceeded') return { reason, message: DEADLINE }
  const pod = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template.spec : undefined
  const first: unknown = isRecord(pod) && Array.isArray(pod.containers) ? pod.containers[0] : undefined
  const container = isRecord(first) && typeof first.name === 'string' ? first.name : 'main'
  return { reason, message: `Container ${container} failed with exit code 1 matching FailJob rule at index 0` }
}

/**
 * The status once the pod finished. `final` false gives the interim status of Kubernetes ≥ 1.31
 * (SuccessCriteriaMet / FailureTarget, no Complete / Failed yet); `modern` false leaves those
 * interim conditions out altogether, as older Kubernetes did.
 */
export function finishedStatus (
  job: KubeObject, result: 'succeed' | 'fail', final: boolean, modern: boolean, nowMs: number,
  reason: FailureReason = 'BackoffLimitExceeded'
): Record<string, unknown> {
  const next = status(job)
  delete next.active
  next.ready = 0
  next.terminating = 0
  next.uncountedTerminatedPods = {}
  const list = [...conditions(job)]
  const has = (type: string): boolean => list.some(c => isRecord(c) && c.type === type)
  if (result === 'succeed') {
    next.succeeded = 1
    if (modern && !has('SuccessCriteriaMet')) {
      list.push(condition('SuccessCriteriaMet', SUCCESS.reason, SUCCESS.message, nowMs))
    }
    if (final) {
      list.push(condition('Complete', SUCCESS.reason, SUCCESS.message, nowMs))
      next.completionTime = kubeTime(nowMs)
    }
  } else {
    next.failed = 1
    const why = failure(job, reason)
    if (modern && !has('FailureTarget')) list.push(condition('FailureTarget', why.reason, why.message, nowMs))
    if (final) list.push(condition('Failed', why.reason, why.message, nowMs))
  }
  next.conditions = list
  return next
}

/**
 * A Job's `activeDeadlineSeconds` in milliseconds, counted (as Kubernetes does) from its
 * startTime, which a start or a resume sets to now; undefined without one.
 */
export function activeDeadlineMs (job: KubeObject): number | undefined {
  const seconds = isRecord(job.spec) ? job.spec.activeDeadlineSeconds : undefined
  return typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : undefined
}
