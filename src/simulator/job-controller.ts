// Kubernetes' Job controller and TTL-after-finished controller, as scripted by a JobBehaviour
// (./jobs.ts): a new Job starts, runs its script's time and finishes, or fails with
// DeadlineExceeded once it ran its `activeDeadlineSeconds`; `spec.suspend` stops it with its time
// left kept and resumes it; a finished Job with `ttlSecondsAfterFinished` is deleted that long
// after it finished.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { describeRef, refOf, type ObjectRef } from './objects.js'
import {
  activeDeadlineMs, defaultJob, finishedStatus, givenOutput, isSuspended, jobFinished, jobScript, resumedStatus,
  startedStatus, suspendedStatus, type FailureReason, type JobBehaviour, type JobResult, type JobScript
} from './jobs.js'
import type { Scheduled } from './scheduler.js'
import { succeededPod } from './job-pods.js'
import type { World } from './world.js'

/** What is left of a Job's run: its outcome that long from now, or no outcome at all. */
type PausedRun = { leftMs: number, result: 'succeed' | 'fail', reason: FailureReason } | 'hang'

type JobEvent = Extract<Scheduled, { type: 'job-start' | 'job-finish' | 'job-suspend' }>

export class JobController {
  /** The Jobs suspended while they ran, by uid: the run time left and the outcome at its end, or `hang`. */
  private readonly pausedJobs = new Map<string, PausedRun>()

  constructor (private readonly world: World, private readonly jobs: JobBehaviour) {}

  /** The Job controller's watch: new Jobs start, and Jobs suspended or resumed. */
  watch (old: KubeObject | undefined, current: KubeObject | undefined): void {
    const object = (current ?? old) as KubeObject
    if (object.apiVersion !== 'batch/v1' || object.kind !== 'Job') return
    const { clock, scheduler } = this.world
    const uid = object.metadata.uid as string
    if (old === undefined) {
      const at = clock.inSeconds(this.jobs.startDelaySeconds ?? 0)
      scheduler.schedule({ type: 'job-start', at, ref: refOf(object), uid })
    } else if (current !== undefined && isSuspended(old) !== isSuspended(current)) {
      scheduler.schedule({ type: 'job-suspend', at: clock.nowMs, ref: refOf(object), uid })
    } else if (current === undefined) {
      this.pausedJobs.delete(uid)
    }
  }

  /** What a Job (by name, or flow name) will do; read when the Job starts. */
  setOutcome (name: string, script: JobScript | JobResult): void {
    (this.jobs.outcomes as Record<string, JobScript | JobResult>)[name] = script
  }

  /** The API server's defaults for a Job Metacontroller writes (unless the behaviour turns them off). */
  admit (stored: KubeObject): void {
    if (stored.apiVersion === 'batch/v1' && stored.kind === 'Job' && this.jobs.apiDefaults !== false) defaultJob(stored)
  }

  /** A Job's clock event, for the Job `current` that still exists with the event's uid. */
  handle (event: JobEvent, current: KubeObject): void {
    switch (event.type) {
      case 'job-start':
        this.start(event, current)
        return
      case 'job-suspend':
        if (jobFinished(current)) return
        if (isSuspended(current)) this.suspend(current, event.ref)
        else this.resume(current, event.ref)
        return
      case 'job-finish':
        this.finish(event, current)
    }
  }

  private start (event: Extract<JobEvent, { type: 'job-start' }>, current: KubeObject): void {
    if (isRecord(current.status) && current.status.startTime !== undefined) return
    if (isSuspended(current)) {
      this.suspend(current, event.ref)
      return
    }
    const { store, clock, timeline, gc } = this.world
    store.updateStatus(event.ref, startedStatus(current, clock.nowMs))
    timeline.record({ type: 'job-started', object: event.ref, ...gc.ownerOf(current) })
    timeline.note(`start ${describeRef(event.ref)}`, [])
    this.run(current, event.ref, event.uid)
  }

