// A parent that deletes itself some time after it finished (its TTL): the Delete effect once the
// time has come, or when to wake the hook for it. The time is read from the status the sync
// writes, so a parent that finishes with a TTL of 0 goes in the same sync. The executor lets a
// Delete act only on the parent itself (src/effects/scope.ts).
import type { Effect } from '../../effects/types.js'
import { refTo } from '../../effects/types.js'
import type { KubeObject } from '../../k8s/types.js'

export interface ParentTtl {
  effects: Effect[]
  /** Seconds until the TTL falls due, when it has not yet. */
  wakeSeconds?: number
}

export function parentTtl (
  parent: KubeObject,
  finishedAt: string | undefined,
  ttlSeconds: number | undefined,
  now: Date
): ParentTtl {
  if (ttlSeconds === undefined || finishedAt === undefined) return { effects: [] }
  const dueAt = Date.parse(finishedAt) + ttlSeconds * 1000
  if (Number.isNaN(dueAt)) return { effects: [] }
  if (dueAt > now.getTime()) return { effects: [], wakeSeconds: Math.max(1, Math.ceil((dueAt - now.getTime()) / 1000)) }
  const self = refTo(parent)
  // Already going: Metacontroller is finalizing or the garbage collector is at work.
  if (self === undefined || parent.metadata.deletionTimestamp !== undefined) return { effects: [] }
  return { effects: [{ type: 'Delete', target: self }] }
}
