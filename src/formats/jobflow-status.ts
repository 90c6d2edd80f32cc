// A JobFlow's status as every reader reads it: the hook (its memory, law 6), the kubectl plugin
// and the simulator's reports. One codec, as Kubernetes' indexed_job_utils.go is for completed
// indexes: the records of `status.jobs`, the groups of `status.jobGroups` with their names and
// index ranges (`process[0-4999,5001-9999]`), an item's name (`process[3]`), and the Job name a
// record's name and attempt make. What the hook decides (which records to group, when) is its own.
import { isRecord } from '../k8s/types.js'
import { childName } from '../k8s/names.js'

/** `Queued`: the flow's Job waits for Kueue to admit it (first, or again after a preemption). */
export type FlowPhase = 'Pending' | 'Queued' | 'Running' | 'Succeeded' | 'Failed' | 'Skipped'

export interface JobRecord {
  /** The flow's name: a step's, or an item's (`step[3]`). */
  name: string
  jobName: string
  phase: FlowPhase
  startTime?: string
  completionTime?: string
  message?: string
  /** The attempt, from 2 on (a retry or a rerun); absent on a flow's first. */
  attempt?: number
  /** On the first attempt of a rerun: the `jobhooks.io/rerun` value that asked for it. */
  rerun?: string
  /** A succeeded Job's output: its pod's termination message (outputs.ts). */
  output?: string
}

/** How a step ended, for `depends` and `dependencies`: Skipped by its own `when`, Omitted by others. */
export type StepEnd = 'Succeeded' | 'Failed' | 'Skipped' | 'Omitted'

/** How a record skipped by its own `when` begins; any other Skipped record was omitted (Argo's Omitted). */
export const WHEN_FALSE = 'skipped: its when is false'

/** How a finished record ended, or undefined while it has not. */
export function recordEnd (record: Pick<JobRecord, 'phase' | 'message'> | undefined): StepEnd | undefined {
  if (record === undefined) return undefined
  if (record.phase === 'Succeeded' || record.phase === 'Failed') return record.phase
  if (record.phase !== 'Skipped') return undefined
  return record.message?.startsWith(WHEN_FALSE) === true ? 'Skipped' : 'Omitted'
}

/**
 * A fan-out step's phase from its items' records, the one rule the hook (a `when` reading the
 * step) and the tools (a step drawn as one) follow: Failed once an item failed, Running while one
 * runs or waits in a queue, Pending while one waits to start, then as settledStep ends it
 * (Skipped for a step that did not run).
 */
export function groupPhase (items: ReadonlyArray<{ phase: string, message?: string }>): FlowPhase {
  if (items.some(r => r.phase === 'Failed')) return 'Failed'
  if (items.some(r => r.phase === 'Running' || r.phase === 'Queued')) return 'Running'
  if (items.some(r => r.phase === 'Pending')) return 'Pending'
  if (items.length > 0 && items.every(r => r.phase === 'Skipped')) return 'Skipped'
  const ends = items.map(r => recordEnd(r as Pick<JobRecord, 'phase' | 'message'>))
  return ends.includes('Omitted') && !ends.includes('Succeeded') ? 'Skipped' : 'Succeeded'
}

/** Records alike but for their names: each name is a flow, or a step's items as `step[0-9,12]`. */
export type JobGroup = Omit<JobRecord, 'name' | 'jobName'> & { names: string[] }

/** At most this many items a fan-out step: every item is a record in the JobFlow's status. */
export const MAX_ITEMS = 10_000

const PHASES = new Set<string>(['Pending', 'Queued', 'Running', 'Succeeded', 'Failed', 'Skipped'])

/**
 * An item name, or a group's name of items: a step and index ranges. Brackets never occur in a
 * step's name; dots do in a template group's steps (`build.shard[3]`).
 */
const ITEM_NAME = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\[([0-9][-,0-9]*)\]$/

/** The flow name of item `index` of `step`: `step[3]`. */
export function itemFlowName (step: string, index: number): string {
  return `${step}[${index}]`
}

/** The step and index of an item's flow name (`step[3]`), or undefined for any other name. */
export function itemOfFlowName (name: string): { step: string, index: number } | undefined {
  const items = itemsOfName(name)
  return items?.ranges.length === 1 && items.ranges[0]?.[0] === items.ranges[0]?.[1]
    ? { step: items.step, index: items.ranges[0]?.[0] as number }
    : undefined
}

/** The step of an item's flow name (`step[3]` → `step`); any other name is its own step. */
export function stepOfFlowName (name: string): string {
  return itemOfFlowName(name)?.step ?? name
}

/** The part of the Job names of item `index` of `step` after `<jobflow>-`: `<step>-item-<index>`. */
export function itemJobPart (step: string, index: number): string {
  return `${step}-item-${index}`
}

/** The part of a flow's Job names after `<jobflow>-`: the flow's name, or `<step>-item-<i>` for an item. */
export function jobPartOfFlowName (name: string): string {
  const item = itemOfFlowName(name)
  return item === undefined ? name : itemJobPart(item.step, item.index)
}

