import type { Condition } from './types.js'
import { isRecord } from './types.js'
import { timestamp } from './time.js'

/** The condition of `type` in a `status.conditions` list, if any. */
export function findCondition (conditions: unknown, type: string): Condition | undefined {
  if (!Array.isArray(conditions)) return undefined
  // A loop, not find with a closure: it runs for every Pod of a sync, several times.
  for (const c of conditions) if (isRecord(c) && c.type === type) return c as Condition
  return undefined
}

/** True when the object's status carries condition `type` with status "True". */
export function hasTrueCondition (status: unknown, type: string): boolean {
  if (!isRecord(status)) return false
  return findCondition(status.conditions, type)?.status === 'True'
}

/**
 * Returns `previous` with `next` set in it. `lastTransitionTime` only moves when the status of
 * the condition changes, so a sync that changes nothing returns an identical list (law 5).
 */
export function setCondition (previous: unknown, next: Condition, now: Date): Condition[] {
  const list = Array.isArray(previous)
    ? previous.filter((c): c is Condition => isRecord(c) && typeof c.type === 'string')
    : []
  const old = list.find(c => c.type === next.type)
  const kept = old !== undefined && old.status === next.status ? old.lastTransitionTime : undefined
  const updated: Condition = { ...next, lastTransitionTime: typeof kept === 'string' ? kept : timestamp(now) }
  return old === undefined ? [...list, updated] : list.map(c => (c === old ? updated : c))
}
