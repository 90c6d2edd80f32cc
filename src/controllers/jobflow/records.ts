// `status.jobs`: one record per flow. It is the memory of law 6: a Job that finished and then
// disappeared (TTL, deleted by hand) is known by its record and never runs again.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined, withoutUndefined } from '../../k8s/types.js'
import { hasTrueCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'
import { jobFailureMessage, jobFinishTime, jobOutcome, jobStartTime } from '../../k8s/jobs.js'

export type FlowPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Skipped'

export interface JobRecord {
  /** The flow's name. */
  name: string
  jobName: string
  phase: FlowPhase
  startTime?: string
  completionTime?: string
  message?: string
}

const PHASES = new Set<string>(['Pending', 'Running', 'Succeeded', 'Failed', 'Skipped'])

/** Succeeded, Failed and Skipped never change again: failures and finishing are final. */
export function isSettled (record: JobRecord | undefined): record is JobRecord {
  return record?.phase === 'Succeeded' || record?.phase === 'Failed' || record?.phase === 'Skipped'
}

/** The records of the previous status, by flow name; malformed entries are ignored. */
export function readRecords (jobs: unknown): Map<string, JobRecord> {
  const records = new Map<string, JobRecord>()
  if (!Array.isArray(jobs)) return records
  for (const entry of jobs) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.jobName !== 'string' ||
      typeof entry.phase !== 'string' || !PHASES.has(entry.phase)) continue
    records.set(entry.name, compact({
      name: entry.name,
      jobName: entry.jobName,
      phase: entry.phase as FlowPhase,
      startTime: stringOrUndefined(entry.startTime),
      completionTime: stringOrUndefined(entry.completionTime),
      message: stringOrUndefined(entry.message)
    }))
  }
  return records
}

/**
 * The record of a flow whose Job we observe. Times already remembered are carried forward, so
 * the record only changes when the Job does.
 */
export function recordFromJob (name: string, job: KubeObject, memory: JobRecord | undefined, now: Date): JobRecord {
  const outcome = jobOutcome(job)
  let message: string | undefined
  if (outcome === 'Failed') message = jobFailureMessage(job)
  else if (outcome === undefined && hasTrueCondition(job.status, 'Suspended')) message = 'the Job is suspended'
  return compact({
    name,
    jobName: job.metadata.name,
    phase: outcome ?? 'Running',
    startTime: memory?.startTime ?? jobStartTime(job),
    completionTime: outcome === undefined ? undefined : memory?.completionTime ?? jobFinishTime(job) ?? timestamp(now),
    message
  })
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
