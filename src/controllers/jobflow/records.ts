// `status.jobs`: one record per attempt of each flow, in spec order and by attempt within a flow;
// a flow's last record is where it stands. It is the memory of law 6: a Job that finished and then
// disappeared (TTL, deleted by hand) is known by its record and never runs again.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord, withoutUndefined } from '../../k8s/types.js'
import { hasTrueCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'
import { isFinalFailure, jobFailureMessage, jobFinishTime, jobOutcome, jobStartTime } from '../../k8s/jobs.js'
import { queueHolding, queueNameOf } from '../../k8s/kueue.js'
import { readRecords, type FlowPhase, type JobRecord } from '../../formats/jobflow-status.js'

export type { FlowPhase, JobRecord }
export { readRecords }

/** How a queued record that Kueue took back from running begins: it is waiting again, not failing. */
export const PREEMPTED = 'preempted'

/**
 * Closes the message of a failure the Job's own podFailurePolicy made final. The record outlives
 * its Job (law 6), so its message is where the retry decision reads it again (isFinalRecord).
 */
export const FINAL_FAILURE_NOTE = " (final: the Job's podFailurePolicy marked it; no retry)"

/** A failure no retry follows: its Job failed by a `FailJob` rule of its podFailurePolicy. */
export function isFinalRecord (record: JobRecord): boolean {
  return record.phase === 'Failed' && record.message?.endsWith(FINAL_FAILURE_NOTE) === true
}

/** Succeeded, Failed and Skipped never change again: failures and finishing are final. */
export function isSettled (record: JobRecord | undefined): record is JobRecord {
  return record?.phase === 'Succeeded' || record?.phase === 'Failed' || record?.phase === 'Skipped'
}

/** A Job that has not finished yet: created and running, or waiting in Kueue's queue. */
export function isUnderway (record: JobRecord): boolean {
  return record.phase === 'Running' || record.phase === 'Queued'
}

/**
 * The record of a flow whose Job we observe. Times already remembered are carried forward, so
 * the record only changes when the Job does.
 */
export function recordFromJob (
  name: string,
  job: KubeObject,
  memory: JobRecord | undefined,
  now: Date,
  attempt?: number
): JobRecord {
  const outcome = jobOutcome(job)
  const queue = queueHolding(job)
  let message: string | undefined
  if (outcome === 'Failed') message = jobFailureMessage(job) + (isFinalFailure(job) ? FINAL_FAILURE_NOTE : '')
  else if (queue !== undefined) message = queuedMessage(queue, memory)
  else if (outcome === undefined && hasTrueCondition(job.status, 'Suspended')) message = 'the Job is suspended'
  return compact({
    name,
    jobName: job.metadata.name,
    phase: outcome ?? (queue !== undefined ? 'Queued' : 'Running'),
    // A preemption keeps the first start.
    startTime: memory?.startTime ?? startedAt(job),
    completionTime: outcome === undefined ? undefined : memory?.completionTime ?? jobFinishTime(job) ?? timestamp(now),
    message,
    attempt: attempt !== undefined && attempt >= 2 ? attempt : undefined,
    rerun: memory?.rerun,
    output: outcome === 'Succeeded' ? memory?.output : undefined
  })
}

/**
 * When a Job started. A queued Job starts when Kueue admits it, not when it was created: until the
 * Job controller writes its startTime, it has none.
 */
function startedAt (job: KubeObject): string | undefined {
  if (queueNameOf(job) === undefined) return jobStartTime(job)
  return isRecord(job.status) && typeof job.status.startTime === 'string' ? job.status.startTime : undefined
}

/**
 * Why a queued Job waits. Kueue suspends a Job it admitted when it preempts it; the Job itself
 * does not say so, but its record does: it ran before (or was already preempted) and waits again.
 */
function queuedMessage (queue: string, memory: JobRecord | undefined): string {
  const preempted = memory?.phase === 'Running' ||
    (memory?.phase === 'Queued' && memory.message?.startsWith(PREEMPTED) === true)
  return preempted
    ? `${PREEMPTED} by Kueue: back in queue ${queue}, waiting to be admitted again (no retry used)`
    : `waiting in queue ${queue} for Kueue to admit it`
}

/** Drops undefined fields so that records compare and serialise the same way every time. */
export const compact = withoutUndefined<JobRecord>

/**
 * `status.jobsSucceeded`, the JOBS column: the flows whose Job succeeded out of all the records,
 * as `3/5`. A printer column cannot count, so the status carries the string; it comes from the
 * records alone, so it changes only when a Job does (law 5).
 */
export function jobsSucceeded (jobs: readonly JobRecord[]): string {
  return `${jobs.filter(j => j.phase === 'Succeeded').length}/${jobs.length}`
}

/**
 * `status.jobsQueued`, the QUEUED column: the flows whose Job waits for Kueue to admit it, written
 * only when some do, so that a version that does not know the field (0.2.0) and this one write the
 * same status (law 5).
 */
export function jobsQueued (jobs: readonly JobRecord[]): { jobsQueued?: number } {
  const queued = jobs.filter(j => j.phase === 'Queued').length
  return queued > 0 ? { jobsQueued: queued } : {}
}
