// `spec.onExit[]`: exit steps, as Argo's `onExit` handler. They have the shape of `flows[]` and
// depend only on one another; none starts before the DAG (every step of `flows[]`) has finished,
// whatever its outcome. Each exit Job gets the DAG's outcome in JOBHOOKS_FLOW_PHASE and its failed
// steps in JOBHOOKS_FLOW_FAILURES (JSON), and an exit step's `when` reads `flow.phase`. Their
// records are kept like any step's; a failed exit step fails a flow whose DAG succeeded (Argo's
// rule). The flow's deadline neither stops nor skips them: they are how a team hears of it.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import { literalEnvVar } from '../../k8s/expansion.js'
import type { FlowSpec } from './spec.js'
import type { PlannedFlow } from './fanout.js'
import { isSettled, type JobRecord } from './records.js'
import type { ItemGroups, StepView } from './branches.js'
import { failedLeaves } from './branches.js'
import { endedByDeadline } from './deadline.js'

export const FLOW_PHASE_ENV = 'JOBHOOKS_FLOW_PHASE'
export const FLOW_FAILURES_ENV = 'JOBHOOKS_FLOW_FAILURES'

/** How a JobFlow's exit step waits while the DAG runs. */
export const EXIT_WAITING = 'waiting: an exit step starts once every step of spec.flows has finished'

/**
 * The most JOBHOOKS_FLOW_FAILURES weighs, in bytes of JSON (a termination message's limit: every
 * container of every exit Job carries it), and the most of each message it keeps.
 */
export const FLOW_FAILURES_MAX_BYTES = 4096
export const FAILURE_MESSAGE_MAX_CHARS = 512

/** One failed step of the DAG, as an exit step reads it. */
export interface DagFailure { name: string, message: string }

/** How the DAG ended, once it has: what exit steps read. */
export interface DagEnd {
  phase: 'Succeeded' | 'Failed'
  failures: DagFailure[]
}

/**
 * How the DAG ended, from the records of one walk: undefined while any of its flows has not
 * settled (a Job runs or waits, a retry is due). Failed when a leaf is on a failed branch
 * (branches.ts) or the deadline ended a step; the failures are the steps that failed, a fan-out
 * step once.
 */
export function dagEnd (
  dagSteps: readonly FlowSpec[],
  dagFlows: readonly PlannedFlow[],
  records: ReadonlyMap<string, JobRecord>,
  view: { groups: ItemGroups, steps: StepView, targets?: readonly string[] }
): DagEnd | undefined {
  if (!dagFlows.every(flow => isSettled(records.get(flow.name)))) return undefined
  const failures = dagSteps.filter(step => view.steps.certain(step.name) === 'Failed').map(step => ({
    name: step.name,
    message: failureMessage(step.name, records, view)
  }))
  const failed = failures.length > 0 && failedLeaves(dagSteps, records, view.groups, view.targets).length > 0
  const byDeadline = dagFlows.some(flow => endedByDeadline(records.get(flow.name) as JobRecord))
  return { phase: failed || byDeadline ? 'Failed' : 'Succeeded', failures }
}

/** A failed step's message: its record's, or how many of a fan-out step's items failed. */
function failureMessage (
  step: string,
  records: ReadonlyMap<string, JobRecord>,
  view: { steps: StepView }
): string {
  const items = view.steps.itemRecords(step)
  if (items === undefined) return (records.get(step)?.message ?? 'failed').slice(0, FAILURE_MESSAGE_MAX_CHARS)
  const failed = items.filter(r => r?.phase === 'Failed').length
  return `${failed} of ${items.length} items failed`
}

/** The variables every container of an exit step's Job gets. */
export function exitEnv (end: DagEnd): EnvVar[] {
  return [literalEnvVar(FLOW_PHASE_ENV, end.phase), literalEnvVar(FLOW_FAILURES_ENV, failuresJSON(end))]
}

/** The failed steps as JSON, in step order, as many as fit in FLOW_FAILURES_MAX_BYTES. */
export function failuresJSON (end: DagEnd): string {
  const listed: DagFailure[] = []
  let bytes = 2
  for (const failure of end.failures) {
    const more = Buffer.byteLength(JSON.stringify(failure)) + (listed.length > 0 ? 1 : 0)
    if (bytes + more > FLOW_FAILURES_MAX_BYTES) break
    listed.push(failure)
    bytes += more
  }
  return JSON.stringify(listed)
}
