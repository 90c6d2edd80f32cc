// Fan-out: `flows[].forEach` (a list of JSON values) or `flows[].forEachFrom` (a dependency whose
// output is a JSON array, as Argo's withParam; a fan-out step's output is its items' outputs)
// makes a step one node of the run plan with typed items (as Argo's TaskGroup node): each item is
// a flow with its own attempts, retries and record, `<step>[<index>]`, while the step's dependants
// keep naming the step, which ends by one rule over its items (branches.ts, settledStep). Its
// Jobs are `<jobflow>-<step>-item-<i>` (a retry `…-item-<i>-<n>`), labelled with the step and the
// index, and carry JOBHOOKS_ITEM, JOBHOOKS_INDEX, and for an object item
// JOBHOOKS_ITEM_<KEY> per key.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import { allSteps, itemsProblem, type FlowSpec, type JobFlowSpec } from './spec.js'
import { isSettled, type JobRecord } from './records.js'
import { OUTPUT_MAX_BYTES, outputJSON, outputWaitOf } from './outputs.js'
import { orderByDependencies } from './dag.js'
import {
  itemFlowName, itemJobPart, itemOfFlowName, jobPartOfFlowName, stepOfFlowName
} from '../../formats/jobflow-status.js'
import { literalEnvVar } from '../../k8s/expansion.js'

/** One item of a fan-out step: its place and its value (any JSON but null). */
export interface Item { step: string, index: number, value: unknown, parallelism?: number }

/**
 * One flow of the run plan, derived from the spec and what was observed (the spec itself is never
 * changed): a step as the spec has it, or one item of a fan-out step, or a fan-out step whose
 * items are not known yet.
 */
export interface PlannedFlow extends FlowSpec {
  /** On the flows a fan-out step becomes: which item of which step this flow runs. */
  item?: Item
  /** A `forEachFrom` step whose items are not known yet: what it waits for. It creates no Job. */
  itemsPending?: string
  /** A `forEachFrom` step whose items cannot be known: why it fails. It creates no Job. */
  itemsProblem?: string
  /** A `forEachFrom` step of no items: it succeeds, once it may start, saying so. It creates no Job. */
  itemsNone?: string
}

/** A fan-out step whose items are known: one node of the plan, its items in index order. */
export interface FanOutNode {
  step: FlowSpec
  items: PlannedFlow[]
}

/**
 * The run plan: the spec's settings; every flow that has a record of its own (a step, a fan-out
 * step's placeholder, an item), in spec order, the exit steps' after the DAG's; and the fan-out
 * steps whose items are known.
 * Dependencies name steps as the spec does: a fan-out step is never flattened into its items.
 */
export type JobFlowPlan = Omit<JobFlowSpec, 'flows'> & {
  flows: PlannedFlow[]
  fanOuts: ReadonlyMap<string, FanOutNode>
}

export const ITEM_INDEX_LABEL = 'jobhooks.io/item-index'
export const ITEM_ENV = 'JOBHOOKS_ITEM'
export const INDEX_ENV = 'JOBHOOKS_INDEX'

export { itemFlowName, itemJobPart, itemOfFlowName, jobPartOfFlowName, stepOfFlowName }

/**
 * The part of a flow's Job names after `<jobflow>-` (jobPartOfFlowName), from what its spec says
 * of its item rather than by parsing its name: it is asked for every item at every sync.
 */
export function jobPartOf (flow: PlannedFlow): string {
  return flow.item === undefined ? flow.name : itemJobPart(flow.item.step, flow.item.index)
}

/** The step a flow belongs to (its `jobhooks.io/flow` label): an item's step, else its own name. */
export function stepOf (flow: PlannedFlow): string {
  return flow.item?.step ?? flow.name
}

