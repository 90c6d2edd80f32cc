// `flows[].when`: a CEL expression over the outcomes of a flow's dependencies, e.g.
// `flows.build.phase == 'Failed'` (a notify or cleanup branch) or
// `flows.a.phase == 'Succeeded' || flows.b.phase == 'Succeeded'`. It is checked when the spec is
// read (syntax, type, and that it reads only the flow's dependencies: nothing else has finished
// when it is evaluated) and evaluated once every dependency has finished. CEL has no loops and
// the environment's structural limits bound an expression's size, so evaluation is cheap.
import { Environment } from '@marcbachmann/cel-js'
import type { FlowPhase } from './records.js'
import { outputJSON } from './outputs.js'

/** Longer expressions are refused (the CRD says the same). */
export const WHEN_MAX_LENGTH = 1024

const environment = new Environment({
  limits: { maxAstNodes: 500, maxDepth: 32, maxListElements: 100, maxMapEntries: 100, maxCallArguments: 8 }
}).registerVariable('flows', 'map')

/** The flow names an expression reads: `flows.name` and `flows['name-with-dashes']`. */
export function flowsRead (expression: string): string[] {
  const names = new Set<string>()
  for (const match of expression.matchAll(/\bflows\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1] as string)
  for (const match of expression.matchAll(/\bflows\s*\[\s*(['"])([^'"]*)\1\s*\]/g)) names.add(match[2] as string)
  return [...names]
}

/** Why a flow's `when` cannot be used, or undefined. `at` names the flow. */
export function whenProblem (expression: string, dependencies: readonly string[], at: string): string | undefined {
  if (expression.trim() === '') return `${at}: when is empty`
  if (expression.length > WHEN_MAX_LENGTH) return `${at}: when is longer than ${WHEN_MAX_LENGTH} characters`
  let checked: { valid: boolean, type?: string, error?: { message?: string } }
  try {
    checked = environment.check(expression)
  } catch (error) {
    return `${at}: when is not a CEL expression it can run: ${firstLine(error)}`
  }
  if (!checked.valid) return `${at}: when ${JSON.stringify(expression)} is not valid CEL: ${firstLine(checked.error)}`
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return `${at}: when must give true or false, not a ` +
    `${String(checked.type)}`
  }
  const strangers = flowsRead(expression).filter(name => !dependencies.includes(name))
  if (strangers.length > 0) {
    return `${at}: when reads ${strangers.map(n => `flows.${n}`).join(', ')}, which ` +
    `${strangers.length === 1 ? 'is not a dependency' : 'are not dependencies'} of the flow (only dependencies have ` +
      'finished when it is evaluated)'
  }
  return undefined
}

/** What a `when` sees of each dependency. */
export interface DependencyOutcome { phase: FlowPhase, message?: string, output?: string }

/** The value of a checked `when` over its dependencies' outcomes: true, false, or why neither. */
export function evaluateWhen (
  expression: string,
  dependencies: ReadonlyMap<string, DependencyOutcome>
): boolean | string {
  const flows = Object.fromEntries([...dependencies].map(([name, outcome]) => [name, celOutcome(outcome)]))
  try {
    const value: unknown = environment.evaluate(expression, { flows })
    return typeof value === 'boolean'
      ? value
      : 'it gave ' +
      `${typeof value === 'bigint' ? 'an int' : `a ${typeof value}`}, not true or false`
  } catch (error) {
    return firstLine(error)
  }
}

/**
 * A dependency as CEL reads it: `phase`, `message` and `output` ('' when absent), and `outputJSON`
 * when the output is JSON (`has(flows.a.outputJSON)` tells whether it is).
 */
function celOutcome (outcome: DependencyOutcome): Record<string, unknown> {
  const value: Record<string, unknown> = {
    phase: outcome.phase,
    message: outcome.message ?? '',
    output: outcome.output ?? ''
  }
  const parsed = outputJSON(outcome.output)
  if (parsed !== undefined) value.outputJSON = parsed
  return value
}

function firstLine (error: unknown): string {
  const message = error instanceof Error
    ? error.message
    : typeof (error as {
      message?: unknown
    })?.message === 'string'
      ? (error as { message: string }).message
      : String(error)
  return message.split('\n')[0] ?? message
}
