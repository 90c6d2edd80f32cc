// Folding what became of the effects into the answer Metacontroller receives.
import type { SyncResponse } from './hooks.js'
import { setCondition } from '../k8s/conditions.js'
import { describeEffect, isUnapplied, type EffectOutcome } from '../effects/types.js'

export const EFFECTS_APPLIED = 'EffectsApplied'
/** How soon to try again when effects are still owed. */
export const EFFECT_RETRY_SECONDS = 5

/**
 * Condition `EffectsApplied` says whether every effect of this sync was applied (failures and
 * refusals named in the message, or `DryRun` when the service only recorded them), and a failure
 * asks for a short resync: the hook recomputes what is still owed from the cluster then. A sync
 * without effects leaves the condition as the hook carried it.
 */
export function withEffectOutcomes (response: SyncResponse, outcomes: EffectOutcome[], now: Date): SyncResponse {
  if (outcomes.length === 0) return response
  const conditions = setCondition(response.status.conditions, effectsCondition(outcomes), now)
  const answer: SyncResponse = { ...response, status: { ...response.status, conditions } }
  if (outcomes.some(o => o.result === 'failed')) {
    answer.resyncAfterSeconds = Math.min(response.resyncAfterSeconds ?? EFFECT_RETRY_SECONDS, EFFECT_RETRY_SECONDS)
  }
  return answer
}

function effectsCondition (
  outcomes: EffectOutcome[]
): { type: string, status: 'True' | 'False', reason: string, message: string } {
  const unapplied = outcomes.filter(isUnapplied)
  if (unapplied.length > 0) {
    return {
      type: EFFECTS_APPLIED,
      status: 'False',
      reason: unapplied.some(o => o.result === 'failed') ? 'EffectFailed' : 'EffectRefused',
      message: unapplied.map(o => `${describeEffect(o.effect)}: ${o.message ?? o.result}`).sort().join('; ')
    }
  }
  const recorded = outcomes.filter(o => o.result === 'dry_run').length
  if (recorded > 0) {
    const effects = recorded === 1 ? '1 effect was' : `${recorded} effects were`
    const message = `${effects} recorded and not applied: the service has no cluster credentials (dry-run)`
    return { type: EFFECTS_APPLIED, status: 'False', reason: 'DryRun', message }
  }
  return { type: EFFECTS_APPLIED, status: 'True', reason: 'Applied', message: 'every effect was applied' }
}
