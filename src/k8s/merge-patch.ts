// JSON merge patch (RFC 7386): what `kubectl patch --type merge` does. Objects merge key by key, a
// null removes a key, anything else (lists included) replaces what was there. Pure: neither the
// target nor the patch is changed.
import { isRecord } from './types.js'

export function mergePatch (target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch)
  const result: Record<string, unknown> = isRecord(target) ? structuredClone(target) : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = mergePatch(result[key], value)
  }
  return result
}
