// Running a kind's sync or finalize hook with the safety net of law 2: an error in our own code
// answers with every observed child kept and the problem in status, never with a deletion; kept
// as last applied where the kind lets Metacontroller update them, so that nothing changes either.
// Every answer carries forward the status fields the kind does not know (law 5, another version's).
import {
  keptAsApplied, type HookContext, type KindHooks, type Outcome, type SyncRequest, type SyncResponse
} from '../protocol/hooks.js'
import type { Effect } from '../effects/types.js'
import { isRecord } from '../k8s/types.js'
import { findCondition } from '../k8s/conditions.js'
import { keepAllObserved } from '../k8s/objects.js'
import { validityConditions, VALID } from './common/validity.js'
import { withUnknownStatusFields } from './common/status-fields.js'

export interface RunResult {
  response: SyncResponse
  /** Effects the hook asks for; none after an error (doubt never acts). */
  effects: Effect[]
  outcome: Outcome
  error?: unknown
}

export function runSyncHook (
  hooks: KindHooks,
  hook: 'sync' | 'finalize',
  request: SyncRequest,
  context: HookContext
): RunResult {
  const fn = hook === 'sync' ? hooks.sync : hooks.finalize
  try {
    if (fn === undefined) throw new Error(`${hooks.kind} has no ${hook} hook`)
    const { response: answered, effects } = fn(request, context)
    const status = withUnknownStatusFields(answered.status, request.parent.status, hooks.statusFields)
    const response = status === answered.status ? answered : { ...answered, status }
    const valid = findCondition(response.status.conditions, VALID)
    return { response, effects, outcome: valid?.status === 'False' ? 'invalid' : 'ok' }
  } catch (error) {
    const previous = isRecord(request.parent.status) ? request.parent.status : {}
    const message = `internal error in the ${hooks.kind} ${hook} hook, nothing was changed: ` +
      `${error instanceof Error ? error.message : String(error)}`
    const response: SyncResponse = {
      status: {
        ...previous,
        [hooks.phaseField]: 'Invalid',
        conditions: validityConditions(previous.conditions, [message], context.now, 'InternalError')
      },
      children: keepAllObserved(request.children, keptAsApplied(hooks))
    }
    if (hook === 'finalize') response.finalized = false
    return { response, effects: [], outcome: 'error', error }
  }
}
