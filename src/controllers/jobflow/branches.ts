// How the steps of a JobFlow ended, as Argo Workflows reads them (`dag.go`): a step's end for its
// dependants (`dependencies`, `depends`), and the flow's failure, from its leaf steps
// (`assessDAGPhase`). A fan-out step is one step here: its items' records make one outcome, as
// Argo's TaskGroup node does.
import type { JobRecord } from './records.js'
import type { FlowSpec } from './spec.js'
import type { JobFlowPlan } from './fanout.js'
import type { SettledStep, StepEnd } from './depends.js'
import { groupPhase, itemOfFlowName, recordEnd, WHEN_FALSE } from '../../formats/jobflow-status.js'

export { groupPhase, recordEnd, WHEN_FALSE }

/** The item flow names of each fan-out step whose items are known. */
export type ItemGroups = ReadonlyMap<string, readonly string[]>

/** The item flow names of a plan's fan-out steps. */
export function itemGroups (plan: JobFlowPlan): Map<string, string[]> {
  return new Map([...plan.fanOuts].map(([step, node]) => [step, node.items.map(item => item.name)]))
}

/**
 * How a step ended, once it has (its items all, for a fan-out step): Failed when an item failed,
 * Skipped when its `when` skipped every item, Omitted when an item was never started, else
 * Succeeded (an empty fan-out too). Undefined while it runs or waits.
 */
export function settledStep (
  step: string,
  records: ReadonlyMap<string, JobRecord>,
  groups: ItemGroups
): SettledStep | undefined {
  const items = groups.get(step)
  if (items === undefined) {
    const end = recordEnd(records.get(step))
    return end === undefined ? undefined : { end }
  }
  const ends = items.map(item => recordEnd(records.get(item)))
  if (ends.some(e => e === undefined)) return undefined
  const failed = ends.filter(e => e === 'Failed').length
  const anySucceeded = ends.includes('Succeeded')
  const allFailed = items.length > 0 && failed === items.length
  const end: StepEnd = failed > 0
    ? 'Failed'
    : items.length > 0 && ends.every(e => e === 'Skipped')
      ? 'Skipped'
      : ends.includes('Omitted') ? 'Omitted' : 'Succeeded'
  return { end, anySucceeded, allFailed }
}

/**
 * What is already certain of a step: how it ended, or for a fan-out step still running that it
 * failed (an item did). Undefined while it is open.
 */
export function certainEnd (
  step: string,
  records: ReadonlyMap<string, JobRecord>,
  groups: ItemGroups
): StepEnd | undefined {
  const settled = settledStep(step, records, groups)
  if (settled !== undefined) return settled.end
  const items = groups.get(step)
  return items?.some(item => records.get(item)?.phase === 'Failed') === true ? 'Failed' : undefined
}

/**
 * How the steps stand for the flows decided after them in one walk of the flows in step order.
 * Every item of a fan-out step is decided before any step after it, so what its items make of it
 * is worked out once a walk: 10,000 items after 10,000 items ask it 10^8 times otherwise.
 */
export interface StepView {
  /** settledStep of a step. */
  settled: (step: string) => SettledStep | undefined
  /** certainEnd of a step. */
  certain: (step: string) => StepEnd | undefined
  /** How many items of a fan-out step have not finished; undefined for a step without items. */
  openItems: (step: string) => number | undefined
  /** A fan-out step's item records, in index order; undefined for a step without items. */
  itemRecords: (step: string) => Array<JobRecord | undefined> | undefined
}

export function stepView (records: ReadonlyMap<string, JobRecord>, groups: ItemGroups): StepView {
  const once = <T>(work: (step: string) => T): ((step: string) => T) => {
    const known = new Map<string, T>()
    return step => {
      if (!groups.has(step)) return work(step)
      if (!known.has(step)) known.set(step, work(step))
      return known.get(step) as T
    }
  }
  return {
    settled: once(step => settledStep(step, records, groups)),
    certain: once(step => certainEnd(step, records, groups)),
    openItems: once(step => groups.get(step)?.filter(item => recordEnd(records.get(item)) === undefined).length),
    itemRecords: once(step => groups.get(step)?.map(item => records.get(item)))
  }
}

/**
 * The leaf steps whose branch has failed (Argo's assessDAGPhase): walked in dependency order, a
 * step that completed (Succeeded or Failed) gives its own phase to its branch, one that was
 * skipped or omitted carries on the failure of any step it follows. A leaf on a failed branch
 * fails the flow; a failure followed by a step that succeeded was handled. A step still to start
 * whose `dependencies` (no `when`, no `depends`) include a failed or omitted step is counted as
 * omitted already: it can never run, so the failure is known before it is recorded. With
 * `spec.targets` (targets.ts) the DAG's branches end at its targets, as Argo's targetTasks, not at
 * its leaves: a step no target needs is on no branch that counts. Exit steps end at their leaves.
 */
export function failedLeaves (
  steps: readonly FlowSpec[],
  records: ReadonlyMap<string, JobRecord>,
  groups: ItemGroups,
  targets?: readonly string[]
): string[] {
  const ends = new Map<string, StepEnd | undefined>()
  const failing = new Set<string>()
  const hasDependants = new Set(steps.flatMap(s => s.dependencies))
  for (const step of steps) {
    let end = certainEnd(step.name, records, groups)
    const decidesItself = step.when !== undefined || step.depends !== undefined
    const stopped = (d: string): boolean => ends.get(d) === 'Failed' || ends.get(d) === 'Omitted'
    if (end === undefined && !decidesItself && step.dependencies.some(stopped)) end = 'Omitted'
    ends.set(step.name, end)
    const inherits = end === 'Skipped' || end === 'Omitted'
    if (end === 'Failed' || (inherits && step.dependencies.some(d => failing.has(d)))) failing.add(step.name)
  }
  const named = targets === undefined ? undefined : new Set(targets)
  const isEnd = (s: FlowSpec): boolean =>
    named === undefined || s.exit === true ? !hasDependants.has(s.name) : named.has(s.name)
  return steps.filter(s => isEnd(s) && failing.has(s.name)).map(s => s.name)
}

/**
 * Whether a step may still read the output of the flow `name` (outputs.ts shownOutputs): a step
 * after it, or a `forEachFrom` over it (an item's output is read only so), that has not succeeded
 * (a retry or a rerun of it reads the output again).
 */
export function outputStillRead (
  steps: readonly FlowSpec[],
  records: ReadonlyMap<string, JobRecord>,
  groups: ItemGroups
): (name: string) => boolean {
  const readers = new Map<string, string[]>()
  const add = (source: string, reader: string): void => { readers.set(source, [...readers.get(source) ?? [], reader]) }
  for (const step of steps) {
    for (const dependency of new Set(step.dependencies)) add(dependency, step.name)
    if (step.forEachFrom !== undefined) add(`${step.forEachFrom}[]`, step.name)
  }
  const succeeded = (step: string): boolean =>
    (groups.get(step) ?? [step]).every(flow => records.get(flow)?.phase === 'Succeeded')
  return name => {
    const item = itemOfFlowName(name)
    const source = item === undefined ? name : `${item.step}[]`
    return (readers.get(source) ?? []).some(reader => !succeeded(reader))
  }
}
