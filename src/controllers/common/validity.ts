// The `Valid` condition: where every kind reports a spec it cannot act on (law 2).
import type { Condition } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'

export const VALID = 'Valid'

/** `Valid` True, or False with every problem in the message. */
export function validityConditions (previous: unknown, problems: string[], now: Date, reason = 'InvalidSpec'): Condition[] {
  return setCondition(previous, problems.length === 0
    ? { type: VALID, status: 'True', reason: 'SpecValid', message: 'the spec is valid' }
    : { type: VALID, status: 'False', reason, message: problems.join('; ') }, now)
}
