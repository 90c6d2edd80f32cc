// How far a sync's effects may reach: a hook request is an instruction about one parent, so its
// effects act only inside that parent's namespace, and a Delete only on the parent itself (the
// TTLs). Defence in depth behind the credential check (src/trust/): a stolen token or a bug in a
// hook still cannot reach into another namespace.
import type { Effect, EffectOutcome, ObjectRef } from './types.js'

/** Why `effect` is out of `parent`'s reach, or undefined when it is within. */
export function outOfReach (parent: ObjectRef | undefined, effect: Effect): string | undefined {
  if (parent === undefined) return 'the parent in the request has no UID'
  if (parent.namespace === undefined || parent.namespace === '') {
    return `the parent ${parent.kind} ${parent.name} has no namespace`
  }
  if (effect.target.namespace !== parent.namespace) return `outside the parent's namespace ${parent.namespace}`
  if (effect.type === 'Delete' && (effect.target.uid !== parent.uid || effect.target.kind !== parent.kind)) {
    return 'a Delete acts only on the parent itself'
  }
  return undefined
}

/** Splits `effects` into those within reach and the refused outcomes of the others. */
export function withinReach (
  parent: ObjectRef | undefined,
  effects: Effect[]
): { inReach: Effect[]; refused: Map<Effect, EffectOutcome> } {
  const inReach: Effect[] = []
  const refused = new Map<Effect, EffectOutcome>()
  for (const effect of effects) {
    const why = outOfReach(parent, effect)
    if (why === undefined) inReach.push(effect)
    else refused.set(effect, { effect, result: 'refused', message: why })
  }
  return { inReach, refused }
}
