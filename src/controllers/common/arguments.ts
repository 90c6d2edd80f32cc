// Arguments `{name, value}`: a JobFlow's parameters (`spec.arguments`), a JobFlowTemplate's (whose
// values are defaults) and a reference's to a template (a flow step's `flowTemplateRef`, a
// CronJobFlow's `jobFlowTemplateRef`). Read and checked one way wherever they are given.
import { isRecord } from '../../k8s/types.js'

/** One argument: a name and a string, as Argo's parameters are. */
export interface FlowArgument { name: string, value: string }

/** The most arguments a JobFlow takes, and the longest value (each is copied into every container). */
export const MAX_ARGUMENTS = 64
export const ARGUMENT_VALUE_MAX_BYTES = 4096
const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,62}$/

/** An argument of a JobFlowTemplate: its value is the default, and one without must be given. */
export interface TemplateArgument { name: string, value?: string }

/**
 * `spec.arguments` (or another list of arguments, at `field`), each checked; problems are added
 * to `problems`. With `optionalValue` (a JobFlowTemplate's), an argument may come without a value.
 */
export function parseArguments (raw: unknown, problems: string[], field = 'spec.arguments'): FlowArgument[] {
  return parseArgumentList(raw, problems, field, false) as FlowArgument[]
}

/** A JobFlowTemplate's `spec.arguments`: values are defaults, and may be left out. */
export function parseTemplateArguments (raw: unknown, problems: string[], field: string): TemplateArgument[] {
  return parseArgumentList(raw, problems, field, true)
}

function parseArgumentList (
  raw: unknown, problems: string[], field: string, optionalValue: boolean
): TemplateArgument[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) {
    problems.push(`${field} must be a list of {name, value}`)
    return []
  }
  if (raw.length > MAX_ARGUMENTS) {
    problems.push(`${field} has ${raw.length} arguments, more than ${MAX_ARGUMENTS}`)
  }
  const args: TemplateArgument[] = []
  const variables = new Map<string, string>()
  raw.slice(0, MAX_ARGUMENTS).forEach((entry, i) => {
    const at = `${field}[${i}]`
    if (!isRecord(entry) || typeof entry.name !== 'string' || !NAME.test(entry.name)) {
      problems.push(`${at}.name must be a letter or _ then letters, digits, _ or - (at most 63)`)
      return
    }
    const { name, value } = entry
    const variable = argumentEnvName(name)
    const clash = variables.get(variable)
    if (clash !== undefined) {
      problems.push(`${at}: ${JSON.stringify(name)} and ${JSON.stringify(clash)} both make ${variable}`)
      return
    }
    variables.set(variable, name)
    if (optionalValue && (value === undefined || value === null)) {
      args.push({ name })
      return
    }
    const problem = valueProblem(value)
    if (problem !== undefined) {
      problems.push(`${at}.value ${problem}`)
      return
    }
    args.push({ name, value: value as string })
  })
  return args
}

/** What is wrong with an argument's value, or undefined. */
export function valueProblem (value: unknown): string | undefined {
  if (typeof value !== 'string') {
    return `must be a string (quote numbers and booleans), not ${JSON.stringify(value) ?? 'nothing'}`
  }
  const bytes = Buffer.byteLength(value)
  if (bytes > ARGUMENT_VALUE_MAX_BYTES) {
    return `is ${bytes.toLocaleString('en-US')} bytes, more than ${ARGUMENT_VALUE_MAX_BYTES}`
  }
  return undefined
}

/** The variable of an argument: `release-tag` → `JOBHOOKS_ARG_RELEASE_TAG`. */
export function argumentEnvName (name: string): string {
  return `JOBHOOKS_ARG_${name.toUpperCase().replaceAll('-', '_')}`
}

/**
 * A template's arguments with a reference's values: each given or defaulted, none unknown. `at`
 * names the reference in problems and `via` the field its arguments are given in.
 */
export function resolveArguments (
  given: readonly FlowArgument[],
  declared: readonly TemplateArgument[],
  at: string,
  problems: string[],
  via = 'flowTemplateRef.arguments'
): FlowArgument[] {
  const names = new Set(declared.map(a => a.name))
  const unknown = given.filter(a => !names.has(a.name)).map(a => a.name)
  if (unknown.length > 0) {
    const has = declared.length > 0 ? `its arguments: ${[...names].join(', ')}` : 'it takes none'
    problems.push(`${at} has no argument ${unknown.join(', ')} (${has})`)
  }
  const args: FlowArgument[] = []
  for (const arg of declared) {
    const value = given.find(a => a.name === arg.name)?.value ?? arg.value
    if (value === undefined) problems.push(`${at} needs argument ${arg.name}: give it in ${via}`)
    else args.push({ name: arg.name, value })
  }
  return args
}
