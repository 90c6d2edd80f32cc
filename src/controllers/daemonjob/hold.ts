// Which eligible nodes get their Job now under BroadcastJob's policies (policies.ts), why the
// others wait, and what FailFast stops.
import { timestamp } from '../../k8s/time.js'
import { isUnfinished, type NodeRecord } from './records.js'
import type { FailurePolicy, Policies } from './policies.js'

/** What holds nodes' Jobs back in one sync, for the status. */
export interface Hold {
  /** Eligible nodes without a Job that do not get one now. */
  waiting: number
  /** Why, in words (`paused`, `nodeParallelism 1`, …); undefined when nothing holds them. */
  why?: string
}

/** The nodes that start now, of `candidates` (eligible, no Job yet), and what holds the rest back. */
export function startNow (
  candidates: string[],
  records: Map<string, NodeRecord>,
  policies: Policies,
  failurePolicy: FailurePolicy
): { start: string[], hold: Hold } {
  if (candidates.length === 0) return { start: [], hold: { waiting: 0 } }
  const held = (why: string): { start: string[], hold: Hold } =>
    ({ start: [], hold: { waiting: candidates.length, why } })
  const failed = firstFailed(records)
  if (failed !== undefined && failurePolicy !== 'Continue') {
    return held(`failurePolicy ${failurePolicy}: the Job of ${failed} failed` +
      (failurePolicy === 'Pause' ? ' (set failurePolicy to Continue to go on)' : ''))
  }
  if (policies.paused) return held('paused')
  if (policies.nodeParallelism === undefined) return { start: candidates, hold: { waiting: 0 } }
  // Only a limit makes the order matter: the first nodes by name start.
  const sorted = [...candidates].sort()
  const limit = parallelismLimit(policies.nodeParallelism, records.size + sorted.length)
  let running = 0
  for (const record of records.values()) if (isUnfinished(record)) running++
  const start = sorted.slice(0, Math.max(0, limit - running))
  const waiting = sorted.length - start.length
  if (waiting === 0) return { start, hold: { waiting } }
  const of = typeof policies.nodeParallelism === 'string' ? ` (${limit} of ${records.size + sorted.length} nodes)` : ''
  return { start, hold: { waiting, why: `nodeParallelism ${policies.nodeParallelism}${of}` } }
}

/** How many nodes' Jobs may run at once: the count, or the percentage of `nodes` rounded up. */
export function parallelismLimit (nodeParallelism: number | string, nodes: number): number {
  if (typeof nodeParallelism === 'number') return nodeParallelism
  return Math.max(1, Math.ceil(Number(nodeParallelism.slice(0, -1)) * nodes / 100))
}

/** The first node, by name, whose Job failed. */
export function firstFailed (records: Map<string, NodeRecord>): string | undefined {
  for (const record of records.values()) if (record.phase === 'Failed') return record.name
  return undefined
}

/**
 * Under FailFast, once a node's Job failed: every unfinished Job is stopped (its Job is deleted,
 * as BroadcastJob deletes its active pods) and its node recorded as failed, saying why.
 */
export function stopUnfinished (records: Map<string, NodeRecord>, failed: string, now: Date): Map<string, NodeRecord> {
  const stopped = new Map<string, NodeRecord>()
  for (const [name, record] of records) {
    stopped.set(name, isUnfinished(record)
      ? {
          name,
          jobName: record.jobName,
          phase: 'Failed',
          message: `Stopped: failurePolicy FailFast, the Job of ${failed} failed`,
          completionTime: timestamp(now)
        }
      : record)
  }
  return stopped
}

/** The message of what holds Jobs back: `paused: 3 nodes waiting`. */
export function holdMessage (hold: Hold): string | undefined {
  if (hold.why === undefined || hold.waiting === 0) return undefined
  return `${hold.why}: ${hold.waiting} ${hold.waiting === 1 ? 'node' : 'nodes'} waiting for their Job`
}
