// The one place that reads a JobFlow's records of its steps' attempts: the entries of status.jobs
// and, on a large JobFlow, those its status.jobGroups stand for, read as the hook reads them, so
// that every reader (the simulator's report and pictures, the kubectl plugin) sees the same list.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { ungroupRecords } from '../controllers/jobflow/record-groups.js'
import { itemOfFlowName } from '../controllers/jobflow/fanout.js'

/** One attempt of a step (or of a fan-out item, named `step[i]`), as status records it. */
export interface FlowRecord {
  name: string
  phase: string
  /** 1 for a first attempt (status leaves it out). */
  attempt: number
  jobName?: string
  startTime?: string
  completionTime?: string
  output?: string
  message?: string
}

const text = (value: unknown): string | undefined => typeof value === 'string' ? value : undefined

/**
 * The records of a JobFlow in the order of its spec's steps (items by index), each step's oldest
 * attempt first; malformed entries are left out.
 */
export function flowRecords (jobflow: KubeObject): FlowRecord[] {
  const status = isRecord(jobflow.status) ? jobflow.status : {}
  const jobs = ungroupRecords(status, jobflow.metadata.name).filter(r => typeof r.name === 'string')
  // Whole records come before grouped ones in the status: put them back in the order of the steps.
  const order = stepOrder(jobflow)
  const placed = jobs.map((r, i) => ({ r, at: [...placeOf(r, order), i] }))
  placed.sort((a, b) => compareTuples(a.at, b.at))
  return placed.map(({ r }) => {
    const record: FlowRecord = {
      name: r.name as string,
      phase: text(r.phase) ?? 'Pending',
      attempt: typeof r.attempt === 'number' ? r.attempt : 1
    }
    for (const key of ['jobName', 'startTime', 'completionTime', 'output', 'message'] as const) {
      const value = text(r[key])
      if (value !== undefined) record[key] = value
    }
    return record
  })
}

/** Each step's place in the spec. */
function stepOrder (jobflow: KubeObject): Map<string, number> {
  const flows = isRecord(jobflow.spec) && Array.isArray(jobflow.spec.flows) ? jobflow.spec.flows : []
  const names = flows.map(f => (isRecord(f) && typeof f.name === 'string' ? f.name : ''))
  return new Map(names.map((name, i) => [name, i]))
}

/** Where a record goes: its step's place, its item index (-1 for none), its attempt. */
function placeOf (record: Record<string, unknown>, order: ReadonlyMap<string, number>): number[] {
  const name = record.name as string
  const item = itemOfFlowName(name)
  const attempt = typeof record.attempt === 'number' ? record.attempt : 1
  return [order.get(item?.step ?? name) ?? order.size, item?.index ?? -1, attempt]
}

function compareTuples (a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number)
  return 0
}
