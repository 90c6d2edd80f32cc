// The actions the service runs: the one list. An action is registered by adding it here, and in
// no other way; the OperationJob CRD's action fields are written from this list (`npm run crds`).
import { ActionRegistry } from './registry.js'
import type { ActionPlugin } from './types.js'
import { execAction } from './exec.js'
import { labelAction } from './label.js'
import { recreateAction } from './recreate.js'
import { replaceAction } from './replace.js'

export { ActionRegistry, OPERATIONJOB_SPEC_FIELDS } from './registry.js'
export type * from './types.js'

export const ACTIONS: readonly ActionPlugin[] = [
  execAction,
  labelAction,
  recreateAction,
  replaceAction
]

/** The registry the OperationJob hooks read `spec.action` from. */
export const defaultActions = new ActionRegistry(ACTIONS)
