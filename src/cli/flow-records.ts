// The tools' view of a JobFlow's records of its steps' attempts: the entries of status.jobs and,
// on a large JobFlow, those its status.jobGroups stand for, read by the codec the hook reads them
// with (formats/jobflow-status.ts), so that every reader (the simulator's report and pictures, the
// kubectl plugin) sees what the hook remembers, in the order of the spec.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { attemptOf, itemOfFlowName, readRecords, type JobRecord } from '../formats/jobflow-status.js'
import { writtenSteps } from '../controllers/jobflow/spec.js'

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

/**
 * The records of a JobFlow in the order of its spec's steps, or of `steps` (names, a template
 * group's steps after it as flow-shape.ts has them), items by index, each step's oldest attempt
 * first; malformed entries are left out.
 */
export function flowRecords (jobflow: KubeObject, steps?: readonly string[]): FlowRecord[] {
  const status = isRecord(jobflow.status) ? jobflow.status : {}
  const jobs = [...readRecords(status, jobflow.metadata.name).values()].flat()
  // Whole records come before grouped ones in the status: put them back in the order of the steps.
  const names = steps ?? specSteps(jobflow).map(f => f.name as string)
  const order = new Map(names.map((name, i) => [name, i]))
  const placed = jobs.map((r, i) => ({ r, at: [...placeOf(r, order), i] }))
  placed.sort((a, b) => compareTuples(a.at, b.at))
  return placed.map(({ r: { rerun: _, attempt, ...rest } }) => ({ ...rest, attempt: attempt ?? 1 }))
}

/** The steps a JobFlow's spec writes, spec.flows then spec.onExit (marked `exit`), each with a name. */
export function specSteps (flow: KubeObject): Array<Record<string, unknown>> {
  return writtenSteps(flow.spec).filter(step => typeof step.name === 'string')
}

/** Where a record goes: its step's place, its item index (-1 for none), its attempt. */
function placeOf (record: JobRecord, order: ReadonlyMap<string, number>): number[] {
  const item = itemOfFlowName(record.name)
  return [order.get(item?.step ?? record.name) ?? order.size, item?.index ?? -1, attemptOf(record)]
}

function compareTuples (a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number)
  return 0
}
