// `spec.arguments[]` `{name, value}`: a JobFlow's parameters, as Argo's `spec.arguments.parameters`
// (`{{workflow.parameters.x}}`). Every container of every step gets `JOBHOOKS_ARG_<NAME>` (for
// Kubernetes' `$(VAR)` expansion, escaped so the container sees the value as written), and a
// `when` reads `args.<name>` (or `args['with-dash']`).
import type { EnvVar } from 'kubernetes-types/core/v1.js'
import { literalEnvVar } from '../../k8s/expansion.js'
import { keysRead } from '../common/cel.js'
import { argumentEnvName, type FlowArgument } from '../common/arguments.js'

export {
  ARGUMENT_VALUE_MAX_BYTES, MAX_ARGUMENTS, argumentEnvName, parseArguments, parseTemplateArguments, valueProblem,
  type FlowArgument, type TemplateArgument
} from '../common/arguments.js'

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
