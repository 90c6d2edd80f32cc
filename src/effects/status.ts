// Folding what became of the effects into the answer Metacontroller receives.
import type { SyncResponse } from '../protocol/hooks.js'
import { setCondition } from '../k8s/conditions.js'
import { describeEffect, type EffectOutcome } from './types.js'

export const EFFECTS_APPLIED = 'EffectsApplied'
/** How soon to try again when effects are still owed. */
export const EFFECT_RETRY_SECONDS = 5

/**
 * Condition `EffectsApplied` says whether every effect of this sync was applied (failures named
 * in the message), and a failure asks for a short resync: the hook recomputes what is still owed
 * from the cluster then. A sync without effects leaves the condition as the hook carried it.
 */
export function withEffectOutcomes (response: SyncResponse, outcomes: EffectOutcome[], now: Date): SyncResponse {
  if (outcomes.length === 0) return response
  const failed = outcomes.filter(o => o.result === 'failed')
  const conditions = setCondition(response.status.conditions, failed.length === 0
    ? { type: EFFECTS_APPLIED, status: 'True', reason: 'Applied', message: 'every effect was applied' }
    : { type: EFFECTS_APPLIED, status: 'False', reason: 'EffectFailed', message: failed.map(o => `${describeEffect(o.effect)}: ${o.message ?? 'failed'}`).sort().join('; ') }, now)
  const answer: SyncResponse = { ...response, status: { ...response.status, conditions } }
  if (failed.length > 0) answer.resyncAfterSeconds = Math.min(response.resyncAfterSeconds ?? EFFECT_RETRY_SECONDS, EFFECT_RETRY_SECONDS)
  return answer
}
