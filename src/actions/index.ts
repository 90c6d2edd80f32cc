// The action plugins the service ships, registered once in the service's registry.
import { defaultActions } from './registry.js'
import { EXEC_ACTION, execAction } from './exec.js'

export * from './registry.js'
export { EXEC_ACTION, execAction } from './exec.js'

if (defaultActions.get(EXEC_ACTION) === undefined) defaultActions.register(EXEC_ACTION, execAction)
