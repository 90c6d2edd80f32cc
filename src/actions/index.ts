// The action plugins the service ships, registered once in the service's registry.
import { defaultActions } from './registry.js'
import { EXEC_ACTION, execAction } from './exec.js'
import { REPLACE_ACTION, replaceAction } from './replace.js'
import { RECREATE_ACTION, recreateAction } from './recreate.js'

export * from './registry.js'
export { EXEC_ACTION, execAction } from './exec.js'
export { REPLACE_ACTION, replaceAction } from './replace.js'
export { RECREATE_ACTION, recreateAction } from './recreate.js'

// Exec and Replace operate without a lifecycle (an ephemeral container does not disturb the
// Pod's traffic; a CollaSet keeps capacity by bringing the new Pod up first). Recreate takes the
// Pod away, so its traffic goes first.
if (defaultActions.get(EXEC_ACTION) === undefined) defaultActions.register(EXEC_ACTION, execAction)
if (defaultActions.get(REPLACE_ACTION) === undefined) defaultActions.register(REPLACE_ACTION, replaceAction)
if (defaultActions.get(RECREATE_ACTION) === undefined) defaultActions.register(RECREATE_ACTION, recreateAction, { podOpsLifecycle: true })