/** The items of a `forEachFrom` output, or why it gives none. */
export function itemsFromOutput (dependency: string, output: string): unknown[] | string {
  const bytes = Buffer.byteLength(output)
  let parsed: unknown
  try {
    parsed = JSON.parse(output)
  } catch (error) {
    const shown = output.length > 80 ? `${output.slice(0, 80)}…` : output
    const why = bytes > OUTPUT_MAX_BYTES ? ` (its output is ${bytes.toLocaleString('en-US')} bytes)` : ''
    return `forEachFrom ${dependency}: its output is not JSON${why}: ${JSON.stringify(shown)}: ${firstLine(error)}`
  }
  if (!Array.isArray(parsed)) {
    const start = JSON.stringify(output.slice(0, 40))
    return `forEachFrom ${dependency}: its output is JSON but not an array: it starts ${start}`
  }
  if (parsed.length === 0) return parsed
  const problem = itemsProblem(parsed)
  return problem === undefined ? parsed : `forEachFrom ${dependency}: its output ${problem}`
}

/** A line of an error, for a message. */
function firstLine (error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] as string
}

/** The latest record of a flow (an item's by its flow name, `step[3]`), as far as this sync knows. */
export type LatestRecord = (flow: string) => JobRecord | undefined

/**
 * The plan of a spec: each fan-out step whose items are known is a node of its items. A
 * `forEachFrom` step whose items are not known, or are none, stays one flow that creates no Job:
 * it waits, fails with the reason its items cannot be known, or has nothing to do. Steps are
 * planned in dependency order, so a `forEachFrom` naming a fan-out step finds its items.
 */
export function expandFanOut (spec: JobFlowSpec, latest: LatestRecord, now: Date): JobFlowPlan {
  const fanOuts = new Map<string, FanOutNode>()
  const steps = allSteps(spec)
  const fansOut = steps.some(f => f.forEach !== undefined || f.forEachFrom !== undefined)
  if (!fansOut) return { ...spec, flows: steps, fanOuts }
  const placeholders = new Map<string, PlannedFlow>()
  for (const flow of orderByDependencies(steps).order) {
    if (flow.forEach === undefined && flow.forEachFrom === undefined) continue
    const items = itemsOf(flow, { latest, fanOuts, now })
    // A step decided as a whole before its items were known (skipped, failed) stays so: only a new
    // attempt of it (a rerun) takes its items, in the sync after.
    const decided = isSettled(latest(flow.name))
    if (!Array.isArray(items) || decided) {
      const placeholder = Array.isArray(items) ? { itemsPending: 'waiting for its items' } : items
      placeholders.set(flow.name, { ...flow, ...placeholder, retry: undefined })
      continue
    }
    fanOuts.set(flow.name, {
      step: flow,
      items: items.map((value, index): PlannedFlow => ({
        ...flow,
        name: itemFlowName(flow.name, index),
        item: { step: flow.name, index, value, parallelism: flow.parallelism }
      }))
    })
  }
  const flows = steps.flatMap(flow => fanOuts.get(flow.name)?.items ?? [placeholders.get(flow.name) ?? flow])
  return { ...spec, flows, fanOuts }
}

/** The flows of a plan step by step, in the order of `steps`: a fan-out step's items in its place. */
export function flowsInStepOrder (plan: JobFlowPlan, steps: readonly FlowSpec[]): PlannedFlow[] {
  const byName = new Map(plan.flows.filter(f => f.item === undefined).map(f => [f.name, f]))
  return steps.flatMap(step => plan.fanOuts.get(step.name)?.items ?? [byName.get(step.name) as PlannedFlow])
}

/** What finding a step's items reads: the latest records, and the fan-out steps planned so far. */
interface ItemSources {
  latest: LatestRecord
  fanOuts: ReadonlyMap<string, FanOutNode>
  now: Date
}

/** What a fan-out step whose items are not known, or are none, says instead. */
type Placeholder = Pick<PlannedFlow, 'itemsPending' | 'itemsProblem' | 'itemsNone'>

/**
 * A step's items, or what its placeholder flow says while they are not known, or that there are
 * none: then it is one flow still, which its dependencies hold back as any other step's.
 */
