// `status.jobGroups`: the records of a large JobFlow, alike but for their names, written once with
// the names they share. A JobFlow and its status are one object under the API server's limit
// (1.5 MiB in etcd by default), and a record costs about 130 bytes: 10,000 items would not fit.
//
// Above GROUP_ABOVE records, a record joins a group when another one is alike: same phase,
// attempt, message and times. A succeeded Job's times and an item's output (or an empty one) are
// left out first (nothing reads them once the output wait is over), so every succeeded item of one attempt
// shares a group; what runs or failed keeps its times, so it stays alone in status.jobs unless it
// is truly alike. Nothing is forgotten (law 6): a group names every flow it stands for, items as
// index ranges (`process[0-4999,5001-9999]`), and its Jobs' names follow from the names and the
// attempt, as they were made (attempts.ts); a record whose Job has another name stays whole.
//
// Up to GROUP_ABOVE records the status is what it always was, so a previous version, which reads
// only status.jobs, finds every outcome there.
import {
  attemptJobName, attemptOf, itemOfFlowName, jobPartOfFlowName, namesWithRanges, ungroupRecords, type JobGroup,
  type JobRecord
} from '../../formats/jobflow-status.js'
import { outputWaitOf } from './outputs.js'

/** Up to this many records, status.jobs holds every one whole. */
export const GROUP_ABOVE = 500

export { ungroupRecords }
export type { JobGroup }

/**
 * `status.jobs` and `status.jobGroups` for `records` (in spec order, attempts in order): every
 * record whole up to GROUP_ABOVE, else the records alike in groups, the rest whole in their order.
 */
export function groupRecords (
  records: readonly JobRecord[],
  jobflow: string,
  now: Date
): { jobs: JobRecord[], jobGroups?: JobGroup[] } {
  if (records.length <= GROUP_ABOVE) return { jobs: [...records] }
  const byLikeness = new Map<string, { shared: Shared, members: JobRecord[] }>()
  const forms: Array<string | undefined> = []
  for (const record of records) {
    const shared = groupableForm(record, jobflow, now)
    const key = shared === undefined ? undefined : JSON.stringify(shared)
    forms.push(key)
    if (key === undefined || shared === undefined) continue
    const like = byLikeness.get(key) ?? { shared, members: [] }
    like.members.push(record)
    byLikeness.set(key, like)
  }
  // A record alike no other stays whole: a group of one saves nothing and drops its times.
  const jobs = records.filter((_, i) => (byLikeness.get(forms[i] ?? '')?.members.length ?? 1) < 2)
  const jobGroups = [...byLikeness.values()].filter(g => g.members.length >= 2)
    .map(({ shared, members }): JobGroup => ({ names: namesWithRanges(members.map(m => m.name)), ...shared }))
  return jobGroups.length === 0 ? { jobs } : { jobs, jobGroups }
}

type Shared = Omit<JobRecord, 'name' | 'jobName'>

/**
 * What a record shares with those alike, or undefined when it stays whole: its Job was named
 * otherwise, or it is a step's output (dependants read it) or one still awaited.
 */
function groupableForm (record: JobRecord, jobflow: string, now: Date): Shared | undefined {
  if (record.jobName !== attemptJobName(jobflow, jobPartOfFlowName(record.name), attemptOf(record))) return undefined
  const { name, jobName: _, ...shared } = record
  if (record.phase !== 'Succeeded') return shared
  // A step's own output is read by its dependants, and waited for a while; an item's by no one.
  // An empty output reads as none: dependants get '' either way.
  const item = itemOfFlowName(name) !== undefined
  if (!item && outputWaitOf(record, now) !== undefined) return undefined
  if (!item && record.output !== undefined && record.output !== '') return undefined
  const { startTime: _s, completionTime: _c, output: _o, ...finished } = shared
  return finished
}
