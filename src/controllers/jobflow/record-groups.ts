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
import { isRecord } from '../../k8s/types.js'
import { attemptJobName, attemptOf } from './attempts.js'
import type { JobRecord } from './records.js'
import { outputWaitOf } from './outputs.js'
import { MAX_ITEMS } from './spec.js'
import { itemFlowName, itemJobPart, itemOfFlowName, jobPartOfFlowName } from './fanout.js'

/** Up to this many records, status.jobs holds every one whole. */
export const GROUP_ABOVE = 500

/** Records alike but for their names: each name is a flow, or a step's items as `step[0-9,12]`. */
export type JobGroup = Omit<JobRecord, 'name' | 'jobName'> & { names: string[] }

const ITEMS = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\[([0-9][-,0-9]*)\]$/

/**
 * The records of a status: the whole ones of `status.jobs`, as they are, and those of
 * `status.jobGroups`, each name a record of its own with the Job name it was made with. Malformed
 * groups and names are left out, and so are index ranges beyond what a step can have.
 */
export function ungroupRecords (status: Record<string, unknown>, jobflow: string): Array<Record<string, unknown>> {
  const jobs = Array.isArray(status.jobs) ? status.jobs.filter(isRecord) : []
  if (!Array.isArray(status.jobGroups)) return jobs
  const records: Array<Record<string, unknown>> = [...jobs]
  for (const group of status.jobGroups) {
    if (!isRecord(group) || !Array.isArray(group.names)) continue
    const { names, ...shared } = group
    const attempt = typeof shared.attempt === 'number' ? shared.attempt : 1
    for (const name of names) {
      if (typeof name !== 'string') continue
      for (const [flow, jobPart] of flowNamesOf(name)) {
        records.push({ ...shared, name: flow, jobName: attemptJobName(jobflow, jobPart, attempt) })
      }
    }
  }
  return records
}

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
  const item = ITEMS.test(name)
  if (!item && outputWaitOf(record, now) !== undefined) return undefined
  if (!item && record.output !== undefined && record.output !== '') return undefined
  const { startTime: _s, completionTime: _c, output: _o, ...finished } = shared
  return finished
}

/** Names in order, each run of one step's items written once: `a`, `s[0-4,6]`, `b`. */
function namesWithRanges (names: readonly string[]): string[] {
  const out: string[] = []
  let step: string | undefined
  let ranges: Array<[number, number]> = []
  const flush = (): void => {
    if (step !== undefined) out.push(`${step}[${ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')}]`)
    step = undefined
    ranges = []
  }
  for (const name of names) {
    const item = itemOfFlowName(name)
    if (item === undefined) {
      flush()
      out.push(name)
      continue
    }
    const { index } = item
    if (item.step !== step) flush()
    step = item.step
    const last = ranges[ranges.length - 1]
    if (last !== undefined && last[1] + 1 === index) last[1] = index
    else ranges.push([index, index])
  }
  flush()
  return out
}

/** The flow names a group's name stands for, each with its Job part: itself, or each item of its ranges. */
function flowNamesOf (name: string): Array<[string, string]> {
  const match = ITEMS.exec(name)
  // A flow that is no item: its Job part is its name, as jobPartOf gives it.
  if (match === null) return name.includes('[') ? [] : [[name, name]]
  const step = match[1] as string
  const names: Array<[string, string]> = []
  for (const range of (match[3] as string).split(',')) {
    const bounds = /^([0-9]+)(?:-([0-9]+))?$/.exec(range)
    if (bounds === null) continue
    const from = Number(bounds[1])
    const to = Math.min(Number(bounds[2] ?? bounds[1]), MAX_ITEMS - 1)
    for (let i = from; i <= to; i++) names.push([itemFlowName(step, i), itemJobPart(step, i)])
  }
  return names
}
