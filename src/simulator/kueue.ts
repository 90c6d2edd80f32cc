// Kueue as a batch/v1 Job sees it (kubernetes-sigs/kueue, pkg/controller/jobframework and the
// scheduler), enabled by a quota: its webhook creates a Job labelled with a queue name suspended;
// its scheduler admits the waiting Jobs (unsuspends them), at most `quota` at once, higher priority
// first (the `value` of the WorkloadPriorityClass the Job's priority-class label names, else 0),
// then the oldest; a waiting Job of a higher priority than an admitted one, with the quota full,
// preempts the lowest-priority, latest-admitted Job: suspended again, it waits in the queue and
// runs on when admitted again. Kueue writes only `spec.suspend`, in both directions: a queued Job
// someone else unsuspends is suspended again, an admitted one someone suspends is unsuspended.
//
// Simplified: one quota, counted in Jobs and shared by every queue name (the manifest's
// ClusterQueues and LocalQueues are accepted, not read); no Workload objects; preemption as a
// ClusterQueue with `preemption.withinClusterQueue: LowerPriority` does it.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { PRIORITY_CLASS_LABEL, queueNameOf } from '../k8s/kueue.js'
import { isSuspended, jobFinished } from './jobs.js'
import { refOf } from './objects.js'
import type { KueueBehaviour, TimelineType } from './types.js'
import type { World } from './world.js'

export const KUEUE_API_VERSIONS = ['kueue.x-k8s.io/v1beta1', 'kueue.x-k8s.io/v1beta2'] as const

/** A queued, unfinished Job as Kueue's scheduler orders it. */
interface Workload {
  job: KubeObject
  uid: string
  priority: number
}

export class Kueue {
  /** The admitted Jobs, by uid: when each was admitted (a sequence), to preempt the latest first. */
  private readonly admitted = new Map<string, number>()
  /** The queued Jobs, by uid, in the order they were created. */
  private readonly created = new Map<string, number>()
  private sequence = 0
  /** Whether a change since the last pass may let Kueue act: Kueue's own workqueue. */
  private dirty = false

  constructor (private readonly world: World, private readonly behaviour: KueueBehaviour) {}

  /** Kueue's mutating webhook on a Job about to be created: a queued Job starts suspended. */
  webhook (stored: KubeObject): void {
    if (!isQueuedJob(stored)) return
    if (!isRecord(stored.spec)) stored.spec = {}
    ;(stored.spec as Record<string, unknown>).suspend = true
  }

  /** Kueue's watch of queued Jobs. */
  watch (old: KubeObject | undefined, current: KubeObject | undefined): void {
    const object = (current ?? old) as KubeObject
    if (!isQueuedJob(object)) return
    const uid = object.metadata.uid as string
    if (old === undefined) this.created.set(uid, (this.sequence += 1))
    if (current === undefined) {
      this.created.delete(uid)
      this.admitted.delete(uid)
    }
    this.dirty = true
  }

  /** Whether Kueue has a pass to make. */
  get due (): boolean {
    return this.dirty
  }

  /**
   * One pass: admitted Jobs that finished free their quota, each Job's suspend is what Kueue
   * decided, then the queue moves.
   */
  reconcile (): void {
    this.dirty = false
    const workloads = this.workloads()
    const live = new Set(workloads.map(w => w.uid))
    for (const uid of this.admitted.keys()) if (!live.has(uid)) this.admitted.delete(uid)
    for (const { job, uid } of workloads) {
      const admitted = this.admitted.has(uid)
      if (admitted !== isSuspended(job)) continue
      this.write(job, !admitted, admitted ? 'kueue-unsuspended' : 'kueue-suspended')
    }
    this.schedule(workloads.filter(w => !this.admitted.has(w.uid)))
  }

  /** Kueue's scheduler: admits the waiting Jobs in order while there is quota, or a lower-priority Job to preempt. */
  private schedule (waiting: Workload[]): void {
    const admitted = this.workloads().filter(w => this.admitted.has(w.uid))
    for (const workload of waiting) {
      if (admitted.length >= this.behaviour.quota) {
        const victim = this.victimFor(admitted, workload.priority)
        if (victim === undefined) return
        admitted.splice(admitted.indexOf(victim), 1)
        this.admitted.delete(victim.uid)
        this.write(victim.job, true, 'kueue-preempted', `for ${workload.job.metadata.name}`)
      }
      this.sequence += 1
      this.admitted.set(workload.uid, this.sequence)
      admitted.push(workload)
      this.write(workload.job, false, 'kueue-admitted')
    }
  }

  /**
   * The admitted Job a Job of `priority` preempts: the lowest priority below it, the latest
   * admitted of those; never one whose outcome is known (it stops anyway, suspended or not).
   */
  private victimFor (admitted: Workload[], priority: number): Workload | undefined {
    const candidates = admitted.filter(w => w.priority < priority && !jobFinished(w.job))
    const order = (w: Workload): number => this.admitted.get(w.uid) ?? 0
    return candidates.sort((a, b) => a.priority - b.priority || order(b) - order(a))[0]
  }

  /**
   * The queued Jobs not finished as Kueue sees it (Complete or Failed: it keeps the quota of a Job
   * whose pods may still be terminating), higher priority first, then in the order they were created.
   */
  private workloads (): Workload[] {
    const order = (uid: string): number => this.created.get(uid) ?? 0
    return this.world.store.list('batch/v1', 'Job')
      .filter(job => isQueuedJob(job) && !isComplete(job) && job.metadata.deletionTimestamp === undefined)
      .map(job => ({ job, uid: job.metadata.uid as string, priority: this.priorityOf(job) }))
      .sort((a, b) => b.priority - a.priority || order(a.uid) - order(b.uid))
  }

  /** The `value` of the WorkloadPriorityClass the Job's label names; 0 when it names none or one not there. */
  private priorityOf (job: KubeObject): number {
    const name = job.metadata.labels?.[PRIORITY_CLASS_LABEL]
    if (name === undefined) return 0
    for (const apiVersion of KUEUE_API_VERSIONS) {
      const found = this.world.store.get({ apiVersion, kind: 'WorkloadPriorityClass', name })
      if (typeof found?.value === 'number') return found.value
    }
    return 0
  }

  /** Writes the Job's `spec.suspend`, the only field Kueue writes, and says so in the timeline. */
  private write (job: KubeObject, suspend: boolean, type: TimelineType, message?: string): void {
    const current = this.world.store.get(refOf(job))
    if (current === undefined) return
    current.spec = { ...(isRecord(current.spec) ? current.spec : {}), suspend }
    this.world.store.update(current)
    const event = { type, object: refOf(job), ...this.world.gc.ownerOf(job) }
    this.world.timeline.record(message !== undefined ? { ...event, message } : event)
  }
}

/** Kueue's own test of a finished Job (pkg/controller/jobs/job: Finished). */
function isComplete (job: KubeObject): boolean {
  const conditions = isRecord(job.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []
  return conditions.some(c => isRecord(c) && c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'))
}

function isQueuedJob (object: KubeObject): boolean {
  return object.apiVersion === 'batch/v1' && object.kind === 'Job' && queueNameOf(object) !== undefined
}
