// Deciding a flow's `when` in a sync (when.ts evaluates it): once its dependencies have finished,
// over their outcomes (a fan-out step's as one), the flow's arguments and, for an exit step, the
// DAG's outcome; within what the sync's `when`s have left to spend.
import type { JobRecord } from './records.js'
import type { PlannedFlow } from './fanout.js'
import { evaluateWhen, type DependencyOutcome, type WhenBudget } from './when.js'
import { groupPhase, WHEN_FALSE, type StepView } from './branches.js'
import type { DagEnd } from './exit.js'
import { localName } from './template-ref.js'
import { argumentValues } from './arguments.js'

/** What a `when` is decided over, beside the flow. */
export interface WhenInputs {
  records: ReadonlyMap<string, JobRecord>
  steps: StepView
  args: Record<string, string>
  /** How the DAG ended: for an exit step, once it has. */
  dag?: DagEnd
}

/** The dependencies of `flow` that have not finished (a fan-out step: every item). */
export function unfinishedSteps (flow: PlannedFlow, steps: StepView): string[] {
  return [...new Set(flow.dependencies.filter(d => steps.settled(d) === undefined))]
}

/**
 * A flow's `when`, once its dependencies have finished: true to start it, false to wait, the
 * message it is skipped with (the expression was false, or gave no answer), or the message it
 * fails with (it passed its cost limit: a tenant's expression that costly is an error, as Argo
 * fails a node whose expression errs, not a branch not taken).
 */
export function decideWhen (
  flow: PlannedFlow,
  when: string,
  { records, steps, args, dag }: WhenInputs,
  budget: WhenBudget
): boolean | string | { failed: string } | { deferred: true } {
  if (unfinishedSteps(flow, steps).length > 0) return false
  // A step of a template group reads its dependencies, and its arguments, as its template names them.
  const outcomes = new Map<string, DependencyOutcome>(flow.dependencies.map(d => {
    const items = steps.itemRecords(d)
    return [localName(d, flow.scope), items === undefined ? records.get(d) as JobRecord : stepOutcome(items)]
  }))
  const read = flow.args !== undefined ? argumentValues(flow.args) : args
  const value = evaluateWhen(when, outcomes, budget, { item: flow.item, args: read, flow: dag })
  if (value === true) return true
  if (typeof value === 'object' && 'deferred' in value) return value
  if (typeof value === 'object') return { failed: `${WHEN_OVER_LIMIT} (${value.overLimit}): ${when}` }
  return value === false ? `${WHEN_FALSE}: ${when}` : `${WHEN_FALSE} (it gave no answer: ${value}): ${when}`
}

/** A fan-out step's outcome as a `when` reads it, from its items' (all finished): groupPhase. */
function stepOutcome (items: Array<JobRecord | undefined>): DependencyOutcome {
  const known = items.filter((r): r is JobRecord => r !== undefined)
  const failed = known.filter(r => r.phase === 'Failed').length
  const succeeded = known.filter(r => r.phase === 'Succeeded').length
  const message = failed > 0
    ? `${failed} of ${items.length} items failed`
    : `${succeeded} of ${items.length} items succeeded`
  return { phase: groupPhase(known), message }
}

/** How a flow whose `when` this sync had no budget left for waits: the next sync evaluates it. */
export const WHEN_DEFERRED = 'waiting: the when expressions decided in this sync used its budget; ' +
  'this one is evaluated at the next'
/** How a flow whose `when` passed its cost limit is recorded: failed, and never retried. */
export const WHEN_OVER_LIMIT = 'failed: its when gave no answer within its budget'

/** A record of a flow failed by its own `when`: a retry would start its Job without the when holding. */
export function isWhenOverLimit (record: JobRecord): boolean {
  return record.phase === 'Failed' && record.message?.startsWith(WHEN_OVER_LIMIT) === true
}
