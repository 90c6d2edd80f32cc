// Fan-out: `flows[].forEach` (a list of strings) or `flows[].forEachFrom` (a dependency whose output
// is a JSON array of strings, as Argo's withParam) makes a step one Job per item. Each item is a
// flow of its own for the rest of the hook — `<step>[<index>]`, with its own attempts, retries and
// record — and the step's dependants wait for every item. Its Jobs are `<jobflow>-<step>-item-<i>`
// (a retry `…-item-<i>-<n>`), labelled with the step and the index, and carry JOBHOOKS_ITEM and
// JOBHOOKS_INDEX.
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import { MAX_ITEMS, type FlowSpec, type JobFlowSpec } from './spec.js'
import type { JobRecord } from './records.js'
import { outputWaitOf } from './outputs.js'
import { literalEnvVar } from '../../k8s/expansion.js'

export const ITEM_INDEX_LABEL = 'jobhooks.io/item-index'
export const ITEM_ENV = 'JOBHOOKS_ITEM'
export const INDEX_ENV = 'JOBHOOKS_INDEX'

/** The flow name of item `index` of `step`: `step[3]`. Brackets never occur in a step's name. */
export function itemFlowName (step: string, index: number): string {
  return `${step}[${index}]`
}

/** The step and index of an item's flow name (`step[3]`), or undefined for any other name. */
export function itemOfFlowName (name: string): { step: string, index: number } | undefined {
  const match = /^(.*)\[([0-9]+)\]$/.exec(name)
  return match === null ? undefined : { step: match[1] as string, index: Number(match[2]) }
}

/** The step of an item's flow name (`step[3]` → `step`); any other name is its own step. */
export function stepOfFlowName (name: string): string {
  return itemOfFlowName(name)?.step ?? name
}

/**
 * The part of a flow's Job names after `<jobflow>-`: the flow's name, or `<step>-item-<i>` for an
 * item. From the name alone, so that a grouped record (record-groups.ts) finds its Job's name too.
 */
export function jobPartOfFlowName (name: string): string {
  const item = itemOfFlowName(name)
  return item === undefined ? name : itemJobPart(item.step, item.index)
}

/** The part of the Job names of item `index` of `step` after `<jobflow>-`: `<step>-item-<index>`. */
export function itemJobPart (step: string, index: number): string {
  return `${step}-item-${index}`
}

/**
 * The part of a flow's Job names after `<jobflow>-` (jobPartOfFlowName), from what its spec says
 * of its item rather than by parsing its name: it is asked for every item at every sync.
 */
export function jobPartOf (flow: FlowSpec): string {
  return flow.item === undefined ? flow.name : itemJobPart(flow.item.step, flow.item.index)
}

/** The step a flow belongs to (its `jobhooks.io/flow` label): an item's step, else its own name. */
export function stepOf (flow: FlowSpec): string {
  return flow.item?.step ?? flow.name
}

/** The items of a `forEachFrom` output, or why it gives none. */
export function itemsFromOutput (dependency: string, output: string): string[] | string {
  let parsed: unknown
  try {
    parsed = JSON.parse(output)
  } catch {
    parsed = undefined
  }
  if (!Array.isArray(parsed) || !parsed.every(i => typeof i === 'string')) {
    const shown = output.length > 80 ? `${output.slice(0, 80)}…` : output
    return `forEachFrom ${dependency}: its output is not a JSON array of strings: ${JSON.stringify(shown)}`
  }
  if (parsed.length > MAX_ITEMS) return `forEachFrom ${dependency}: ${parsed.length} items, more than ${MAX_ITEMS}`
  return parsed
}

/**
 * The spec with each fan-out step whose items are known replaced by its items, and its dependants
 * depending on every item. A `forEachFrom` step whose dependency has not succeeded (in the status
 * read back) stays one flow that creates no Job: it waits, or fails with the reason its items
 * cannot be known.
 */
export function expandFanOut (spec: JobFlowSpec, memory: Map<string, JobRecord[]>, now: Date): JobFlowSpec {
  if (!spec.flows.some(f => f.forEach !== undefined || f.forEachFrom !== undefined)) return spec
  const groups = new Map<string, string[]>()
  const flows = spec.flows.flatMap(flow => {
    if (flow.forEach === undefined && flow.forEachFrom === undefined) return [flow]
    const items = itemsOf(flow, memory, now)
    if (!Array.isArray(items)) return [{ ...flow, ...items, retry: undefined }]
    const names = items.map((_, index) => itemFlowName(flow.name, index))
    groups.set(flow.name, names)
    return items.map((value, index): FlowSpec => ({
      ...flow,
      name: names[index] as string,
      item: { step: flow.name, index, value, parallelism: flow.parallelism }
    }))
  })
  if (groups.size === 0) return { ...spec, flows }
  return {
    ...spec,
    flows: flows.map(flow => {
      if (!flow.dependencies.some(d => groups.has(d))) return flow
      const fannedIn = new Map(flow.dependencies.filter(d => groups.has(d)).map(d => [d, groups.get(d) as string[]]))
      return { ...flow, dependencies: flow.dependencies.flatMap(d => groups.get(d) ?? [d]), fannedIn }
    })
  }
}

/** A step's items, or what its placeholder flow says while they are not known. */
function itemsOf (
  flow: FlowSpec,
  memory: Map<string, JobRecord[]>,
  now: Date
): string[] | Pick<FlowSpec, 'itemsPending' | 'itemsProblem'> {
  if (flow.forEach !== undefined) return flow.forEach
  const from = flow.forEachFrom as string
  const history = memory.get(from) ?? []
  const last = history[history.length - 1]
  if (last?.phase !== 'Succeeded') return { itemsPending: `waiting for ${from}` }
  if (last.output === undefined && outputWaitOf(last, now) !== undefined) {
    return { itemsPending: `waiting for the output of ${from}` }
  }
  const items = itemsFromOutput(from, last.output ?? '')
  return typeof items === 'string' ? { itemsProblem: items } : items
}

/**
 * An item's Job's environment variables: its item and index, for Kubernetes' `$(NAME)` expansion.
 * The item is data, escaped so that the container sees it as written, `$(` and `$$` too.
 */
export function itemEnv (item: NonNullable<FlowSpec['item']>): EnvVar[] {
  return [literalEnvVar(ITEM_ENV, item.value), { name: INDEX_ENV, value: String(item.index) }]
}

/**
 * `waiting for a, step[0], step[1]` as a person reads it: the items of one step counted,
 * `waiting for a, step (2 of 5 items)`.
 */
export function namesForPeople (names: readonly string[], fannedIn: ReadonlyMap<string, string[]> | undefined): string {
  if (fannedIn === undefined) return names.join(', ')
  const itemOf = new Map<string, string>()
  for (const [step, items] of fannedIn) for (const item of items) itemOf.set(item, step)
  const counts = new Map<string, number>()
  const words: string[] = []
  for (const name of names) {
    const step = itemOf.get(name)
    if (step === undefined) words.push(name)
    else if (!counts.has(step)) words.push(step)
    if (step !== undefined) counts.set(step, (counts.get(step) ?? 0) + 1)
  }
  return words.map(w => (counts.has(w)
    ? `${w} (${counts.get(w) as number} of ${(fannedIn.get(w) as string[]).length} items)`
    : w)).join(', ')
}
