// The registry that maps an OperationJob's `spec.action` to an action (types.ts says what one is).
// It is built from a list of plugins and checks them whole, when the service starts: a bad name,
// a missing function or two actions claiming one spec field stop the start, not a sync.
import { withPodOpsLifecycle } from './lifecycle.js'
import type { ActionPlugin, RegisteredAction } from './types.js'
import { mergeShapes, POD_READS, type Shape } from '../k8s/reads.js'

export type * from './types.js'

const ACTION_NAME = /^[A-Za-z][A-Za-z0-9]*$/
const FIELD_NAME = /^[a-z][A-Za-z0-9]*$/

/** The OperationJob's own spec fields: no action may claim one for itself. */
export const OPERATIONJOB_SPEC_FIELDS: readonly string[] = [
  'action',
  'targets',
  'partition',
  'operationDelaySeconds',
  'activeDeadlineSeconds',
  'TTLSecondsAfterFinished',
  'scripts'
]

/** Why `plugin` cannot be registered, or undefined. */
function pluginProblem (plugin: ActionPlugin): string | undefined {
  const { name, handler, specField } = plugin
  if (!ACTION_NAME.test(name)) {
    return `action name ${JSON.stringify(name)}: letters and digits, starting with a letter ` +
      '(it is what spec.action says)'
  }
  for (const fn of ['operate', 'progress', 'release'] as const) {
    if (typeof handler?.[fn] !== 'function') return `action ${name}: the handler has no ${fn} function`
  }
  if (specField === undefined) return undefined
  if (!FIELD_NAME.test(specField.name)) {
    return `action ${name}: spec field ${JSON.stringify(specField.name)} must be a lower camel case name`
  }
  if (OPERATIONJOB_SPEC_FIELDS.includes(specField.name)) {
    return `action ${name}: spec.${specField.name} is the OperationJob's own field`
  }
  if (specField.schema?.type !== 'object') {
    return `action ${name}: the schema of spec.${specField.name} must be an object schema`
  }
  return undefined
}

/** The actions the OperationJob hooks know. The service builds one from src/actions/index.ts; tests build their own. */
export class ActionRegistry {
  private readonly actions = new Map<string, RegisteredAction>()

  /** Throws on the first plugin that cannot be registered, or a name or spec field used twice. */
  constructor (plugins: readonly ActionPlugin[]) {
    const fields = new Map<string, string>()
    for (const plugin of plugins) {
      const problem = pluginProblem(plugin)
      if (problem !== undefined) throw new Error(problem)
      if (this.actions.has(plugin.name)) throw new Error(`action ${plugin.name} is listed twice`)
      const field = plugin.specField?.name
      if (field !== undefined) {
        const owner = fields.get(field)
        if (owner !== undefined) throw new Error(`actions ${owner} and ${plugin.name} both claim spec.${field}`)
        fields.set(field, plugin.name)
      }
      const podOpsLifecycle = plugin.podOpsLifecycle === true
      this.actions.set(plugin.name, {
        name: plugin.name,
        handler: podOpsLifecycle ? withPodOpsLifecycle(plugin.handler) : plugin.handler,
        podOpsLifecycle,
        ...(plugin.specField !== undefined ? { specField: plugin.specField } : {}),
        ...(plugin.podReads !== undefined ? { podReads: plugin.podReads } : {})
      })
    }
  }

  get (name: string): RegisteredAction | undefined {
    return this.actions.get(name)
  }

  /** The registered action names, sorted. */
  names (): string[] {
    return [...this.actions.keys()].sort()
  }

  /** The registered actions, by name. */
  list (): RegisteredAction[] {
    return this.names().map(name => this.actions.get(name) as RegisteredAction)
  }

  /** What the OperationJob hooks build of a related Pod: what they read, and what every action reads. */
  podReads (): Shape {
    return this.list().reduce<Shape>((shape, action) => mergeShapes(shape, action.podReads ?? false), POD_READS)
  }
}