  private finish (event: Extract<JobEvent, { type: 'job-finish' }>, current: KubeObject): void {
    const { store, clock, timeline, gc, scheduler } = this.world
    const modern = this.jobs.interimConditions ?? true
    const status = finishedStatus(current, event.result, event.final, modern, clock.nowMs, event.reason)
    // The kubelet reports the pod Succeeded before the Job controller counts it.
    const verdict = !event.final || !modern
    if (verdict && event.result === 'succeed') {
      const messages = { first: jobScript(current, this.jobs).output, every: givenOutput(current, this.jobs) }
      store.create(succeededPod(current, messages, clock.nowMs), 'kubelet')
    }
    store.updateStatus(event.ref, status)
    timeline.note(`${event.final ? 'finish' : 'finishing'} ${describeRef(event.ref)}`, [event.result])
    // The outcome is Kubernetes' verdict: the first of the two writes when there are two.
    if (verdict) {
      const type = event.result === 'succeed' ? 'job-succeeded' : 'job-failed'
      timeline.record({ type, object: event.ref, ...gc.ownerOf(current) })
    }
    if (!event.final) {
      // The terminal condition follows in a later write at the same time.
      scheduler.schedule({ ...event, at: clock.nowMs, final: true })
      return
    }
    this.scheduleTtl(current, event.ref, event.uid)
  }

  /** Schedules the outcome of a Job that runs from now: its script's, or what was left of it when it was suspended. */
  private run (job: KubeObject, ref: ObjectRef, uid: string, run: PausedRun = this.scriptedRun(job)): void {
    // Its deadline counts from now: a start or a resume sets its startTime, as Kubernetes does.
    const deadline = activeDeadlineMs(job)
    if (deadline !== undefined && (run === 'hang' || run.leftMs > deadline)) {
      run = { leftMs: deadline, result: 'fail', reason: 'DeadlineExceeded' }
    }
    if (run === 'hang') return
    const modern = this.jobs.interimConditions ?? true
    const at = this.world.clock.nowMs + run.leftMs
    const { result, reason } = run
    this.world.scheduler.schedule({ type: 'job-finish', at, ref, uid, result, reason, final: !modern })
  }

  private scriptedRun (job: KubeObject): PausedRun {
    const script = jobScript(job, this.jobs)
    if (script.result === 'hang') return 'hang'
    return { leftMs: script.afterSeconds * 1000, result: script.result, reason: script.reason }
  }

  /** The Job controller sees `spec.suspend` true: a running Job stops, its time left kept; Suspended True. */
  private suspend (job: KubeObject, ref: ObjectRef): void {
    const { store, clock, scheduler, timeline, gc } = this.world
    const uid = job.metadata.uid as string
    const finish = scheduler.pending('job-finish', uid)
    if (finish !== undefined) {
      scheduler.cancel(finish)
      this.pausedJobs.set(uid, { leftMs: finish.at - clock.nowMs, result: finish.result, reason: finish.reason })
    } else if (isRecord(job.status) && job.status.startTime !== undefined && !this.pausedJobs.has(uid)) {
      // Running with no outcome to come: a script that hangs.
      this.pausedJobs.set(uid, 'hang')
    }
    const { status, changed } = suspendedStatus(job, clock.nowMs)
    store.updateStatus(ref, status)
    if (!changed) return
    timeline.record({ type: 'job-suspended', object: ref, ...gc.ownerOf(job) })
    timeline.note(`suspend ${describeRef(ref)}`, [])
  }

  /**
   * The Job controller sees `spec.suspend` false again: the Job runs on (or starts); Suspended False, startTime now.
   */
  private resume (job: KubeObject, ref: ObjectRef): void {
    const { store, clock, scheduler, timeline, gc } = this.world
    const uid = job.metadata.uid as string
    // Not started yet: its start, still to come, starts it.
    if (scheduler.pending('job-start', uid) !== undefined) return
    const left = this.pausedJobs.get(uid)
    const running = isRecord(job.status) && job.status.active === 1
    if (running && left === undefined) return
    this.pausedJobs.delete(uid)
    const { status } = resumedStatus(job, clock.nowMs)
    store.updateStatus(ref, status)
    timeline.record({ type: left === undefined ? 'job-started' : 'job-resumed', object: ref, ...gc.ownerOf(job) })
    timeline.note(`resume ${describeRef(ref)}`, [])
    this.run(job, ref, uid, left)
  }

  /**
   * Kubernetes' TTL-after-finished controller: a finished Job whose spec sets
   * `ttlSecondsAfterFinished` is deleted that long after it finished, whoever still needs it.
   */
  private scheduleTtl (job: KubeObject, ref: ObjectRef, uid: string): void {
    const ttl = isRecord(job.spec) ? job.spec.ttlSecondsAfterFinished : undefined
    if (typeof ttl !== 'number' || ttl < 0) return
    const at = this.world.clock.inSeconds(ttl)
    this.world.scheduler.schedule({
      type: 'call', at, ref, uid, what: `ttl ${describeRef(ref)}`, run: () => { this.world.gc.remove(ref, 'ttl') }
    })
  }
}
