// The registry that maps an OperationJob's `spec.action` to an action (types.ts says what one is).
import { withPodOpsLifecycle } from './lifecycle.js'
import type { ActionHandler, ActionOptions, RegisteredAction } from './types.js'

export type * from './types.js'

const ACTION_NAME = /^[A-Za-z][A-Za-z0-9]*$/

/** A registry of actions. The service uses one (`defaultActions`); tests may build their own. */
export class ActionRegistry {
  private readonly actions = new Map<string, RegisteredAction>()

  register (name: string, handler: ActionHandler, options: ActionOptions = {}): void {
    if (!ACTION_NAME.test(name)) throw new Error(`action name ${JSON.stringify(name)}: letters and digits, starting with a letter (it is what spec.action says)`)
    if (this.actions.has(name)) throw new Error(`action ${name} is already registered`)
    for (const fn of ['operate', 'progress', 'release'] as const) {
      if (typeof handler[fn] !== 'function') throw new Error(`action ${name}: the handler has no ${fn} function`)
    }
    const podOpsLifecycle = options.podOpsLifecycle === true
    this.actions.set(name, { name, handler: podOpsLifecycle ? withPodOpsLifecycle(handler) : handler, podOpsLifecycle })
  }

  get (name: string): RegisteredAction | undefined {
    return this.actions.get(name)
  }

  /** The registered action names, sorted. */
  names (): string[] {
    return [...this.actions.keys()].sort()
  }
}

/** The registry the OperationJob hooks read `spec.action` from. */
export const defaultActions = new ActionRegistry()

/**
 * Registers an action plugin in the service's registry, before the server starts. `name` is what
 * `spec.action` says. Throws on a duplicate name.
 */
export function registerAction (name: string, handler: ActionHandler, options: ActionOptions = {}): void {
  defaultActions.register(name, handler, options)
}
