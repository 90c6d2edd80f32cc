// What is owed: parents to reconcile (a workqueue, one entry per parent) and clock events in time
// order (Jobs starting and finishing, resyncs, the kubelets' and controllers' timers).
import { refKey, refOf, type ObjectRef } from './objects.js'
import type { KubeObject } from '../k8s/types.js'
import type { Clock } from './clock.js'
import type { FailureReason } from './jobs.js'

/** A Job's outcome to write: the verdict first, then (`final`) the terminal condition. */
interface JobFinish { result: 'succeed' | 'fail', reason: FailureReason, final: boolean }

export type Scheduled =
  | { type: 'job-start', at: number, seq: number, ref: ObjectRef, uid: string }
  | (JobFinish & { type: 'job-finish', at: number, seq: number, ref: ObjectRef, uid: string })
  | { type: 'job-suspend', at: number, seq: number, ref: ObjectRef, uid: string }
  | { type: 'resync', at: number, seq: number, ref: ObjectRef, uid: string, retry: boolean }
  | { type: 'call', at: number, seq: number, ref: ObjectRef, uid: string, what: string, run: () => void }

/** A scheduled event before it gets its sequence number. */
export type Unscheduled = Scheduled extends infer S
  ? S extends Scheduled ? Omit<S, 'seq'> & { seq?: number } : never
  : never

export class Scheduler {
  /** The parents to reconcile, in the order they became dirty. */
  readonly dirty = new Map<string, ObjectRef>()
  private queue: Scheduled[] = []
  private seq = 0

  constructor (private readonly clock: Clock) {}

  /** Whether anything is owed: a parent to reconcile or a clock event. */
  isQuiet (): boolean {
    return this.dirty.size === 0 && this.queue.length === 0
  }

  enqueue (ref: ObjectRef): void {
    const key = refKey(ref)
    if (!this.dirty.has(key)) this.dirty.set(key, ref)
  }

  schedule (event: Unscheduled): void {
    this.seq += 1
    const scheduled = { ...event, seq: this.seq }
    // In time order, after every event due at the same time (their seq is lower): a binary search,
    // for thousands of Jobs are scheduled at once.
    let low = 0
    let high = this.queue.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.queue[middle] as Scheduled).at <= scheduled.at) low = middle + 1
      else high = middle
    }
    this.queue.splice(low, 0, scheduled)
  }

  /** Like a workqueue's AddAfter: one pending resync per parent, the earliest wins. */
  scheduleResync (parent: KubeObject, seconds: number, retry: boolean): void {
    const at = this.clock.inSeconds(seconds)
    const uid = parent.metadata.uid as string
    const pending = this.queue.find(e => e.type === 'resync' && e.uid === uid)
    if (pending !== undefined) {
      if (pending.at <= at) return
      this.cancel(pending)
    }
    this.schedule({ type: 'resync', at, ref: refOf(parent), uid, retry })
  }

  /** The first pending event of `uid` of this type, if any. */
  pending<T extends Scheduled['type']> (type: T, uid: string): Extract<Scheduled, { type: T }> | undefined {
    return this.queue.find(e => e.type === type && e.uid === uid) as Extract<Scheduled, { type: T }> | undefined
  }

  cancel (event: Scheduled): void {
    this.queue = this.queue.filter(e => e !== event)
  }

  /** The next event, if it is due by `horizon` (milliseconds); taken off the queue. */
  takeDue (horizon: number): Scheduled | undefined {
    const event = this.queue[0]
    if (event === undefined || event.at > horizon) return undefined
    this.queue.shift()
    return event
  }
}
