// Two versions answering the same parents (a rolling update) must agree on the status, or each
// answer undoes the other's and Metacontroller syncs again and again (law 5; docs/architecture.md,
// "Versions side by side"). The half of the rule a newer version cannot keep for an older one is
// kept here: the top-level status fields a kind does not know are another version's, and are carried
// forward unchanged, as the API server keeps the fields its schema knows and we do not.
import { isRecord } from '../../k8s/types.js'

/**
 * `status` with every top-level field of the observed status that `known` does not name and the
 * answer does not hold, carried forward unchanged after the answer's own. A field the kind knows
 * but left out this time (a count at zero, a completion time after a rerun) stays out.
 */
export function withUnknownStatusFields (
  status: Record<string, unknown>,
  observed: unknown,
  known: readonly string[]
): Record<string, unknown> {
  if (!isRecord(observed)) return status
  let carried: Record<string, unknown> | undefined
  for (const [field, value] of Object.entries(observed)) {
    if (known.includes(field) || Object.hasOwn(status, field)) continue
    carried ??= { ...status }
    carried[field] = value
  }
  return carried ?? status
}
