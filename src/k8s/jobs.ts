// Reading a batch/v1 Job the way the Job controller reports it: from its terminal conditions,
// never from pod counters (which are wrong for parallel, indexed and retried Jobs).
import type { KubeObject } from './types.js'
import { isRecord } from './types.js'
import { findCondition } from './conditions.js'
import { rememberedFor } from './derived.js'

export type JobOutcome = 'Succeeded' | 'Failed'

/** `Succeeded` once `Complete` is True, `Failed` once `Failed` is True, otherwise undefined. */
export const jobOutcome = rememberedFor(readJobOutcome)

function readJobOutcome (job: KubeObject): JobOutcome | undefined {
  const conditions = isRecord(job.status) ? job.status.conditions : undefined
  if (findCondition(conditions, 'Complete')?.status === 'True') return 'Succeeded'
  if (findCondition(conditions, 'Failed')?.status === 'True') return 'Failed'
  return undefined
}

/** When the Job started: its `status.startTime`, else when it was created. */
export function jobStartTime (job: KubeObject): string | undefined {
  const start = isRecord(job.status) ? job.status.startTime : undefined
  return typeof start === 'string' ? start : job.metadata.creationTimestamp
}

/** When the Job finished: `status.completionTime`, else the terminal condition's transition time. */
export function jobFinishTime (job: KubeObject): string | undefined {
  const status = isRecord(job.status) ? job.status : {}
  if (typeof status.completionTime === 'string') return status.completionTime
  const terminal = findCondition(status.conditions, 'Complete') ?? findCondition(status.conditions, 'Failed')
  return terminal?.lastTransitionTime
}

/** Why a failed Job failed, from its `Failed` condition ("BackoffLimitExceeded: …"). */
export function jobFailureMessage (job: KubeObject): string {
  const failed = findCondition(isRecord(job.status) ? job.status.conditions : undefined, 'Failed')
  const parts = [failed?.reason, failed?.message].filter((p): p is string => typeof p === 'string' && p !== '')
  return parts.length > 0 ? parts.join(': ') : 'the Job failed'
}
