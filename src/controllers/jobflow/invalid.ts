// The answer to a JobFlow spec the hook cannot act on (law 2): nothing is built from it, every
// observed child is kept as it is, and the records are brought up to date with the observed Jobs.
import type { SyncAnswer } from '../../protocol/hooks.js'
import { keepAllObserved } from '../../k8s/objects.js'
import { invalidSpecAnswer } from '../common/validity.js'
import { jobsQueued, jobsSucceeded, recordFromJob, type JobRecord } from './records.js'
import { attemptOf } from './attempts.js'
import { jobAsItStands } from './suspend.js'
import type { Observed } from './flows.js'
import { groupRecords } from './record-groups.js'
import { ITEM_INDEX_LABEL, itemFlowName } from './fanout.js'
import { FLOW_LABEL } from './job.js'

export type JobFlowPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Invalid'

/** A finished JobFlow's phase, which stays as it was (law 6): a later version's rule does not change it. */
export function isOutcome (phase: unknown): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed'
}

/**
 * The answer to a spec we cannot act on (law 2, common/validity.ts): every observed child exactly
 * as it is, the previous status with phase `Invalid`, and the memory of finished Jobs brought up
 * to date with what we observe (a Job may finish while the spec is being fixed).
 */
export function invalid (observed: Observed, problems: string[]): SyncAnswer {
  const { previous } = observed
  const histories = heldBy(updatedHistories(observed), problems)
  const jobs = [...histories.values()].flat()
  const currents = [...histories.values()].map(h => h[h.length - 1] as JobRecord)
  // A JobFlow that finished stays finished: the problem shows in `Valid` only.
  const finished = typeof previous.completionTime === 'string'
  const phase: JobFlowPhase = !finished
    ? 'Invalid'
    : isOutcome(previous.phase) ? previous.phase : currents.some(j => j.phase === 'Failed') ? 'Failed' : 'Succeeded'
  const { jobGroups: _, jobsQueued: _queued, ...kept } = previous
  const status = {
    ...kept,
    phase,
    jobsSucceeded: jobsSucceeded(currents),
    ...jobsQueued(currents),
    ...groupRecords(jobs, observed.parent.metadata.name, observed.now)
  }
  // Jobs as last applied: under InPlace, their identity alone would strip them (suspend.ts); a
  // queued Job keeps the suspend Kueue gave it.
  const children = keepAllObserved(observed.request.children, ['Job.batch/v1']).map(child => {
    const job = child.kind === 'Job' ? observed.observedJobs.get(child.metadata.name) : undefined
    return job === undefined ? child : jobAsItStands(job)
  })
  return invalidSpecAnswer(previous, { status, children, problems }, observed.now)
}

/**
 * Steps not started wait for nothing while the spec is invalid: their records say that the spec
 * holds them and why, rather than the dependency or Job they waited for before it broke.
 */
function heldBy (histories: Map<string, JobRecord[]>, problems: string[]): Map<string, JobRecord[]> {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more: see condition Valid)` : ''
  const message = `held by the invalid spec: ${problems[0] ?? 'see condition Valid'}${more}`
  for (const history of histories.values()) {
    history.forEach((record, i) => { if (record.phase === 'Pending') history[i] = { ...record, message } })
  }
  return histories
}

/** The remembered histories with what the observed Jobs now say, and a record for each Job that lost its own. */
function updatedHistories ({ memory, observedJobs, now }: Observed): Map<string, JobRecord[]> {
  const histories = new Map<string, JobRecord[]>()
  const seen = new Set<string>()
  for (const [name, history] of memory) {
    histories.set(name, history.map(record => {
      seen.add(record.jobName)
      const job = observedJobs.get(record.jobName)
      return job === undefined ? record : recordFromJob(name, job, record, now, attemptOf(record))
    }))
  }
  for (const job of observedJobs.values()) {
    if (seen.has(job.metadata.name)) continue
    // A Job whose record was lost: the next attempt of its flow.
    const labels = job.metadata.labels ?? {}
    const step = labels[FLOW_LABEL] ?? job.metadata.name
    const index = labels[ITEM_INDEX_LABEL]
    const name = index !== undefined ? itemFlowName(step, Number(index)) : step
    const history = histories.get(name) ?? []
    const last = history[history.length - 1]
    histories.set(
      name,
      [...history, recordFromJob(name, job, undefined, now, last === undefined ? 1 : attemptOf(last) + 1)]
    )
  }
  return histories
}
