// The `Valid` condition: where every kind reports a spec it cannot act on (law 2), and the one
// answer every kind gives to such a spec.
import type { SyncAnswer } from '../../protocol/hooks.js'
import type { Condition, KubeObject } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'

export const VALID = 'Valid'

/** `Valid` True, or False with every problem in the message. */
export function validityConditions (
  previous: unknown,
  problems: string[],
  now: Date,
  reason = 'InvalidSpec'
): Condition[] {
  return setCondition(previous, problems.length === 0
    ? { type: VALID, status: 'True', reason: 'SpecValid', message: 'the spec is valid' }
    : { type: VALID, status: 'False', reason, message: problems.join('; ') }, now)
}

/** What a kind keeps when it cannot act on its spec. */
export interface InvalidSpec {
  /**
   * The status to answer but for its conditions: the previous one, its phase `Invalid` unless it
   * had finished, and what the kind remembers brought up to date with what it observes.
   */
  status: Record<string, unknown>
  /** Every observed child, kept as the kind keeps them; none for a kind without children. */
  children: KubeObject[]
  problems: string[]
}

/**
 * The answer to a spec a kind cannot act on (law 2), the same for every kind: no effects, every
 * observed child kept, and every problem in the `Valid` condition of the status kept.
 */
export function invalidSpecAnswer (previous: Record<string, unknown>, kept: InvalidSpec, now: Date): SyncAnswer {
  const status = { ...kept.status, conditions: validityConditions(previous.conditions, kept.problems, now) }
  return { response: { status, children: kept.children }, effects: [] }
}
