// A Job's `ttlSecondsAfterFinished`, applied by the service instead of by Kubernetes' TTL
// controller, for the kinds that remember their Jobs' outcomes (JobFlow, DaemonJob).
//
// Why: the parent's status is the only memory of a finished Job once the Job is gone (law 6), and
// Metacontroller writes that status after the sync that saw the Job finish. The TTL controller
// deletes a Job with `ttlSecondsAfterFinished: 0` within a fraction of a second, often before the
// status write lands or before a sync sees it; the next sync then sees neither the Job nor its
// record and runs the Job again.
//
// So the TTL is taken out of the Job we create and carried on it as a label; the Job is left out
// of the desired children (Metacontroller deletes it, with its Pods) only on a sync whose
// observed parent already holds the Job's outcome, once the TTL has passed since the Job
// finished. Metacontroller hands each sync its informer's copy of the parent, and an informer
// never goes back to an older copy than one it has handed out: every sync after that one sees the
// record too. (The design notes in docs/architecture.md, "Outcomes that outlive their Jobs".)
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { jobIsTerminal, jobOutcome, jobTerminalTime } from '../../k8s/jobs.js'

/** On Jobs we create from a template that set `ttlSecondsAfterFinished`: its seconds. */
export const JOB_TTL_LABEL = 'jobhooks.io/ttl-seconds-after-finished'

/**
 * Takes `ttlSecondsAfterFinished` out of `spec` (a copy of the user's template, changed in place)
 * and returns the labels that carry it on the Job instead: none when the template set none.
 */
export function takeJobTtl (spec: JobSpec): Record<string, string> {
  const ttl = spec.ttlSecondsAfterFinished
  delete spec.ttlSecondsAfterFinished
  return typeof ttl === 'number' && Number.isInteger(ttl) && ttl >= 0 ? { [JOB_TTL_LABEL]: String(ttl) } : {}
}

/** What becomes of a finished Job under its TTL: kept, kept until `inSeconds`, or left out now. */
export type JobTtlDecision = { drop: true } | { drop: false, inSeconds?: number }

/** What a kind's status remembers of one Job: enough to tell whether it holds the Job's outcome. */
export interface RecordedJob {
  jobName: string
  phase: string
  completionTime?: string
}

/**
 * Whether a finished Job is to be deleted now. `recorded` is what the observed parent's status
 * holds for the Job: a Job whose outcome it does not hold always stays (its outcome would be lost
 * with it). The TTL counts from the Job's own finish time, `Complete` / `Failed`, as Kubernetes'
 * TTL controller counts it, never from its earlier verdict (SuccessCriteriaMet / FailureTarget):
 * a hook of an older version, answering beside this one during a rolling update, reads only the
 * final conditions, and a Job deleted before it saw them would be one it runs again.
 */
export function jobTtlDecision (job: KubeObject, recorded: RecordedJob | undefined, now: Date): JobTtlDecision {
  const label = job.metadata.labels?.[JOB_TTL_LABEL]
  if (label === undefined || !/^\d{1,9}$/.test(label)) return { drop: false }
  const outcome = jobOutcome(job)
  if (outcome === undefined || recorded?.jobName !== job.metadata.name || recorded.phase !== outcome) {
    return {
      drop: false
    }
  }
  if (!jobIsTerminal(job)) return { drop: false }
  // A record may be stamped later than the Job finished: the Job's own time first.
  const finishedAt = jobTerminalTime(job) ?? recorded.completionTime
  const finishedMs = finishedAt === undefined ? Number.NaN : Date.parse(finishedAt)
  if (Number.isNaN(finishedMs)) return { drop: false }
  const expiresMs = finishedMs + Number(label) * 1000
  const nowMs = now.getTime()
  if (nowMs >= expiresMs) return { drop: true }
  return { drop: false, inSeconds: Math.ceil((expiresMs - nowMs) / 1000) }
}

/** The earliest of the TTL wake-ups (in seconds), or undefined without any. */
export function earliestWake (decisions: Iterable<JobTtlDecision>): number | undefined {
  let earliest: number | undefined
  for (const decision of decisions) {
    if (decision.drop || decision.inSeconds === undefined) continue
    earliest = earliest === undefined ? decision.inSeconds : Math.min(earliest, decision.inSeconds)
  }
  return earliest
}