/** The Job of attempt `attempt` (from 1) of the flow whose Job names end in `jobPart`. */
export function attemptJobName (parentName: string, jobPart: string, attempt: number): string {
  return childName(parentName, attempt <= 1 ? jobPart : `${jobPart}-${attempt}`)
}

/** A record's attempt number: absent on a flow's first, which is how every record before retries reads. */
export function attemptOf (record: Pick<JobRecord, 'attempt'>): number {
  return record.attempt ?? 1
}

/** Index ranges as a group names them: `[0, 1, 2, 4]` → `0-2,4`. Indexes in increasing order. */
export function formatIndexRanges (indexes: readonly number[]): string {
  const ranges: Array<[number, number]> = []
  for (const index of indexes) {
    const last = ranges[ranges.length - 1]
    if (last !== undefined && last[1] + 1 === index) last[1] = index
    else ranges.push([index, index])
  }
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',')
}

/** A name's step and index ranges (`s[0-2,4]`), each range within what a step can have; undefined for another name. */
function itemsOfName (name: string): { step: string, ranges: Array<[number, number]> } | undefined {
  const match = ITEM_NAME.exec(name)
  if (match === null) return undefined
  const ranges: Array<[number, number]> = []
  for (const range of (match[3] as string).split(',')) {
    const bounds = /^([0-9]+)(?:-([0-9]+))?$/.exec(range)
    if (bounds === null) continue
    ranges.push([Number(bounds[1]), Math.min(Number(bounds[2] ?? bounds[1]), MAX_ITEMS - 1)])
  }
  return { step: match[1] as string, ranges }
}

/** Names in order, each run of one step's items written once: `a`, `s[0-4,6]`, `b`. */
export function namesWithRanges (names: readonly string[]): string[] {
  const out: string[] = []
  let step: string | undefined
  let indexes: number[] = []
  const flush = (): void => {
    if (step !== undefined) out.push(`${step}[${formatIndexRanges(indexes)}]`)
    step = undefined
    indexes = []
  }
  for (const name of names) {
    const item = itemOfFlowName(name)
    if (item === undefined) {
      flush()
      out.push(name)
      continue
    }
    if (item.step !== step) flush()
    step = item.step
    indexes.push(item.index)
  }
  flush()
  return out
}

/** The flow names a group's name stands for, each with its Job part: itself, or each item of its ranges. */
function flowNamesOf (name: string): Array<[string, string]> {
  const items = itemsOfName(name)
  // A flow that is no item: its Job part is its name.
  if (items === undefined) return name.includes('[') ? [] : [[name, name]]
  const names: Array<[string, string]> = []
  for (const [from, to] of items.ranges) {
    for (let i = from; i <= to; i++) names.push([itemFlowName(items.step, i), itemJobPart(items.step, i)])
  }
  return names
}

/**
 * The entries of a status: the whole ones of `status.jobs`, as they are, and those of
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
 * The records of a status (`status.jobs`, and what `status.jobGroups` stands for): each flow's
 * attempts, in order; malformed entries are ignored, and of two records of one attempt the later wins.
 */
export function readRecords (status: Record<string, unknown>, jobflow: string): Map<string, JobRecord[]> {
  const byName = new Map<string, JobRecord[]>()
  for (const entry of ungroupRecords(status, jobflow)) {
    const record = recordOf(entry)
    if (record === undefined) continue
    const attempts = byName.get(record.name)
    if (attempts === undefined) byName.set(record.name, [record])
    else attempts.push(record)
  }
  // Most flows have one attempt: only those with more are put in order.
  for (const [name, attempts] of byName) if (attempts.length > 1) byName.set(name, inAttemptOrder(attempts))
  return byName
}

/** One entry of a status as a record, or undefined when it is not one. */
export function recordOf (entry: unknown): JobRecord | undefined {
  if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.jobName !== 'string' ||
    typeof entry.phase !== 'string' || !PHASES.has(entry.phase)) return undefined
  // Field by field, in the order the hook writes them: a status of 10,000 records is read at every sync.
  const record: JobRecord = { name: entry.name, jobName: entry.jobName, phase: entry.phase as FlowPhase }
  if (typeof entry.startTime === 'string') record.startTime = entry.startTime
  if (typeof entry.completionTime === 'string') record.completionTime = entry.completionTime
  if (typeof entry.message === 'string') record.message = entry.message
  if (typeof entry.attempt === 'number' && Number.isInteger(entry.attempt) && entry.attempt >= 2) {
    record.attempt = entry.attempt
  }
  if (typeof entry.rerun === 'string') record.rerun = entry.rerun
  if (typeof entry.output === 'string') record.output = entry.output
  return record
}

/** A flow's records by attempt, the later of two records of one attempt kept. */
function inAttemptOrder (records: readonly JobRecord[]): JobRecord[] {
  const byAttempt = new Map<number, JobRecord>()
  for (const record of records) byAttempt.set(attemptOf(record), record)
  return [...byAttempt].sort(([a], [b]) => a - b).map(([, record]) => record)
}
