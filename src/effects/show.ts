// `?effects=show`: the effects of a hook call as the executor sends them, for a person with a
// fixture who wants to see what a sync would do.
import { requestFor } from './executor.js'
import { describeEffect, type EffectOutcome } from './types.js'

export interface ShownEffect {
  effect: string
  result: string
  message?: string
  method?: string
  path?: string
  body?: unknown
}

export function showEffects (outcomes: readonly EffectOutcome[]): ShownEffect[] {
  return outcomes.map(({ effect, result, message }) => {
    const shown: ShownEffect = { effect: describeEffect(effect), result, ...(message !== undefined ? { message } : {}) }
    try {
      const { method, path, body } = requestFor(effect)
      return { ...shown, method, path, body }
    } catch {
      return shown // No request can be made of it; its message says why.
    }
  })
}
