// Reading a batch/v1 Job the way the Job controller reports it: from its conditions, never from
// pod counters (which are wrong for parallel, indexed and retried Jobs). Kubernetes ≥ 1.31 writes
// its verdict first (SuccessCriteriaMet / FailureTarget), then Complete / Failed once the pods are
// gone: the verdict is the outcome, and older clusters write the terminal conditions alone.
import type { KubeObject } from './types.js'
import { isRecord } from './types.js'
import { findCondition } from './conditions.js'
import { rememberedFor } from './derived.js'

/** The label Kubernetes puts on a Job's pods (and, before 1.27, `job-name`). */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name'
export const LEGACY_JOB_NAME_LABEL = 'job-name'

export type JobOutcome = 'Succeeded' | 'Failed'

/** The reason of a failure a `FailJob` rule of the Job's own `podFailurePolicy` decided. */
export const POD_FAILURE_POLICY_REASON = 'PodFailurePolicy'

/**
 * `Succeeded` once `SuccessCriteriaMet` or `Complete` is True, `Failed` once `FailureTarget` or
 * `Failed` is True, otherwise undefined.
 */
export const jobOutcome = rememberedFor(readJobOutcome)

function readJobOutcome (job: KubeObject): JobOutcome | undefined {
  const conditions = isRecord(job.status) ? job.status.conditions : undefined
  if (isTrue(conditions, 'Complete')) return 'Succeeded'
  if (isTrue(conditions, 'Failed')) return 'Failed'
  if (isTrue(conditions, 'SuccessCriteriaMet')) return 'Succeeded'
  if (isTrue(conditions, 'FailureTarget')) return 'Failed'
  return undefined
}

function isTrue (conditions: unknown, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True'
}

/** When the Job started: its `status.startTime`, else when it was created. */
export function jobStartTime (job: KubeObject): string | undefined {
  const start = isRecord(job.status) ? job.status.startTime : undefined
  return typeof start === 'string' ? start : job.metadata.creationTimestamp
}

/** Whether the Job finished for good: `Complete` or `Failed` True, not only a verdict. */
export function jobIsTerminal (job: KubeObject): boolean {
  const conditions = isRecord(job.status) ? job.status.conditions : undefined
  return findCondition(conditions, 'Complete')?.status === 'True' ||
    findCondition(conditions, 'Failed')?.status === 'True'
}

/**
 * When the Job finished for good: `status.completionTime`, else its `Complete` / `Failed`
 * condition's time; undefined while it has only a verdict (its pods may still terminate) or none.
 * Kubernetes' TTL controller counts from this moment, and so do we (common/job-ttl.ts).
 */
export function jobTerminalTime (job: KubeObject): string | undefined {
  if (!jobIsTerminal(job)) return undefined
  const status = isRecord(job.status) ? job.status : {}
  if (typeof status.completionTime === 'string') return status.completionTime
  const terminal = findCondition(status.conditions, 'Complete') ?? findCondition(status.conditions, 'Failed')
  return terminal?.lastTransitionTime
}

/**
 * When the Job's outcome was known: when it finished for good (jobTerminalTime), else when its
 * verdict (SuccessCriteriaMet / FailureTarget) was written, while its pods are still going.
 */
export function jobFinishTime (job: KubeObject): string | undefined {
  const conditions = isRecord(job.status) ? job.status.conditions : undefined
  const verdict = findCondition(conditions, 'SuccessCriteriaMet') ?? findCondition(conditions, 'FailureTarget')
  return jobTerminalTime(job) ?? verdict?.lastTransitionTime
}

/** The condition that says why a Job failed: `Failed` when True, else `FailureTarget` when True. */
function failureCondition (job: KubeObject): ReturnType<typeof findCondition> {
  const conditions = isRecord(job.status) ? job.status.conditions : undefined
  const failed = findCondition(conditions, 'Failed')
  if (failed?.status === 'True') return failed
  const target = findCondition(conditions, 'FailureTarget')
  return target?.status === 'True' ? target : undefined
}

/** Why a failed Job failed, from its `Failed` (else `FailureTarget`) condition ("BackoffLimitExceeded: …"). */
export function jobFailureMessage (job: KubeObject): string {
  const failed = failureCondition(job)
  const parts = [failed?.reason, failed?.message].filter((p): p is string => typeof p === 'string' && p !== '')
  return parts.length > 0 ? parts.join(': ') : 'the Job failed'
}

/**
 * Whether the Job failed by the user's own rule (reason `PodFailurePolicy`: a `FailJob` rule
 * matched): the user said the failure is final, and another attempt would defeat the rule.
 */
export function isFinalFailure (job: KubeObject): boolean {
  return jobOutcome(job) === 'Failed' && failureCondition(job)?.reason === POD_FAILURE_POLICY_REASON
}
