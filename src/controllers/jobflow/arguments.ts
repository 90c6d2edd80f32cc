// `spec.arguments[]` `{name, value}`: a JobFlow's parameters, as Argo's `spec.arguments.parameters`
// (`{{workflow.parameters.x}}`). Every container of every step gets `JOBHOOKS_ARG_<NAME>` (for
// Kubernetes' `$(VAR)` expansion, escaped so the container sees the value as written), and a
// `when` reads `args.<name>` (or `args['with-dash']`).
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import { isRecord } from '../../k8s/types.js'
import { literalEnvVar } from '../../k8s/expansion.js'
import { keysRead } from '../common/cel.js'

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

/** The arguments as every container's variables. */
export function argumentEnv (args: readonly FlowArgument[]): EnvVar[] {
  return args.map(arg => literalEnvVar(argumentEnvName(arg.name), arg.value))
}

/** The arguments as a `when` reads them: `args.name`. */
export function argumentValues (args: readonly FlowArgument[]): Record<string, string> {
  return Object.fromEntries(args.map(arg => [arg.name, arg.value]))
}

/** The argument names an expression reads: `args.name` and `args['name-with-dashes']`. */
export function argumentsRead (expression: string): string[] {
  return keysRead(expression, 'args')
}

/** The flows whose `when` reads an argument the spec does not give, as problems. */
export function unknownArguments (
  flows: ReadonlyArray<{ name: string, when?: string }>,
  args: readonly FlowArgument[]
): string[] {
  const given = new Set(args.map(arg => arg.name))
  return flows.flatMap(flow => {
    const missing = flow.when === undefined ? [] : argumentsRead(flow.when).filter(name => !given.has(name))
    return missing.length === 0
      ? []
      : [`flow ${JSON.stringify(flow.name)}: when reads ${missing.map(n => `args.${n}`).join(', ')}, ` +
        'which spec.arguments does not give']
  })
}
