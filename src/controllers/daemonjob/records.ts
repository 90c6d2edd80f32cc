// The per-node outcomes of a DaemonJob and their memory in its status (law 6): the names of the
// nodes whose Job succeeded (`status.succeededNodes`) and a record per node whose Job failed
// (`status.failedNodes`). A finished Job that disappears is known from these and never re-runs.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { timestamp } from '../../k8s/time.js'
import { jobFailureMessage, jobFinishTime, jobOutcome } from '../../k8s/jobs.js'
import { queueHolding } from '../../k8s/kueue.js'
import { nodeJobName, nodeOfJob } from './job.js'

/** `Queued`: the node's Job waits for Kueue to admit it. */
export type NodePhase = 'Queued' | 'Running' | 'Succeeded' | 'Failed'

export interface NodeRecord {
  /** The node's name. */
  name: string
  jobName: string
  phase: NodePhase
  message?: string
  completionTime?: string
}

/** What `status.failedNodes` holds for a node. */
export interface FailedNode {
  name: string
  jobName: string
  message: string
  completionTime?: string
}

/** The settled outcomes of the previous status, by node name; malformed entries are ignored. */
export function readRecords (status: Record<string, unknown>, daemonJob: string): Map<string, NodeRecord> {
  const memory = new Map<string, NodeRecord>()
  if (Array.isArray(status.succeededNodes)) {
    for (const name of status.succeededNodes) {
      if (typeof name === 'string') {
        memory.set(
          name,
          { name, jobName: nodeJobName(daemonJob, name), phase: 'Succeeded' }
        )
      }
    }
  }
  if (Array.isArray(status.failedNodes)) {
    for (const entry of status.failedNodes) {
      if (!isRecord(entry) || typeof entry.name !== 'string') continue
      memory.set(entry.name, {
        name: entry.name,
        jobName: typeof entry.jobName === 'string' ? entry.jobName : nodeJobName(daemonJob, entry.name),
        phase: 'Failed',
        message: typeof entry.message === 'string' ? entry.message : 'the Job failed',
        ...(typeof entry.completionTime === 'string' ? { completionTime: entry.completionTime } : {})
      })
    }
  }
  return memory
}

/**
 * Every node's record: what its observed Job says, or what we remember of a Job that finished
 * and is gone. A remembered outcome is final; an unfinished Job that is gone has no record.
 */
export function observeNodes (jobs: KubeObject[], memory: Map<string, NodeRecord>, now: Date): Map<string, NodeRecord> {
  // The records in observation order, then every remembered one (a node with a Job and a memory
  // has that same remembered record twice), sorted by node name into the one map returned.
  const observed: NodeRecord[] = []
  for (const job of jobs) {
    const node = nodeOfJob(job) ?? job.metadata.name
    observed.push(memory.get(node) ?? recordFromJob(node, job, now))
  }
  for (const record of memory.values()) observed.push(record)
  // Stable: of two records for one node (two Jobs), the later one is set last and wins.
  observed.sort(byNodeName)
  const records = new Map<string, NodeRecord>()
  for (const record of observed) records.set(record.name, record)
  return records
}

function byNodeName (a: NodeRecord, b: NodeRecord): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

function recordFromJob (node: string, job: KubeObject, now: Date): NodeRecord {
  const outcome = jobOutcome(job)
  if (outcome === undefined) {
    return { name: node, jobName: job.metadata.name, phase: queueHolding(job) !== undefined ? 'Queued' : 'Running' }
  }
  if (outcome === 'Succeeded') return { name: node, jobName: job.metadata.name, phase: 'Succeeded' }
  return {
    name: node,
    jobName: job.metadata.name,
    phase: 'Failed',
    message: jobFailureMessage(job),
    completionTime: jobFinishTime(job) ?? timestamp(now)
  }
}

export interface Counts {
  desired: number
  active: number
  /** Jobs waiting for Kueue to admit them: not running, not finished either. */
  queued: number
  succeeded: number
  failed: number
}

/** The counts of the status: `creating` Jobs are asked for now and count as active. */
export function countNodes (records: Map<string, NodeRecord>, creating: number): Counts {
  const counts: Counts = { desired: records.size + creating, active: creating, queued: 0, succeeded: 0, failed: 0 }
  for (const record of records.values()) {
    if (record.phase === 'Running') counts.active++
    else if (record.phase === 'Queued') counts.queued++
    else if (record.phase === 'Succeeded') counts.succeeded++
    else counts.failed++
  }
  return counts
}

/**
 * The counts as the status writes them: `queued` only when a Job waits, so that a version that
 * does not know the field (0.2.0) and this one write the same status (law 5).
 */
export function countsStatus ({ desired, active, queued, succeeded, failed }: Counts): Partial<Counts> {
  return { desired, active, ...(queued > 0 ? { queued } : {}), succeeded, failed }
}

/** A node whose Job has no outcome yet: running, or waiting in Kueue's queue. */
export function isUnfinished (record: NodeRecord | undefined): boolean {
  return record?.phase === 'Running' || record?.phase === 'Queued'
}

/** The memory written back: succeeded node names and failed node records, sorted by node name. */
export function memoryStatus (records: Map<string, NodeRecord>): {
  succeededNodes: string[],
  failedNodes: FailedNode[]
} {
  const succeededNodes: string[] = []
  const failedNodes: FailedNode[] = []
  for (const record of records.values()) {
    if (record.phase === 'Succeeded') succeededNodes.push(record.name)
    if (record.phase === 'Failed') {
      failedNodes.push({
        name: record.name,
        jobName: record.jobName,
        message: record.message ?? 'the Job failed',
        ...(record.completionTime !== undefined ? { completionTime: record.completionTime } : {})
      })
    }
  }
  return { succeededNodes, failedNodes }
}
