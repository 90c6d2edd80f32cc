// A kind's sync hook as the tests look at it: every hook answers a SyncAnswer (the response and the
// effects); most tests look only at the response Metacontroller gets.
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../src/protocol/hooks.js'

export type SyncHook = (request: SyncRequest, context: HookContext) => SyncAnswer

/** The hook's response alone, without the effects. */
export function responseOf (hook: SyncHook): (request: SyncRequest, context: HookContext) => SyncResponse {
  return (request, context) => hook(request, context).response
}
