// `spec.activeDeadlineSeconds`: a deadline for the whole flow, as Argo's workflow
// activeDeadlineSeconds. It counts from the flow's start (`status.startTime`, or its creation
// before anything ran), or from the rerun that started it again. Each new Job gets the time left
// as its own `activeDeadlineSeconds` (less if its own is less), so Kubernetes itself stops a Job
// still running at the flow's deadline, reason DeadlineExceeded, its pods kept for their logs.
// Past the deadline no step starts (each record `Skipped`, saying so); a Job still unfinished a
// grace period after it (one Kueue held back, whose clock started late) is deleted, its record
// `Failed`; and the flow is `Failed`.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { timestamp } from '../../k8s/time.js'
import type { JobRecord } from './records.js'

/** How long after the deadline a Job Kubernetes has not stopped is deleted. */
export const DEADLINE_GRACE_SECONDS = 10

/** The flow's deadline: when, and the spec's seconds (for messages). */
export interface FlowDeadline { atMs: number, seconds: number }

/** The deadline of a flow whose spec sets one, from its start or its last rerun. */
export function flowDeadline (
  seconds: number | undefined,
  parent: KubeObject,
  previous: Record<string, unknown>
): FlowDeadline | undefined {
  if (seconds === undefined) return undefined
  const started = stringOrUndefined(previous.startTime) ?? parent.metadata.creationTimestamp
  const rerun = isRecord(previous.rerun) ? stringOrUndefined(previous.rerun.time) : undefined
  const from = Math.max(...[started, rerun].map(t => (t === undefined ? NaN : Date.parse(t))).filter(Number.isFinite))
  return Number.isFinite(from) ? { atMs: from + seconds * 1000, seconds } : undefined
}

/** Whether the flow has a deadline and it has passed. */
export function isPast (deadline: FlowDeadline | undefined, now: Date): deadline is FlowDeadline {
  return deadline !== undefined && now.getTime() >= deadline.atMs
}

/** Whole seconds left before the deadline (0 once it passed). */
export function secondsLeft (deadline: FlowDeadline, now: Date): number {
  return Math.max(0, Math.ceil((deadline.atMs - now.getTime()) / 1000))
}

/** A new Job's own deadline: the time the flow has left, or its template's when that is less. */
export function jobDeadlineSeconds (own: number | undefined, deadline: FlowDeadline, now: Date): number {
  const left = Math.max(1, secondsLeft(deadline, now))
  return own === undefined ? left : Math.min(own, left)
}

/** The message of a step the deadline kept from starting. */
export function notStartedMessage (deadline: FlowDeadline): string {
  return `${DEADLINE_NOT_STARTED} (${deadline.seconds} s)`
}

export const DEADLINE_NOT_STARTED = 'not started: the JobFlow passed its activeDeadlineSeconds'
export const DEADLINE_STOPPED = 'DeadlineExceeded: the JobFlow passed its activeDeadlineSeconds'

/**
 * The record of a Job still unfinished `DEADLINE_GRACE_SECONDS` after the deadline: Failed, its Job
 * deleted; undefined while there is time, or for a record that finished.
 */
export function overdue (record: JobRecord, deadline: FlowDeadline, now: Date): JobRecord | undefined {
  if (record.phase !== 'Running' && record.phase !== 'Queued') return undefined
  if (now.getTime() < deadline.atMs + DEADLINE_GRACE_SECONDS * 1000) return undefined
  const message = `${DEADLINE_STOPPED} (${deadline.seconds} s); its Job was deleted`
  return { ...record, phase: 'Failed', message, completionTime: timestamp(now) }
}

/** Whether a record is one the deadline ended: not started past it, or stopped. */
export function endedByDeadline (record: JobRecord): boolean {
  const message = record.message ?? ''
  return message.startsWith(DEADLINE_NOT_STARTED) || message.startsWith(DEADLINE_STOPPED) ||
    (record.phase === 'Failed' && message.startsWith('DeadlineExceeded:'))
}

/** When the next sync is due for the deadline: at it, then at its grace's end while a Job runs on. */
export function deadlineWake (
  deadline: FlowDeadline | undefined,
  now: Date,
  underway: boolean
): number | undefined {
  if (deadline === undefined) return undefined
  const nowMs = now.getTime()
  if (nowMs < deadline.atMs) return Math.max(1, Math.ceil((deadline.atMs - nowMs) / 1000))
  const graceEnd = deadline.atMs + DEADLINE_GRACE_SECONDS * 1000
  return underway && nowMs < graceEnd ? Math.max(1, Math.ceil((graceEnd - nowMs) / 1000)) : undefined
}

/** The records of Jobs still unfinished a grace period past the deadline, as they end: Failed. */
export function overdueRecords (
  records: ReadonlyMap<string, JobRecord>,
  deadline: FlowDeadline,
  now: Date
): Map<string, JobRecord> {
  const stopped = new Map<string, JobRecord>()
  for (const [name, record] of records) {
    const ended = overdue(record, deadline, now)
    if (ended !== undefined) stopped.set(name, ended)
  }
  return stopped
}
