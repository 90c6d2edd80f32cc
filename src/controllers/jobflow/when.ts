// `flows[].when`: a CEL expression over the outcomes of a flow's dependencies, e.g.
// `flows.build.phase == 'Failed'` (a notify or cleanup branch) or
// `flows.a.phase == 'Succeeded' || flows.b.phase == 'Succeeded'`, or the flow's arguments
// (`args.env == 'prod'`, arguments.ts). It is checked when the spec is
// read (syntax, type, cost, and that it reads only the flow's dependencies: nothing else has
// finished when it is evaluated) and evaluated once every dependency has finished, within a cost
// limit (common/cel.ts): any tenant writes one, and one service answers them all.
import type { FlowPhase } from './records.js'
import { OUTPUT_MAX_BYTES, outputJSON } from './outputs.js'
import {
  BudgetedCel, firstLine, jsonBound, keysRead, mapBound, recordBound, stringBound, type Bound
} from '../common/cel.js'
import { ARGUMENT_VALUE_MAX_BYTES, MAX_ARGUMENTS } from './arguments.js'

/** Longer expressions are refused (the CRD says the same). */
export const WHEN_MAX_LENGTH = 1024
/**
 * The most of a dependency's message a `when` reads, in characters: the estimate needs a bound,
 * and messages (the Job's failure condition, the hook's own notes) are far shorter.
 */
export const WHEN_MESSAGE_MAX_CHARS = 4096
const PHASE_MAX_CHARS = 'Succeeded'.length

/** What a `when` can see of one dependency, at its largest. */
const OUTCOME_BOUND: Bound = recordBound({
  phase: stringBound(PHASE_MAX_CHARS),
  message: stringBound(WHEN_MESSAGE_MAX_CHARS),
  output: stringBound(OUTPUT_MAX_BYTES),
  outputJSON: jsonBound(OUTPUT_MAX_BYTES)
})

/** `flows` at its largest for a flow with this many dependencies (an identifier weighs up to 63 characters). */
function flowsBound (dependencies: number): Bound {
  return mapBound(dependencies, stringBound(63), OUTCOME_BOUND)
}

/** The most of an item a `when` is estimated to read, in bytes of JSON (a tenant's larger one is metered). */
export const WHEN_ITEM_MAX_BYTES = 4096

/** `args` at its largest: the spec's arguments, each name an identifier of up to 63 characters. */
const ARGS_BOUND: Bound = mapBound(MAX_ARGUMENTS, stringBound(63), stringBound(ARGUMENT_VALUE_MAX_BYTES))

const LIMITS = { maxAstNodes: 500, maxDepth: 32, maxListElements: 100, maxMapEntries: 100, maxCallArguments: 8 }
/** `flow` as an exit step's `when` reads it (exit.ts): the DAG's outcome. */
const FLOW_BOUND: Bound = recordBound({ phase: stringBound(PHASE_MAX_CHARS) })

/** What a `when` may read: every step its dependencies and the arguments; an item, an exit step `flow`. */
interface WhenKind { fanOut: boolean, exit: boolean }

/**
 * One environment per kind of step: a fan-out step's `when` reads its item too, once per item
 * (Argo's `when` with `{{item}}`), and an exit step's reads `flow.phase`.
 */
function environment ({ fanOut, exit }: WhenKind): BudgetedCel {
  const variables: ConstructorParameters<typeof BudgetedCel>[0]['variables'] = {
    flows: { type: 'map', bound: flowsBound(0) },
    args: { type: 'map', bound: ARGS_BOUND }
  }
  if (fanOut) variables.item = { type: 'dyn', bound: jsonBound(WHEN_ITEM_MAX_BYTES) }
  if (exit) variables.flow = { type: 'map', bound: FLOW_BOUND }
  return new BudgetedCel({ limits: LIMITS, variables })
}
const cel = environment({ fanOut: false, exit: false })
const itemCel = environment({ fanOut: true, exit: false })
const exitCel = environment({ fanOut: false, exit: true })
const itemExitCel = environment({ fanOut: true, exit: true })

function environmentOf ({ fanOut, exit }: WhenKind): BudgetedCel {
  if (exit) return fanOut ? itemExitCel : exitCel
  return fanOut ? itemCel : cel
}

/** The flow names an expression reads: `flows.name` and `flows['name-with-dashes']`. */
export function flowsRead (expression: string): string[] {
  return keysRead(expression, 'flows')
}

/**
 * Why a flow's `when` cannot be used, or undefined. `at` names the flow; a fan-out step's
 * (`fanOut`) may read `item`.
 */