function itemsOf (flow: FlowSpec, sources: ItemSources): unknown[] | Placeholder {
  if (flow.forEach !== undefined) return flow.forEach
  const from = flow.forEachFrom as string
  const node = sources.fanOuts.get(from)
  const output = node !== undefined
    ? aggregateOutput(from, node.items.map(i => i.name), sources)
    : outputOf(from, sources)
  if (typeof output !== 'string') return output
  const parsed = itemsFromOutput(from, output)
  if (typeof parsed === 'string') return { itemsProblem: parsed }
  return parsed.length > 0 ? parsed : { itemsNone: `nothing to do: forEachFrom ${from} gives no items` }
}

/**
 * A step's output once it succeeded, what its readers wait for, or why none will come: it failed
 * or was skipped, and a `when` or a `depends` started its reader all the same (Argo errs on a
 * `withParam` it cannot resolve).
 */
function outputOf (from: string, { latest, now }: ItemSources): string | Placeholder {
  const last = latest(from)
  if (isSettled(last) && last.phase !== 'Succeeded') {
    const ended = last.phase === 'Failed' ? 'failed' : 'was skipped'
    return { itemsProblem: `forEachFrom ${from}: ${from} ${ended}, so it has no output to read items from` }
  }
  if (last?.phase !== 'Succeeded') return { itemsPending: `waiting for ${from}` }
  if (last.output === undefined && outputWaitOf(last, now) !== undefined) {
    return { itemsPending: `waiting for the output of ${from}` }
  }
  return last.output ?? ''
}

/**
 * A fan-out step's output, as Argo aggregates a looped task's: the JSON array of its succeeded
 * items' outputs in index order, each parsed when it is JSON, else as its text; once every item
 * has finished and its output was seen.
 */
function aggregateOutput (
  from: string,
  items: readonly string[],
  { latest, now }: ItemSources
): string | Pick<PlannedFlow, 'itemsPending'> {
  const records = items.map(latest)
  const open = records.filter(r => !isSettled(r)).length
  if (open > 0) return { itemsPending: `waiting for ${from} (${open} of ${items.length} items)` }
  if (records.some(r => r?.phase === 'Succeeded' && r.output === undefined && outputWaitOf(r, now) !== undefined)) {
    return { itemsPending: `waiting for the outputs of ${from}` }
  }
  const values = records.filter(r => r?.phase === 'Succeeded').map(r => outputJSON(r?.output) ?? r?.output ?? '')
  return JSON.stringify(values)
}

/**
 * An item's Job's environment variables: its item and index, for Kubernetes' `$(NAME)` expansion.
 * The item is data, escaped so that the container sees it as written, `$(` and `$$` too.
 */
export function itemEnv (item: Item): EnvVar[] {
  const env = [literalEnvVar(ITEM_ENV, itemText(item.value)), { name: INDEX_ENV, value: String(item.index) }]
  if (typeof item.value !== 'object' || item.value === null || Array.isArray(item.value)) return env
  const seen = new Set(env.map(e => e.name))
  for (const [key, value] of Object.entries(item.value)) {
    const name = itemKeyEnvName(key)
    // Two keys that name one variable (`a-b` and `a_b`): the first keeps it, as in the item.
    if (seen.has(name) || value === undefined) continue
    seen.add(name)
    env.push(literalEnvVar(name, itemText(value)))
  }
  return env
}

/** An item as a container reads it: a string as it is, any other JSON as JSON. */
export function itemText (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The variable of an object item's key: `region-name` → `JOBHOOKS_ITEM_REGION_NAME`. */
export function itemKeyEnvName (key: string): string {
  return `${ITEM_ENV}_${key.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`
}

/**
 * The dependencies a flow waits for, as a person reads them: a fan-out step with how many of its
 * items have not finished, `waiting for a, step (2 of 5 items)`.
 */
export function namesForPeople (
  names: readonly string[],
  groups: ReadonlyMap<string, readonly string[]>,
  openItems: (step: string) => number | undefined
): string {
  return names.map(name => {
    const items = groups.get(name)
    return items === undefined ? name : `${name} (${openItems(name) ?? 0} of ${items.length} items)`
  }).join(', ')
}
