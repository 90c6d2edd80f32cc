// The one way a test reads a condition: from any status (a hook's answer, a simulated object's),
// typed, so no test declares its own finder or casts the list to `any`.
import { findCondition } from '../../src/k8s/conditions.js'
import type { Condition } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'

/** The condition of `type` in `status.conditions`, or undefined when the status has none. */
export function condition (status: unknown, type: string): Condition | undefined {
  return isRecord(status) ? findCondition(status.conditions, type) : undefined
}