export function whenProblem (
  expression: string,
  dependencies: readonly string[],
  at: string,
  { fanOut = false, exit = false }: Partial<WhenKind> = {}
): string | undefined {
  if (expression.trim() === '') return `${at}: when is empty`
  if (expression.length > WHEN_MAX_LENGTH) return `${at}: when is longer than ${WHEN_MAX_LENGTH} characters`
  if (!exit && keysRead(expression, 'flow').length > 0) {
    return `${at}: when reads flow, the outcome of the whole DAG, which only an exit step (spec.onExit) can read`
  }
  let checked: ReturnType<typeof cel.check>
  try {
    const bounds = new Map([['flows', flowsBound(new Set(dependencies).size)]])
    checked = environmentOf({ fanOut, exit }).check(expression, bounds)
  } catch (error) {
    return `${at}: when is not a CEL expression it can run: ${firstLine(error)}`
  }
  if (checked.type === undefined) return `${at}: when ${JSON.stringify(expression)} is ${String(checked.problem)}`
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return `${at}: when must give true or false, not a ` +
    `${checked.type}`
  }
  const strangers = flowsRead(expression).filter(name => !dependencies.includes(name))
  if (strangers.length > 0) {
    return `${at}: when reads ${strangers.map(n => `flows.${n}`).join(', ')}, which ` +
    `${strangers.length === 1 ? 'is not a dependency' : 'are not dependencies'} of the flow (only dependencies have ` +
      'finished when it is evaluated)'
  }
  return checked.problem === undefined ? undefined : `${at}: when ${checked.problem}`
}

/** What a `when` reads beside its dependencies: a fan-out item, the arguments, an exit step's `flow`. */
export interface WhenContext { item?: { value: unknown }, args?: Record<string, string>, flow?: { phase: string } }

/** What a `when` sees of each dependency. */
export interface DependencyOutcome { phase: FlowPhase, message?: string, output?: string }

/**
 * Cost units the `when`s of one sync may spend together: two expressions at their limit. A sync
 * decides every flow whose dependencies just finished, and keeps the event loop 200 ms at most.
 */
export const WHEN_SYNC_BUDGET = 2 * cel.costLimit

/** What the `when`s of one sync have left to spend. */
export interface WhenBudget { left: number }

/** A fresh budget for the `when`s of one sync. */
export function whenBudget (): WhenBudget {
  return { left: WHEN_SYNC_BUDGET }
}

/**
 * What evaluating a `when` gave: its answer, why it gave none, that it passed its own cost limit,
 * or that the sync's budget ran out first (it is evaluated again at the next sync).
 */
export type WhenValue = boolean | string | { overLimit: string } | { deferred: true }

/**
 * The value of a checked `when` over its dependencies' outcomes: true, false, why neither,
 * (`overLimit`) that it passed its cost limit, which fails the flow rather than skip it, or
 * (`deferred`) that what this sync had left of `budget` ran out before it finished.
 */
export function evaluateWhen (
  expression: string,
  dependencies: ReadonlyMap<string, DependencyOutcome>,
  budget: WhenBudget = whenBudget(),
  { item, args = {}, flow }: WhenContext = {}
): WhenValue {
  const flows = Object.fromEntries([...dependencies].map(([name, outcome]) => [name, celOutcome(outcome)]))
  const limit = Math.min(cel.costLimit, budget.left)
  const variables: Record<string, unknown> = { flows, args }
  if (item !== undefined) variables.item = celValue(item.value)
  if (flow !== undefined) variables.flow = { phase: flow.phase }
  const environment = environmentOf({ fanOut: item !== undefined, exit: flow !== undefined })
  const result = environment.evaluate(expression, variables, limit)
  budget.left = Math.max(0, budget.left - result.cost)
  if (!result.ok && result.overLimit && limit < cel.costLimit) return { deferred: true }
  if (!result.ok) return result.overLimit ? { overLimit: firstLine(result.error) } : firstLine(result.error)
  const value = result.value
  return typeof value === 'boolean'
    ? value
    : 'it gave ' +
      `${typeof value === 'bigint' ? 'an int' : `a ${typeof value}`}, not true or false`
}

/** A JSON value as CEL reads it: whole numbers as CEL's int, as JSON itself would compare them. */
function celValue (value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map(celValue)
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celValue(v)]))
  }
  return value
}

/**
 * A dependency as CEL reads it: `phase`, `message` and `output` ('' when absent), and `outputJSON`
 * when the output is JSON (`has(flows.a.outputJSON)` tells whether it is).
 */
function celOutcome (outcome: DependencyOutcome): Record<string, unknown> {
  const value: Record<string, unknown> = {
    phase: outcome.phase,
    message: (outcome.message ?? '').slice(0, WHEN_MESSAGE_MAX_CHARS),
    output: outcome.output ?? ''
  }
  const parsed = outputJSON(outcome.output)
  if (parsed !== undefined) value.outputJSON = parsed
  return value
}
