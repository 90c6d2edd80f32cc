// Attempts: a flow runs as one Job per attempt. The first is `<jobflow>-<flow>`; a retry after a
// failure, or a rerun asked for with the rerun annotation, is a new Job `<jobflow>-<flow>-<n>`,
// never the old one again (law 6: a Job that ran is a record, and its name is spent).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { optionalWholeNumber } from '../common/parsed.js'
import type { JobRecord } from './records.js'
import { attemptJobName, attemptOf } from '../../formats/jobflow-status.js'

/** `flows[].retry`: how often a failed Job is tried again, and how long to wait before each. */
export interface RetryPolicy {
  /** Retries after the first attempt of a run (a rerun starts a new run). */
  limit: number
  /** The wait before the first retry; each next one waits twice as long... */
  backoffSeconds: number
  /** ...up to this. */
  maxBackoffSeconds: number
}

/** As a Job's own pod backoff starts (10 s), capped lower than its 6 minutes: a flow waits in the open. */
export const DEFAULT_BACKOFF_SECONDS = 10
export const DEFAULT_MAX_BACKOFF_SECONDS = 300
/**
 * Every attempt stays a record in `status.jobs`; the limit keeps a JobFlow's status well under
 * the API server's object size however many flows it has.
 */
export const MAX_RETRY_LIMIT = 20
const DAY_SECONDS = 86_400

export function parseRetry (raw: unknown, at: string, problems: string[]): RetryPolicy | undefined {
  if (raw === undefined || raw === null) return undefined
  if (!isRecord(raw)) {
    problems.push(`${at}: retry must be an object {limit, backoffSeconds, maxBackoffSeconds}`)
    return undefined
  }
  const before = problems.length
  const limit = optionalWholeNumber(raw.limit, `${at}: retry.limit`, 0, MAX_RETRY_LIMIT, problems)
  if (limit === undefined && problems.length === before) problems.push(`${at}: retry.limit is required`)
  const backoffSeconds = optionalWholeNumber(
    raw.backoffSeconds,
    `${at}: retry.backoffSeconds`,
    0,
    DAY_SECONDS,
    problems
  ) ?? DEFAULT_BACKOFF_SECONDS
  const maxBackoffSeconds = optionalWholeNumber(
    raw.maxBackoffSeconds,
    `${at}: retry.maxBackoffSeconds`,
    0,
    DAY_SECONDS,
    problems
  ) ??
    Math.max(DEFAULT_MAX_BACKOFF_SECONDS, backoffSeconds)
  if (maxBackoffSeconds < backoffSeconds) {
    problems.push(
    `${at}: retry.maxBackoffSeconds (${maxBackoffSeconds}) is less than retry.backoffSeconds (${backoffSeconds})`
    )
  }
  if (problems.length > before || limit === undefined) return undefined
  return { limit, backoffSeconds, maxBackoffSeconds }
}

export { attemptJobName, attemptOf }

/**
 * Flow names that would share a Job name with another flow's attempt (`a-2` beside `a`, whose
 * second attempt is `<jobflow>-a-2`): the spec is invalid rather than two flows owning one Job.
 */
export function attemptNameClashes (flowNames: readonly string[]): string[] {
  const names = new Set(flowNames)
  return flowNames.flatMap(name => {
    const match = /^(.+)-([0-9]+)$/.exec(name)
    if (match === null || !names.has(match[1] as string) || Number(match[2]) < 2) return []
    return [`flow ${JSON.stringify(name)} has the Job name of attempt ${match[2] as string} of flow ` +
      `${JSON.stringify(match[1])} (<jobflow>-${name}): rename one of them`]
  })
}

/** How many retries the current run of a flow has used: attempts since the run's first (attempt 1, or a rerun's). */
export function retriesUsed (history: readonly JobRecord[]): number {
  let used = 0
  for (let i = history.length - 1; i > 0; i--) {
    if ((history[i] as JobRecord).rerun !== undefined) break
    used++
  }
  return used
}

/** The wait before retry `retry` (from 1): doubling from `backoffSeconds`, capped. */
export function backoffSeconds (policy: RetryPolicy, retry: number): number {
  return Math.min(policy.backoffSeconds * 2 ** Math.min(retry - 1, 30), policy.maxBackoffSeconds)
}

/** When a retry after `failed` may start, in ms since the epoch; at once when the failure has no time. */
export function retryDueAt (policy: RetryPolicy, retry: number, failed: JobRecord): number {
  const failedAt = failed.completionTime !== undefined ? Date.parse(failed.completionTime) : Number.NaN
  return Number.isNaN(failedAt) ? 0 : failedAt + backoffSeconds(policy, retry) * 1000
}

/** The Job of this flow's attempt, when one is observed and labelled for this flow. */
export function observedAttempt (
  observedJobs: Map<string, KubeObject>,
  jobName: string,
  flow: string,
  flowLabel: string
): KubeObject | undefined {
  const job = observedJobs.get(jobName)
  const label = job?.metadata.labels?.[flowLabel]
  // A Job of the name made for another flow (before a rename, say) is not this flow's attempt.
  return job !== undefined && (label === undefined || label === flow) ? job : undefined
}
