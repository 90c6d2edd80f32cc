// An in-process Metacontroller, API server, Job controller and garbage collector, for scenario
// tests and `npm run simulate`. It plays a CompositeController the way Metacontroller does (its
// pkg/controller/composite and pkg/controller/common in the v4.17.2 source):
//
// - children are the objects of the declared child types that the parent controls (controller
//   ownerReference with its uid), claimed with the parent's selector (generateSelector: the
//   `controller-uid` label), orphans adopted, non-matching ones released;
// - `children` and `related` are keyed `"<Kind>.<apiVersion>"` with one entry per child type and
//   per related rule even when empty, objects keyed `name` (v1, namespaced parent) or
//   `namespace/name` (v2), and v1 drops related objects outside the parent's namespace;
// - customize is called once per (parent uid, generation) and cached for 20 minutes; a related
//   object that a cached rule matches enqueues the parent;
// - the hook is called through the real fastify app (`buildApp`, `app.inject`) with the simulated
//   clock, and its answer must be HTTP 200 and match the response schema, or nothing changes;
// - dynamic apply (./apply.ts): observed children not desired are deleted; missing children are
//   created with a controller ownerReference and the last-applied annotation; existing ones are
//   merged with the answer three ways and, when that changes them, left as they are under the
//   update strategy OnDelete or written (PUT) under InPlace, the strategies the controller gives
//   each child type; a child the API server refuses fails the sync after the rest is done;
//   then the parent's status is replaced by the answer's status plus observedGeneration, and
//   written only if it differs;
// - every write to a parent, to a child it owns, or to an object its related rules match
//   enqueues the parent again (Metacontroller reacts to its own status writes too).
//
// Time is simulated: nothing sleeps, `Date` comes only from the simulated clock, and every
// generated uid and resourceVersion comes from a counter, so runs are deterministic.
import type { FastifyInstance } from 'fastify'
import { Value } from '@sinclair/typebox/value'
import { buildApp } from '../app.js'
import { syncRequestShape, type CustomizeRequest, type CustomizeResponse, type HookContext, type KindHooks, type SyncRequest, type SyncResponse, type UpdateMethod } from '../protocol/hooks.js'
import { project } from '../protocol/projection.js'
import { CustomizeResponseSchema, SyncResponseSchema, type RelatedResourceRule } from '../protocol/schemas.js'
import type { KubeObject, ObjectMap, OwnerReference } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { controllerOf, groupKey, LAST_APPLIED_ANNOTATION } from '../k8s/objects.js'
import { runSyncHook } from '../controllers/hook-runner.js'
import { defaultHooksDir, loadScriptLibrary, type ScriptLibrary } from '../scripts/library.js'
import {
  deepEqual, describeRef, diffPaths, isContainedIn, matchesSelector, namespacedName, refKey, refOf, wire,
  type LabelSelector, type ObjectRef
} from './objects.js'
import { ObjectStore, AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from './store.js'
import { ResourceTable, type ResourceType, type TypeName } from './resources.js'
import {
  defaultJob, finishedStatus, isSuspended, jobFinished, jobScript, resumedStatus, startedStatus, suspendedStatus,
  type JobBehaviour, type JobScript, type JobResult
} from './jobs.js'
import { applyUpdate, changedFields, goJson, LastAppliedError } from './apply.js'
import { SimulatorExecutor } from './effects.js'
import { EphemeralKubelet, type EphemeralBehaviour } from './ephemeraljob.js'
import { withEffectOutcomes } from '../protocol/effects-applied.js'
import { refTo } from '../effects/types.js'

export type HookVersion = 'v1' | 'v2'
export type Transport = 'http' | 'direct'

/** A CompositeController, as far as the simulator needs one. */
export interface ControllerConfig {
  /** The CompositeController's name; `<resource>-controller` when unset. */
  name?: string
  hooks: KindHooks
  parent: TypeName
  /** The child types, each with its update strategy (OnDelete when unset; the simulator plays OnDelete and InPlace). */
  children: ChildType[]
  /** The hooks' `version`. Default v2, as our manifests register them. */
  hookVersion?: HookVersion
  /** Default true, as our CompositeControllers set it. */
  generateSelector?: boolean
}

/** A child type of a CompositeController, with its `updateStrategy.method`. */
export type ChildType = TypeName & { updateStrategy?: UpdateMethod }

export interface SimulatorOptions {
  controllers: ControllerConfig[]
  /** `http` (default): through the fastify app. `direct`: the same hook code called in-process. */
  transport?: Transport
  /** When the simulated clock starts. Default 2026-01-01T00:00:00Z. */
  start?: Date | string
  jobs?: JobBehaviour
  /** The shipped scripts the hooks see; default: the package's `hooks/` folder. */
  scripts?: ScriptLibrary
  /** Resource types beyond the built-in table. */
  resources?: ResourceType[]
  /** How long a customize answer is cached per (parent uid, generation). Default 1200 s. */
  customizeCacheSeconds?: number
  /** What injected ephemeral containers do (the kubelet's part); see ephemeraljob.ts. */
  ephemeral?: EphemeralBehaviour
  /**
   * Also run every sync on the whole request, in process, and throw when its answer or effects
   * differ from those of the request built only as far as the kind's `reads` say (default true):
   * a hook that reads a field its kind does not declare fails every scenario that reaches it.
   */
  checkReads?: boolean
}

export type TimelineType =
  | 'applied' | 'edited' | 'deleted' | 'terminating' | 'created' | 'adopted' | 'released'
  | 'job-started' | 'job-succeeded' | 'job-failed' | 'job-suspended' | 'job-resumed' | 'updated' | 'phase' | 'sync-error'
  | 'injected' | 'container-started' | 'container-finished'

export interface TimelineEvent {
  /** Simulated seconds since the simulation started. */
  seconds: number
  type: TimelineType
  object: ObjectRef
  /** The object's controller (its parent), for children. */
  owner?: ObjectRef
  /** `deleted`: who deleted it (`ttl`: Kubernetes' TTL-after-finished controller, for a Job's ttlSecondsAfterFinished). */
  cause?: 'user' | 'controller' | 'garbage-collector' | 'effect' | 'finalized' | 'ttl'
  /** `phase`: the parent's new phase and the one before (its message: a `Valid` False condition's). */
  phase?: string
  previousPhase?: string
  message?: string
}

export interface ReconcileResult {
  parent: ObjectRef
  ok: boolean
  /** Why the reconcile changed nothing (hook error, bad answer, refused child). */
  error?: string
  created: ObjectRef[]
  deleted: ObjectRef[]
  adopted: ObjectRef[]
  released: ObjectRef[]
  /** Desired children that exist but differ from what was asked: left alone (OnDelete). */
  drift: ObjectRef[]
  /** Children written in place (InPlace): the merge of the answer changed them. */
  updated: ObjectRef[]
  /** Desired children whose name is taken by an object the parent does not own (AlreadyExists, swallowed). */
  conflicts: ObjectRef[]
  statusChanged: boolean
  /** Where the status changed (`status.jobs[1].phase`). */
  statusDiff: string[]
  resyncAfterSeconds?: number
  request?: SyncRequest
  response?: SyncResponse
}

export interface RunOptions {
  /** At most this many steps (reconciles and clock events); then throw. Default 1000. */
  maxSteps?: number
  /** Stop, without throwing, before the first event later than this many simulated seconds from the start. */
  untilSeconds?: number
}

export interface RunSummary {
  steps: number
  reconciles: number
  seconds: number
}

/** What is left of a Job's run: its outcome that long from now, or no outcome at all. */
type PausedRun = { leftMs: number, result: 'succeed' | 'fail' } | 'hang'

type Scheduled =
  | { type: 'job-start', at: number, seq: number, ref: ObjectRef, uid: string }
  | { type: 'job-finish', at: number, seq: number, ref: ObjectRef, uid: string, result: 'succeed' | 'fail', final: boolean }
  | { type: 'job-suspend', at: number, seq: number, ref: ObjectRef, uid: string }
  | { type: 'resync', at: number, seq: number, ref: ObjectRef, uid: string, retry: boolean }
  | { type: 'call', at: number, seq: number, ref: ObjectRef, uid: string, what: string, run: () => void }

/** A scheduled event before it gets its sequence number. */
type Unscheduled = Scheduled extends infer S ? S extends Scheduled ? Omit<S, 'seq'> & { seq?: number } : never : never

/** A CompositeController with its types resolved: what a reconcile, and the live preview's request, work from. */
export interface Controller {
  config: ControllerConfig
  hooks: KindHooks
  parentType: ResourceType
  childTypes: ResourceType[]
  /** The update strategy of each child group (`"<Kind>.<apiVersion>"`); OnDelete where unset. */
  childMethods: ReadonlyMap<string, UpdateMethod>
  version: HookVersion
  generateSelector: boolean
  /** The CompositeController object sent as `controller`. */
  object: KubeObject
}

interface CachedCustomize {
  generation: number
  rules: RelatedResourceRule[]
  expiresAt: number
}

interface StepRecord {
  seconds: number
  what: string
  changes: string[]
}

type HookAnswer<T> = { ok: true, value: T } | { ok: false, error: string }

export const CONTROLLER_UID_LABEL = 'controller-uid'
export { LAST_APPLIED_ANNOTATION }
const DEFAULT_START = '2026-01-01T00:00:00Z'
const MAX_BACKOFF_SECONDS = 1000

export class Simulator {
  readonly timeline: TimelineEvent[] = []
  readonly resources: ResourceTable
  readonly store: ObjectStore
  /** Status writes per parent (`namespace/name`), to check that a quiet system stays quiet. */
  readonly statusWrites = new Map<string, number>()
  /** Applies the hooks' effects to the store (both transports); its log lists every effect applied. */
  readonly effects: SimulatorExecutor
  /** Moves injected ephemeral containers through waiting, running and terminated. */
  readonly kubelet: EphemeralKubelet

  private readonly startMs: number
  private nowMs: number
  private readonly controllers: Controller[]
  private readonly transport: Transport
  private readonly checkReads: boolean
  private readonly scripts: ScriptLibrary
  private readonly jobs: JobBehaviour
  private readonly customizeCacheMs: number
  private readonly dirty = new Map<string, ObjectRef>()
  /** Older copies of parents that their next reconcile is handed (handOlderParent). */
  private readonly olderParents = new Map<string, KubeObject>()
  private queue: Scheduled[] = []
  private seq = 0
  private readonly customizeCache = new Map<string, CachedCustomize>()
  /** The Jobs suspended while they ran, by uid: the run time left and the outcome at its end, or `hang`. */
  private readonly pausedJobs = new Map<string, PausedRun>()
  private readonly failures = new Map<string, number>()
  private readonly history: StepRecord[] = []
  private readonly lastResults = new Map<string, ReconcileResult>()
  private app: FastifyInstance | undefined
  private appPromise: Promise<FastifyInstance> | undefined

  constructor (options: SimulatorOptions) {
    this.resources = new ResourceTable()
    for (const type of options.resources ?? []) this.resources.add(type)
    this.startMs = Date.parse(typeof options.start === 'string' ? options.start : (options.start ?? new Date(DEFAULT_START)).toISOString())
    this.nowMs = this.startMs
    this.transport = options.transport ?? 'http'
    this.checkReads = options.checkReads ?? true
    this.scripts = options.scripts ?? loadScriptLibrary(defaultHooksDir())
    this.jobs = { ...options.jobs, outcomes: { ...options.jobs?.outcomes } }
    this.customizeCacheMs = (options.customizeCacheSeconds ?? 1200) * 1000
    this.store = new ObjectStore(() => this.nowMs, (old, current) => this.onChange(old, current))
    this.controllers = options.controllers.map((config, i) => this.resolveController(config, i))
    this.kubelet = new EphemeralKubelet({
      store: this.store,
      nowMs: () => this.nowMs,
      schedule: (seconds, ref, uid, what, run) => this.schedule({ type: 'call', at: this.nowMs + seconds * 1000, ref, uid, what, run }),
      record: (type, pod, message) => this.record({ type, object: pod, message })
    }, options.ephemeral)
    this.effects = new SimulatorExecutor({
      store: this.store,
      seconds: () => this.seconds(),
      remove: ref => this.remove(ref, 'effect'),
      injected: (pod, containers) => {
        this.record({ type: 'injected', object: refOf(pod), message: containers.map(c => c.name).join(', ') })
        this.kubelet.injected(pod, containers)
      }
    })
  }

  // ---- clock and queries ---------------------------------------------------------------------

  /** The simulated time. */
  now (): Date {
    return new Date(this.nowMs)
  }

  /** Simulated seconds since the start. */
  seconds (): number {
    return (this.nowMs - this.startMs) / 1000
  }

  /** Simulated seconds since the start of an ISO time (e.g. a status time), for reports. */
  secondsAt (time: string): number {
    return (Date.parse(time) - this.startMs) / 1000
  }

  get (ref: ObjectRef): KubeObject | undefined {
    return this.store.get(ref)
  }

  list (type: TypeName, namespace?: string): KubeObject[] {
    const resolved = this.resources.resolve(type)
    return this.store.list(resolved.apiVersion, resolved.kind, namespace)
  }

  /** The batch/v1 Jobs, optionally of one namespace. */
  listJobs (namespace?: string): KubeObject[] {
    return this.store.list('batch/v1', 'Job', namespace)
  }

  /** The last reconcile of a parent, with the request sent and the answer received. */
  lastReconcile (ref: ObjectRef): ReconcileResult | undefined {
    return this.lastResults.get(refKey(ref))
  }

  /** Whether anything is owed: a parent to reconcile or a clock event. */
  isQuiet (): boolean {
    return this.dirty.size === 0 && this.queue.length === 0
  }

  /** A plain-text timeline, one event a line, for test diagnostics. */
  timelineText (): string {
    return this.timeline.map(e => {
      const extra = [e.owner !== undefined ? `owner ${e.owner.name}` : '', e.cause ?? '', e.phase !== undefined ? `${e.previousPhase ?? '-'} → ${e.phase}` : '', e.message ?? '']
        .filter(s => s !== '').join(', ')
      return `t=${e.seconds}s ${e.type} ${describeRef(e.object)}${extra === '' ? '' : ` (${extra})`}`
    }).join('\n')
  }

  // ---- what users do -------------------------------------------------------------------------

  /** `kubectl apply`: creates the object or replaces its spec (never its status). */
  apply (object: KubeObject): KubeObject {
    const desired = wire(object)
    const type = this.resources.byKind(desired.apiVersion, desired.kind)
    if ((type?.namespaced ?? true) && desired.metadata.namespace === undefined) desired.metadata.namespace = 'default'
    const ref = refOf(desired)
    const existing = this.store.get(ref)
    if (existing === undefined) {
      const created = this.store.create(desired, 'kubectl-client-side-apply')
      this.record({ type: 'applied', object: ref })
      return created
    }
    const updated = this.store.update(desired)
    if (updated.metadata.resourceVersion !== existing.metadata.resourceVersion) this.record({ type: 'edited', object: ref })
    return updated
  }

  /** `kubectl edit`: `mutate` changes a copy of the object, which then replaces it; `what` says how, for the timeline. */
  edit (ref: ObjectRef, mutate: (object: KubeObject) => void, what?: string): KubeObject {
    const existing = this.store.get(ref)
    if (existing === undefined) throw new Error(`cannot edit ${describeRef(ref)}: not found`)
    mutate(existing)
    const updated = this.store.update(existing)
    if (updated.metadata.resourceVersion !== existing.metadata.resourceVersion) this.record({ type: 'edited', object: ref, ...(what !== undefined ? { message: what } : {}) })
    return updated
  }

  /**
   * `kubectl delete` (background propagation): the garbage collector deletes what it owned. An
   * object with finalizers (a parent whose controller has a finalize hook) only starts terminating.
   */
  delete (ref: ObjectRef): boolean {
    return this.remove(ref, 'user')
  }

  /** Deletes as the API server does: with finalizers left, only a deletionTimestamp. */
  private remove (ref: ObjectRef, cause: 'user' | 'effect' | 'ttl'): boolean {
    const current = this.store.get(ref)
    if (current === undefined) return false
    if ((current.metadata.finalizers as string[] | undefined ?? []).length > 0) {
      if (current.metadata.deletionTimestamp === undefined) {
        this.store.terminate(ref)
        this.record({ type: 'terminating', object: ref, cause, ...this.ownerOf(current) })
      }
      return true
    }
    const deleted = this.store.delete(ref)
    if (deleted === undefined) return false
    this.record({ type: 'deleted', object: ref, cause, ...this.ownerOf(deleted) })
    this.collectGarbage()
    return true
  }

  /** Deletes a Job by hand. */
  deleteJob (name: string, namespace = 'default'): boolean {
    return this.delete({ apiVersion: 'batch/v1', kind: 'Job', namespace, name })
  }

  /** What a Job (by name, or flow name) will do; read when the Job starts, so it applies to Jobs not started yet. */
  setJobOutcome (name: string, script: JobScript | JobResult): void {
    (this.jobs.outcomes as Record<string, JobScript | JobResult>)[name] = script
  }

  // ---- running -------------------------------------------------------------------------------

  /**
   * Reconciles and advances the clock event by event until nothing is owed. Throws after
   * `maxSteps` steps, naming what kept changing.
   */
  async runUntilQuiet (options: RunOptions = {}): Promise<RunSummary> {
    return await this.run(() => false, options)
  }

  /** Runs until `condition` holds (checked after every step); throws if the system goes quiet first. */
  async runUntil (condition: (sim: Simulator) => boolean, options: RunOptions = {}): Promise<RunSummary> {
    let met = condition(this)
    const summary = await this.run(() => (met = condition(this)), options)
    if (!met) throw new Error(`the simulation went quiet at t=${this.seconds()}s before the condition held\n${this.timelineText()}`)
    return summary
  }

  /** Runs everything due in the next `seconds` and leaves the clock there. */
  async advance (seconds: number, options: Omit<RunOptions, 'untilSeconds'> = {}): Promise<RunSummary> {
    const target = this.seconds() + seconds
    const summary = await this.run(() => false, { ...options, untilSeconds: target })
    if (this.nowMs < this.startMs + target * 1000) this.nowMs = this.startMs + target * 1000
    return summary
  }

  private async run (stop: () => boolean, options: RunOptions): Promise<RunSummary> {
    const maxSteps = options.maxSteps ?? 1000
    const horizon = options.untilSeconds === undefined ? Infinity : this.startMs + options.untilSeconds * 1000
    let steps = 0
    let reconciles = 0
    const started = this.nowMs
    if (stop()) return { steps, reconciles, seconds: 0 }
    for (;;) {
      if (steps >= maxSteps) throw new Error(this.notQuietMessage(maxSteps))
      const next = this.dirty.values().next()
      if (next.done !== true) {
        await this.reconcile(next.value)
        reconciles += 1
      } else {
        const event = this.queue[0]
        if (event === undefined || event.at > horizon) break
        this.queue.shift()
        if (event.at > this.nowMs) this.nowMs = event.at
        this.handle(event)
      }
      steps += 1
      if (stop()) break
    }
    return { steps, reconciles, seconds: (this.nowMs - started) / 1000 }
  }

  private notQuietMessage (maxSteps: number): string {
    const recent = this.history.slice(-40)
    const grouped = new Map<string, { count: number, changes: Set<string> }>()
    for (const step of recent) {
      const entry = grouped.get(step.what) ?? { count: 0, changes: new Set<string>() }
      entry.count += 1
      for (const change of step.changes) entry.changes.add(change)
      grouped.set(step.what, entry)
    }
    const lines = [...grouped].map(([what, { count, changes }]) =>
      `  ${what} ×${count}${changes.size > 0 ? `: ${[...changes].slice(0, 12).join('; ')}` : ': no change'}`)
    return `the simulation is not quiet after ${maxSteps} steps (t=${this.seconds()}s); what the last ${recent.length} steps did:\n${lines.join('\n')}`
  }

  private handle (event: Scheduled): void {
    const current = this.store.get(event.ref)
    if (current === undefined || current.metadata.uid !== event.uid) return
    switch (event.type) {
      case 'resync':
        this.note(`${event.retry ? 'retry' : 'resync'} ${describeRef(event.ref)}`, [])
        this.enqueue(event.ref)
        return
      case 'call':
        this.note(event.what, [])
        event.run()
        return
      case 'job-start': {
        if (isRecord(current.status) && current.status.startTime !== undefined) return
        if (isSuspended(current)) {
          this.suspendJob(current, event.ref)
          return
        }
        this.store.updateStatus(event.ref, startedStatus(current, this.nowMs))
        this.record({ type: 'job-started', object: event.ref, ...this.ownerOf(current) })
        this.note(`start ${describeRef(event.ref)}`, [])
        this.runJob(current, event.ref, event.uid)
        return
      }
      case 'job-suspend':
        if (jobFinished(current)) return
        if (isSuspended(current)) this.suspendJob(current, event.ref)
        else this.resumeJob(current, event.ref)
        return
      case 'job-finish': {
        const modern = this.jobs.interimConditions ?? true
        this.store.updateStatus(event.ref, finishedStatus(current, event.result, event.final, modern, this.nowMs))
        this.note(`${event.final ? 'finish' : 'finishing'} ${describeRef(event.ref)}`, [event.result])
        if (!event.final) {
          // The terminal condition follows in a later write at the same time.
          this.schedule({ ...event, at: this.nowMs, final: true })
          return
        }
        this.record({ type: event.result === 'succeed' ? 'job-succeeded' : 'job-failed', object: event.ref, ...this.ownerOf(current) })
        this.scheduleJobTtl(current, event.ref, event.uid)
      }
    }
  }

  /** Schedules the outcome of a Job that runs from now: its script's, or what was left of it when it was suspended. */
  private runJob (job: KubeObject, ref: ObjectRef, uid: string, run: PausedRun = this.scriptedRun(job)): void {
    if (run === 'hang') return
    const modern = this.jobs.interimConditions ?? true
    this.schedule({ type: 'job-finish', at: this.nowMs + run.leftMs, ref, uid, result: run.result, final: !modern })
  }

  private scriptedRun (job: KubeObject): PausedRun {
    const script = jobScript(job, this.jobs)
    return script.result === 'hang' ? 'hang' : { leftMs: script.afterSeconds * 1000, result: script.result }
  }

  /** The Job controller sees `spec.suspend` true: a running Job stops, its time left kept; Suspended True. */
  private suspendJob (job: KubeObject, ref: ObjectRef): void {
    const uid = job.metadata.uid as string
    const finish = this.queue.find(e => e.type === 'job-finish' && e.uid === uid)
    if (finish?.type === 'job-finish') {
      this.queue = this.queue.filter(e => e !== finish)
      this.pausedJobs.set(uid, { leftMs: finish.at - this.nowMs, result: finish.result })
    } else if (isRecord(job.status) && job.status.startTime !== undefined && !this.pausedJobs.has(uid)) {
      // Running with no outcome to come: a script that hangs.
      this.pausedJobs.set(uid, 'hang')
    }
    const { status, changed } = suspendedStatus(job, this.nowMs)
    this.store.updateStatus(ref, status)
    if (!changed) return
    this.record({ type: 'job-suspended', object: ref, ...this.ownerOf(job) })
    this.note(`suspend ${describeRef(ref)}`, [])
  }

  /** The Job controller sees `spec.suspend` false again: the Job runs on (or starts); Suspended False, startTime now. */
  private resumeJob (job: KubeObject, ref: ObjectRef): void {
    const uid = job.metadata.uid as string
    // Not started yet: its start, still to come, starts it.
    if (this.queue.some(e => e.type === 'job-start' && e.uid === uid)) return
    const left = this.pausedJobs.get(uid)
    const running = isRecord(job.status) && job.status.active === 1
    if (running && left === undefined) return
    this.pausedJobs.delete(uid)
    const { status } = resumedStatus(job, this.nowMs)
    this.store.updateStatus(ref, status)
    this.record({ type: left === undefined ? 'job-started' : 'job-resumed', object: ref, ...this.ownerOf(job) })
    this.note(`resume ${describeRef(ref)}`, [])
    this.runJob(job, ref, uid, left)
  }

  /**
   * Kubernetes' TTL-after-finished controller: a finished Job whose spec sets
   * `ttlSecondsAfterFinished` is deleted that long after it finished, whoever still needs it.
   */
  private scheduleJobTtl (job: KubeObject, ref: ObjectRef, uid: string): void {
    const ttl = isRecord(job.spec) ? job.spec.ttlSecondsAfterFinished : undefined
    if (typeof ttl !== 'number' || ttl < 0) return
    this.schedule({ type: 'call', at: this.nowMs + ttl * 1000, ref, uid, what: `ttl ${describeRef(ref)}`, run: () => { this.remove(ref, 'ttl') } })
  }

  /**
   * The next reconcile of `ref` is handed `older` as its parent, as Metacontroller's informer
   * hands a sync its cached copy, which may not have caught up with the last status writes yet.
   * The status is still written over the live object (Metacontroller's AtomicStatusUpdate reads
   * the latest copy and replaces its status with the hook's).
   */
  handOlderParent (ref: ObjectRef, older: KubeObject): void {
    this.olderParents.set(refKey(ref), wire(older))
  }

  // ---- one reconcile -------------------------------------------------------------------------

  /** One sync of a parent, as Metacontroller does it. Also used by `runUntilQuiet`. */
  async reconcile (ref: ObjectRef): Promise<ReconcileResult> {
    const key = refKey(ref)
    this.dirty.delete(key)
    const result: ReconcileResult = { parent: ref, ok: false, created: [], deleted: [], adopted: [], released: [], drift: [], updated: [], conflicts: [], statusChanged: false, statusDiff: [] }
    const live = this.store.get(ref)
    const older = this.olderParents.get(key)
    this.olderParents.delete(key)
    const parent = older !== undefined && live !== undefined && older.metadata.uid === live.metadata.uid ? older : live
    if (parent === undefined) {
      result.error = `${describeRef(ref)} does not exist`
      return result
    }
    const controller = this.controllerOf(parent)
    if (controller === undefined) throw new Error(`no controller for ${describeRef(ref)}`)
    try {
      await this.syncParent(controller, parent, result)
      result.ok = result.error === undefined
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error)
    }
    if (result.ok) {
      this.failures.delete(key)
    } else {
      // Metacontroller records a SyncError event and retries with exponential backoff.
      const failures = (this.failures.get(key) ?? 0) + 1
      this.failures.set(key, failures)
      this.record({ type: 'sync-error', object: ref, message: result.error })
      const delay = Math.min(0.005 * 2 ** (failures - 1), MAX_BACKOFF_SECONDS)
      this.scheduleResync(parent, delay, true)
    }
    this.lastResults.set(key, result)
    this.note(`reconcile ${describeRef(ref)}`, describeChanges(result))
    return result
  }

  /**
   * One reconcile of a parent, as Metacontroller's does it: finalizer, claim the children, ask for
   * related objects, call the hook, check every desired child, delete the undesired, create the
   * missing and apply the rest, write the status, then release the parent after finalize or
   * schedule the resync; a child that could not be applied then fails the reconcile.
   */
  private async syncParent (controller: Controller, parent: KubeObject, result: ReconcileResult): Promise<void> {
    const finalizer = `metacontroller.io/compositecontroller-${controller.object.metadata.name}`
    const finalizing = controller.hooks.finalize !== undefined && parent.metadata.deletionTimestamp !== undefined
    parent = this.ensureFinalizer(controller, parent, finalizer, finalizing)
    const selector = this.parentSelector(controller, parent)
    const children = this.claimChildren(controller, parent, selector, result)
    const related = await this.relatedObjects(controller, parent)
    if (typeof related === 'string') {
      result.error = related
      return
    }
    const request: SyncRequest = { controller: controller.object, parent, children, related, finalizing }
    result.request = wire(request)
    const answer = await this.callSync(controller, request, finalizing ? 'finalize' : 'sync')
    if (!answer.ok) {
      result.error = answer.error
      return
    }
    const response = answer.value
    result.response = wire(response)
    const desired = this.checkDesiredChildren(controller, parent, selector, response)
    if (typeof desired === 'string') {
      result.error = desired
      return
    }
    this.deleteUndesired(parent, children, desired, result)
    const problems = this.applyDesired(controller, parent, desired, result)
    this.writeStatus(controller, parent, response, result)
    if (problems.length > 0) result.error = `can't reconcile children: ${problems.join('; ')}`
    if (finalizing && response.finalized === true) {
      this.releaseFinalized(parent, finalizer)
      return
    }
    const resync = response.resyncAfterSeconds
    if (typeof resync === 'number' && resync > 0) {
      result.resyncAfterSeconds = resync
      this.scheduleResync(parent, resync, false)
    }
  }

  /** With a finalize hook, Metacontroller puts its finalizer on the parent before anything else. */
  private ensureFinalizer (controller: Controller, parent: KubeObject, finalizer: string, finalizing: boolean): KubeObject {
    const finalizers = (parent.metadata.finalizers as string[] | undefined) ?? []
    if (controller.hooks.finalize === undefined || finalizing || finalizers.includes(finalizer)) return parent
    return this.store.update({ ...parent, metadata: { ...parent.metadata, finalizers: [...finalizers, finalizer] } })
  }

  /** Claim: owned children that still match, orphans that match (adopted); release the rest. */
  private claimChildren (controller: Controller, parent: KubeObject, selector: LabelSelector, result: ReconcileResult): ObjectMap {
    const children: ObjectMap = {}
    for (const type of controller.childTypes) {
      const group: Record<string, KubeObject> = {}
      children[`${type.kind}.${type.apiVersion}`] = group
      for (let object of this.store.list(type.apiVersion, type.kind, controller.parentType.namespaced ? parent.metadata.namespace : undefined)) {
        const owner = controllerOf(object)
        const matches = matchesSelector(selector, object.metadata.labels)
        if (owner !== undefined && owner.uid !== parent.metadata.uid) continue
        if (owner === undefined) {
          if (!matches || parent.metadata.deletionTimestamp !== undefined) continue
          object.metadata.ownerReferences = [...(object.metadata.ownerReferences ?? []), ownerReference(parent)]
          object = this.store.update(object)
          result.adopted.push(refOf(object))
          this.record({ type: 'adopted', object: refOf(object), owner: refOf(parent) })
        } else if (!matches) {
          object.metadata.ownerReferences = (object.metadata.ownerReferences ?? []).filter(r => r.uid !== parent.metadata.uid)
          this.store.update(object)
          result.released.push(refOf(object))
          this.record({ type: 'released', object: refOf(object), owner: refOf(parent) })
          continue
        }
        group[objectKey(controller, parent, object)] = object
      }
    }
    return children
  }

  /** Every desired child checked before anything changes: one bad child fails the whole sync. */
  private checkDesiredChildren (controller: Controller, parent: KubeObject, selector: LabelSelector, response: SyncResponse): Map<string, KubeObject> | string {
    const desired = new Map<string, KubeObject>()
    for (const raw of response.children ?? []) {
      const child = this.checkDesiredChild(controller, parent, selector, raw)
      if (typeof child === 'string') return child
      desired.set(refKey(refOf(child)), child)
    }
    return desired
  }

  /** Deletes the observed children that are not desired, then collects their garbage. */
  private deleteUndesired (parent: KubeObject, children: ObjectMap, desired: Map<string, KubeObject>, result: ReconcileResult): void {
    for (const group of Object.values(children)) {
      for (const observed of Object.values(group)) {
        const ref = refOf(observed)
        if (desired.has(refKey(ref))) continue
        if (this.store.delete(ref) === undefined) continue
        result.deleted.push(ref)
        this.record({ type: 'deleted', object: ref, owner: refOf(parent), cause: 'controller' })
      }
    }
    if (result.deleted.length > 0) this.collectGarbage()
  }

  /**
   * Creates what is missing and applies the rest over what exists (./apply.ts): a child the merge
   * does not change, or one being deleted, is not written; under OnDelete none is (drift noted);
   * under InPlace the merge is PUT, a conflict or a child gone in between passing unnoticed, as
   * in Metacontroller. Returns what failed (a child the API server refuses, an unreadable
   * last-applied annotation); the other children are applied all the same.
   */
  private applyDesired (controller: Controller, parent: KubeObject, desired: Map<string, KubeObject>, result: ReconcileResult): string[] {
    const problems: string[] = []
    for (const child of desired.values()) {
      const ref = refOf(child)
      const observed = this.store.get(ref)
      if (observed === undefined) {
        this.createChild(parent, child, result)
        continue
      }
      if (controllerOf(observed)?.uid !== parent.metadata.uid) {
        result.conflicts.push(ref)
        continue
      }
      const problem = this.updateChild(controller, observed, child, result)
      if (problem !== undefined) problems.push(problem)
    }
    return problems
  }

  /** Metacontroller's create: the answer's child as it is, its annotation the JSON of it, owned by the parent. */
  private createChild (parent: KubeObject, child: KubeObject, result: ReconcileResult): void {
    const ref = refOf(child)
    const type = this.resources.byKind(child.apiVersion, child.kind) as ResourceType
    const toCreate = wire(child)
    delete toCreate.status
    toCreate.metadata.annotations = { ...toCreate.metadata.annotations, [LAST_APPLIED_ANNOTATION]: goJson(child) }
    toCreate.metadata.ownerReferences = [ownerReference(parent)]
    if (type.hasStatus) toCreate.status = {}
    try {
      this.store.create(toCreate, 'metacontroller', stored => this.admitJob(stored))
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error
      result.conflicts.push(ref)
      return
    }
    result.created.push(ref)
    this.record({ type: 'created', object: ref, owner: refOf(parent) })
  }

  /** Metacontroller's update of a child that exists, by its type's strategy; what failed, if anything. */
  private updateChild (controller: Controller, observed: KubeObject, child: KubeObject, result: ReconcileResult): string | undefined {
    const ref = refOf(child)
    let merged: KubeObject
    try {
      merged = applyUpdate(observed, child)
    } catch (error) {
      if (error instanceof LastAppliedError) return `${describeRef(ref)}: ${error.message}`
      throw error
    }
    if (deepEqual(merged, observed) || observed.metadata.deletionTimestamp !== undefined) return undefined
    if ((controller.childMethods.get(groupKey(child.kind, child.apiVersion)) ?? 'OnDelete') === 'OnDelete') {
      if (!isContainedIn(comparable(child), observed)) result.drift.push(ref)
      return undefined
    }
    let written: KubeObject
    try {
      written = this.store.update(merged, { checkVersion: true, admit: stored => this.admitJob(stored) })
    } catch (error) {
      if (error instanceof ConflictError || error instanceof NotFoundError) return undefined
      if (error instanceof InvalidError) return `can't update ${describeRef(ref)}: ${error.message}`
      throw error
    }
    if (written.metadata.resourceVersion === observed.metadata.resourceVersion) return undefined
    result.updated.push(ref)
    this.record({ type: 'updated', object: ref, ...this.ownerOf(written), message: changedFields(observed, merged).join(', ') })
    return undefined
  }

  /** The API server's defaults for a Job Metacontroller writes (unless the behaviour turns them off). */
  private admitJob (stored: KubeObject): void {
    if (stored.apiVersion === 'batch/v1' && stored.kind === 'Job' && this.jobs.apiDefaults !== false) defaultJob(stored)
  }

  /** Replaces the status, with observedGeneration, if it changed; a new phase goes on the timeline. */
  private writeStatus (controller: Controller, parent: KubeObject, response: SyncResponse, result: ReconcileResult): void {
    const live = this.store.get(refOf(parent))
    if (live === undefined || live.metadata.uid !== parent.metadata.uid) return
    const status: Record<string, unknown> = { ...(isRecord(response.status) ? wire(response.status) : {}), observedGeneration: parent.metadata.generation }
    if (deepEqual(live.status, status)) return
    result.statusChanged = true
    result.statusDiff = diffPaths(live.status, status, 'status')
    this.store.updateStatus(refOf(parent), status)
    const name = namespacedName(refOf(parent))
    this.statusWrites.set(name, (this.statusWrites.get(name) ?? 0) + 1)
    const field = controller.hooks.phaseField
    const before = isRecord(live.status) ? live.status[field] : undefined
    const after = status[field]
    if (before === after || typeof after !== 'string') return
    const invalid = invalidMessage(status)
    this.record({
      type: 'phase',
      object: refOf(parent),
      phase: after,
      ...(typeof before === 'string' ? { previousPhase: before } : {}),
      ...(invalid !== undefined ? { message: invalid } : {})
    })
  }

  /** Finalize said done: the finalizer goes, and with the last one the parent. */
  private releaseFinalized (parent: KubeObject, finalizer: string): void {
    const current = this.store.get(refOf(parent))
    if (current === undefined || current.metadata.uid !== parent.metadata.uid) return
    const left = ((current.metadata.finalizers as string[] | undefined) ?? []).filter(f => f !== finalizer)
    this.store.update({ ...current, metadata: { ...current.metadata, finalizers: left } })
    if (left.length > 0) return
    this.store.delete(refOf(parent))
    this.record({ type: 'deleted', object: refOf(parent), cause: 'finalized' })
    this.collectGarbage()
  }

  private parentSelector (controller: Controller, parent: KubeObject): LabelSelector {
    if (controller.generateSelector) return { matchLabels: { [CONTROLLER_UID_LABEL]: parent.metadata.uid as string } }
    const selector = isRecord(parent.spec) ? parent.spec.selector : undefined
    if (!isRecord(selector)) throw new Error(`${describeRef(refOf(parent))} has no spec.selector and generateSelector is off`)
    return selector as LabelSelector
  }

  private checkDesiredChild (controller: Controller, parent: KubeObject, selector: LabelSelector, raw: unknown): KubeObject | string {
    if (!isRecord(raw) || typeof raw.apiVersion !== 'string' || typeof raw.kind !== 'string' ||
      !isRecord(raw.metadata) || typeof raw.metadata.name !== 'string' || raw.metadata.name === '') {
      return `a desired child lacks apiVersion, kind or metadata.name: ${JSON.stringify(raw).slice(0, 200)}`
    }
    const child = wire(raw) as KubeObject
    const type = controller.childTypes.find(t => t.apiVersion === child.apiVersion && t.kind === child.kind)
    if (type === undefined) {
      // Metacontroller would create it and never see it again; the simulator refuses it outright.
      return `desired child ${describeRef(refOf(child))} is not of a declared child type (${controller.childTypes.map(t => `${t.kind}.${t.apiVersion}`).join(', ')})`
    }
    if (type.namespaced && child.metadata.namespace === undefined && parent.metadata.namespace !== undefined) child.metadata.namespace = parent.metadata.namespace
    if (controller.generateSelector) {
      child.metadata.labels = { ...child.metadata.labels }
      child.metadata.labels[CONTROLLER_UID_LABEL] ??= parent.metadata.uid as string
    }
    if (!matchesSelector(selector, child.metadata.labels)) {
      return `labels on desired child ${describeRef(refOf(child))} don't match parent selector`
    }
    if (controller.parentType.namespaced && type.namespaced && child.metadata.namespace !== parent.metadata.namespace) {
      return `desired child ${describeRef(refOf(child))} is outside the parent's namespace ${parent.metadata.namespace ?? ''}`
    }
    return child
  }

  // ---- customize and related objects ---------------------------------------------------------

  private async relatedObjects (controller: Controller, parent: KubeObject): Promise<ObjectMap | string> {
    const related: ObjectMap = {}
    const rules = await this.relatedRules(controller, parent)
    if (typeof rules === 'string') return rules
    for (const rule of rules) {
      const type = this.resources.byResource(rule.apiVersion, rule.resource)
      if (type === undefined) return `customize: unknown related resource ${rule.resource} in ${rule.apiVersion}`
      const group = (related[`${type.kind}.${type.apiVersion}`] ??= {})
      const problem = ruleProblem(controller, parent, rule)
      if (problem !== undefined) return `customize: ${problem}`
      for (const object of this.store.list(type.apiVersion, type.kind)) {
        if (!this.ruleMatches(controller, parent, rule, type, object)) continue
        // v1 requests of a namespaced parent drop what lies outside its namespace.
        if (controller.version === 'v1' && controller.parentType.namespaced && object.metadata.namespace !== parent.metadata.namespace) continue
        group[objectKey(controller, parent, object)] = object
      }
    }
    return related
  }

  private async relatedRules (controller: Controller, parent: KubeObject): Promise<RelatedResourceRule[] | string> {
    const customize = controller.hooks.customize
    if (customize === undefined) return []
    const uid = parent.metadata.uid as string
    const cached = this.cachedRules(parent)
    if (cached !== undefined) return cached
    const answer = await this.callCustomize(controller, { controller: controller.object, parent })
    if (!answer.ok) return `customize hook failed: ${answer.error}`
    this.customizeCache.set(uid, { generation: parent.metadata.generation ?? 0, rules: answer.value.relatedResources, expiresAt: this.nowMs + this.customizeCacheMs })
    return answer.value.relatedResources
  }

  private cachedRules (parent: KubeObject): RelatedResourceRule[] | undefined {
    const cached = this.customizeCache.get(parent.metadata.uid as string)
    if (cached === undefined || cached.generation !== (parent.metadata.generation ?? 0) || cached.expiresAt <= this.nowMs) return undefined
    return cached.rules
  }

  /** Whether `object` is selected by a related rule of `parent`. */
  private ruleMatches (controller: Controller, parent: KubeObject, rule: RelatedResourceRule, type: ResourceType, object: KubeObject): boolean {
    return relatedRuleMatches(controller, parent, rule, type, object, name => this.store.get({ apiVersion: 'v1', kind: 'Namespace', name })?.metadata.labels)
  }

  // ---- calling the hooks ---------------------------------------------------------------------

  private context (): HookContext {
    return { now: new Date(this.nowMs), scripts: this.scripts }
  }

  private async httpApp (): Promise<FastifyInstance> {
    if (this.app !== undefined) return this.app
    this.appPromise ??= buildApp({
      logger: false,
      scripts: this.scripts,
      clock: () => new Date(this.nowMs),
      kinds: [...new Set(this.controllers.map(c => c.hooks))],
      effects: this.effects
    })
    this.app = await this.appPromise
    return this.app
  }

  private async callSync (controller: Controller, request: SyncRequest, hook: 'sync' | 'finalize' = 'sync'): Promise<HookAnswer<SyncResponse>> {
    let body: unknown
    if (this.transport === 'http') {
      const app = await this.httpApp()
      if (this.checkReads) this.compareReads(controller.hooks, hook, request)
      const reply = await app.inject({ method: 'POST', url: `/hooks/${controller.hooks.kind}/${hook}`, payload: wire(request) as object })
      if (reply.statusCode !== 200) return { ok: false, error: `sync hook answered HTTP ${reply.statusCode}: ${reply.body.slice(0, 500)}` }
      try {
        body = JSON.parse(reply.body)
      } catch {
        return { ok: false, error: `sync hook answered something that is not JSON: ${reply.body.slice(0, 200)}` }
      }
    } else {
      const context = this.context()
      const result = runSyncHook(controller.hooks, hook, wire(request), context)
      body = wire(withEffectOutcomes(result.response, this.effects.applyNow(refTo(request.parent), wire(result.effects)), context.now))
    }
    const problem = schemaProblem(SyncResponseSchema, body, controller.version)
    if (problem !== undefined) return { ok: false, error: `sync hook answer refused: ${problem}` }
    return { ok: true, value: body as SyncResponse }
  }

  /** Throws when the hook answers the whole request otherwise than the one built to its kind's reads. */
  private compareReads (hooks: KindHooks, hook: 'sync' | 'finalize', request: SyncRequest): void {
    const bytes = Buffer.from(JSON.stringify(request))
    const answer = (built: SyncRequest): string => {
      const { response, effects } = runSyncHook(hooks, hook, built, this.context())
      return JSON.stringify({ response, effects })
    }
    const whole = answer(JSON.parse(bytes.toString()) as SyncRequest)
    const read = answer(project(bytes, syncRequestShape(hooks.reads)) as SyncRequest)
    if (whole !== read) {
      throw new Error(`the ${hooks.kind} ${hook} hook answers differently when it gets only what its reads declare (src/k8s/reads.ts):\nwhole: ${whole.slice(0, 2000)}\nread:  ${read.slice(0, 2000)}`)
    }
  }

  private async callCustomize (controller: Controller, request: CustomizeRequest): Promise<HookAnswer<CustomizeResponse>> {
    const customize = controller.hooks.customize
    if (customize === undefined) return { ok: true, value: { relatedResources: [] } }
    let body: unknown
    if (this.transport === 'http') {
      const app = await this.httpApp()
      const reply = await app.inject({ method: 'POST', url: `/hooks/${controller.hooks.kind}/customize`, payload: wire(request) as object })
      if (reply.statusCode !== 200) return { ok: false, error: `HTTP ${reply.statusCode}: ${reply.body.slice(0, 500)}` }
      body = JSON.parse(reply.body)
    } else {
      try {
        body = wire(customize(wire(request), this.context()))
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error.message : String(error) }
      }
    }
    const problem = schemaProblem(CustomizeResponseSchema, body, controller.version)
    if (problem !== undefined) return { ok: false, error: `answer refused: ${problem}` }
    return { ok: true, value: body as CustomizeResponse }
  }

  /** Closes the fastify app, if one was built. */
  async close (): Promise<void> {
    const app = this.app ?? (this.appPromise !== undefined ? await this.appPromise : undefined)
    this.app = undefined
    this.appPromise = undefined
    if (app !== undefined) await app.close()
  }

  // ---- watches: who must reconcile after a change --------------------------------------------

  private onChange (old: KubeObject | undefined, current: KubeObject | undefined): void {
    const object = (current ?? old) as KubeObject
    // The Job controller sees new Jobs, and Jobs suspended or resumed.
    if (object.apiVersion === 'batch/v1' && object.kind === 'Job') {
      if (old === undefined) {
        this.schedule({ type: 'job-start', at: this.nowMs + (this.jobs.startDelaySeconds ?? 0) * 1000, ref: refOf(object), uid: object.metadata.uid as string })
      } else if (current !== undefined && isSuspended(old) !== isSuspended(current)) {
        this.schedule({ type: 'job-suspend', at: this.nowMs, ref: refOf(object), uid: object.metadata.uid as string })
      } else if (current === undefined) {
        this.pausedJobs.delete(object.metadata.uid as string)
      }
    }
    for (const controller of this.controllers) {
      const { parentType } = controller
      if (object.apiVersion === parentType.apiVersion && object.kind === parentType.kind) {
        if (current === undefined) {
          this.dirty.delete(refKey(refOf(object)))
          this.customizeCache.delete(object.metadata.uid as string)
        } else {
          this.enqueue(refOf(object))
        }
        continue
      }
      const parents = this.store.list(parentType.apiVersion, parentType.kind)
      if (controller.childTypes.some(t => t.apiVersion === object.apiVersion && t.kind === object.kind)) {
        const owners = new Set([old, current].map(o => (o === undefined ? undefined : controllerOf(o)?.uid)))
        for (const parent of parents) {
          if (owners.has(parent.metadata.uid)) this.enqueue(refOf(parent))
          else if (owners.has(undefined) && controllerOf(object) === undefined && this.couldAdopt(controller, parent, object)) this.enqueue(refOf(parent))
        }
      }
      for (const parent of parents) {
        const rules = this.cachedRules(parent)
        if (rules === undefined) continue
        const hit = rules.some(rule => {
          const type = this.resources.byResource(rule.apiVersion, rule.resource)
          return type !== undefined && [old, current].some(o => o !== undefined && this.ruleMatches(controller, parent, rule, type, o))
        })
        if (hit) this.enqueue(refOf(parent))
      }
    }
  }

  private couldAdopt (controller: Controller, parent: KubeObject, object: KubeObject): boolean {
    if (controller.parentType.namespaced && parent.metadata.namespace !== object.metadata.namespace) return false
    try {
      return matchesSelector(this.parentSelector(controller, parent), object.metadata.labels)
    } catch {
      return false
    }
  }

  private enqueue (ref: ObjectRef): void {
    const key = refKey(ref)
    if (!this.dirty.has(key)) this.dirty.set(key, ref)
  }

  private schedule (event: Unscheduled): void {
    this.seq += 1
    const scheduled = { ...event, seq: this.seq } as Scheduled
    this.queue.push(scheduled)
    this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq)
  }

  /** Like a workqueue's AddAfter: one pending resync per parent, the earliest wins. */
  private scheduleResync (parent: KubeObject, seconds: number, retry: boolean): void {
    const at = this.nowMs + seconds * 1000
    const uid = parent.metadata.uid as string
    const pending = this.queue.find(e => e.type === 'resync' && e.uid === uid)
    if (pending !== undefined) {
      if (pending.at <= at) return
      this.queue = this.queue.filter(e => e !== pending)
    }
    this.schedule({ type: 'resync', at, ref: refOf(parent), uid, retry })
  }

  // ---- garbage collection --------------------------------------------------------------------

  /** Deletes, until none is left, every object whose owners are all gone. */
  private collectGarbage (): void {
    for (;;) {
      const uids = new Set(this.store.all().map(o => o.metadata.uid))
      const orphaned = this.store.all().find(o => {
        const owners = o.metadata.ownerReferences ?? []
        return owners.length > 0 && owners.every(r => !uids.has(r.uid))
      })
      if (orphaned === undefined) return
      this.store.delete(refOf(orphaned))
      this.record({ type: 'deleted', object: refOf(orphaned), cause: 'garbage-collector', ...this.ownerOf(orphaned) })
    }
  }

  // ---- bookkeeping ---------------------------------------------------------------------------

  private record (event: Omit<TimelineEvent, 'seconds'>): void {
    this.timeline.push({ seconds: this.seconds(), ...event })
  }

  private note (what: string, changes: string[]): void {
    this.history.push({ seconds: this.seconds(), what, changes })
    if (this.history.length > 200) this.history.splice(0, this.history.length - 200)
  }

  private ownerOf (object: KubeObject): { owner?: ObjectRef } {
    const ref = controllerOf(object)
    if (ref === undefined) return {}
    const owner: ObjectRef = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name }
    if (object.metadata.namespace !== undefined && this.resources.isNamespaced(ref.apiVersion, ref.kind)) owner.namespace = object.metadata.namespace
    return { owner }
  }

  private controllerOf (parent: KubeObject): Controller | undefined {
    return this.controllers.find(c => c.parentType.apiVersion === parent.apiVersion && c.parentType.kind === parent.kind)
  }

  private resolveController (config: ControllerConfig, index: number): Controller {
    const parentType = this.resources.resolve(config.parent)
    const childTypes = config.children.map(c => this.resources.resolve(c))
    const childMethods = childUpdateMethods(config, childTypes)
    for (const [group, method] of childMethods) {
      if (method !== 'OnDelete' && method !== 'InPlace') throw new Error(`${group}: the simulator plays the update strategies OnDelete and InPlace, not ${method}`)
    }
    const version = config.hookVersion ?? 'v2'
    const generateSelector = config.generateSelector ?? true
    const name = config.name ?? `${parentType.resource}-controller`
    const hook = (path: string): Record<string, unknown> => ({ version, webhook: { url: `http://jobhooks.jobhooks-system/hooks/${config.hooks.kind}/${path}`, timeout: '10s' } })
    const object: KubeObject = {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name, uid: `00000000-0000-4000-9000-${(index + 1).toString(16).padStart(12, '0')}`, generation: 1 },
      spec: {
        generateSelector,
        parentResource: { apiVersion: parentType.apiVersion, resource: parentType.resource },
        childResources: childTypes.map(t => ({ apiVersion: t.apiVersion, resource: t.resource, updateStrategy: { method: childMethods.get(groupKey(t.kind, t.apiVersion)) ?? 'OnDelete' } })),
        hooks: {
          sync: hook('sync'),
          ...(config.hooks.finalize !== undefined ? { finalize: hook('finalize') } : {}),
          ...(config.hooks.customize !== undefined ? { customize: hook('customize') } : {})
        }
      },
      status: {}
    }
    return { config, hooks: config.hooks, parentType, childTypes, childMethods, version, generateSelector, object }
  }
}

/** The update strategy of each child group of `config` (its `childTypes`, resolved in order); OnDelete where unset. */
export function childUpdateMethods (config: ControllerConfig, childTypes: readonly ResourceType[]): Map<string, UpdateMethod> {
  return new Map(childTypes.map((type, i) => [groupKey(type.kind, type.apiVersion), config.children[i]?.updateStrategy ?? 'OnDelete']))
}

function ownerReference (parent: KubeObject): OwnerReference {
  return { apiVersion: parent.apiVersion, kind: parent.kind, name: parent.metadata.name, uid: parent.metadata.uid as string, controller: true, blockOwnerDeletion: true }
}

/** What of a desired child apply would compare: no status, metadata reduced to labels and annotations. */
export function comparable (child: KubeObject): Record<string, unknown> {
  const { status: _status, metadata, ...rest } = child
  const annotations = { ...metadata.annotations }
  delete annotations[LAST_APPLIED_ANNOTATION]
  return {
    ...rest,
    metadata: {
      ...(metadata.labels !== undefined ? { labels: metadata.labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {})
    }
  }
}

/**
 * What the request's keys, rule checks and rule matching depend on of a controller: its parent's
 * scope and its hook version. The live preview (src/cli/) builds requests with these too.
 */
export interface ControllerScope {
  parentType: { namespaced: boolean }
  version: HookVersion
}

/** `name` or `namespace/name`, as the hook version and the parent's scope decide. */
export function objectKey (controller: ControllerScope, parent: KubeObject, object: KubeObject): string {
  const namespace = object.metadata.namespace
  if (namespace === undefined) return object.metadata.name
  if (controller.version === 'v2') return `${namespace}/${object.metadata.name}`
  return controller.parentType.namespaced && parent.metadata.namespace !== undefined ? object.metadata.name : `${namespace}/${object.metadata.name}`
}

/**
 * Whether `object` (of `type`) is selected by a related rule of `parent`; `namespaceLabels` gives
 * the labels of a Namespace, for rules with a namespaceSelector.
 */
export function relatedRuleMatches (
  controller: ControllerScope, parent: KubeObject, rule: RelatedResourceRule, type: Pick<ResourceType, 'apiVersion' | 'kind' | 'namespaced'>, object: KubeObject,
  namespaceLabels: (name: string) => Record<string, string> | undefined
): boolean {
  if (object.apiVersion !== type.apiVersion || object.kind !== type.kind) return false
  const parentNamespace = controller.parentType.namespaced ? parent.metadata.namespace : undefined
  // customize/manager.go determineSelectionType: names (with or without a namespace), a namespace
  // alone, a labelSelector with a namespace, a namespaceSelector, or a labelSelector alone.
  if (rule.names !== undefined || (rule.namespace !== undefined && rule.labelSelector === undefined)) {
    const namespace = rule.namespace ?? (controller.version === 'v1' ? parentNamespace : undefined)
    if (type.namespaced && namespace !== undefined && object.metadata.namespace !== namespace) return false
    return rule.names === undefined || rule.names.includes(object.metadata.name)
  }
  if (type.namespaced) {
    if (rule.namespaceSelector !== undefined) {
      if (!matchesSelector(rule.namespaceSelector, namespaceLabels(object.metadata.namespace ?? ''))) return false
    } else if (rule.namespace !== undefined) {
      if (object.metadata.namespace !== rule.namespace) return false
    } else if (controller.version === 'v1' && parentNamespace !== undefined && object.metadata.namespace !== parentNamespace) {
      // A label rule alone lists the parent's namespace under v1, every namespace under v2.
      return false
    }
  }
  return matchesSelector(rule.labelSelector, object.metadata.labels)
}

/** What Metacontroller refuses in a related rule. */
export function ruleProblem (controller: ControllerScope, parent: KubeObject, rule: RelatedResourceRule): string | undefined {
  if (rule.names !== undefined && (rule.labelSelector !== undefined || rule.namespaceSelector !== undefined)) {
    return `rule for ${rule.resource}: names cannot be combined with labelSelector or namespaceSelector`
  }
  if (rule.namespace !== undefined && rule.namespaceSelector !== undefined) return `rule for ${rule.resource}: namespace cannot be combined with namespaceSelector`
  const namespaced = controller.parentType.namespaced
  if (namespaced && controller.version === 'v1') {
    if (rule.namespace !== undefined && rule.namespace !== parent.metadata.namespace) {
      return `requested related object namespace ${rule.namespace} differs from parent object namespace ${parent.metadata.namespace ?? ''}`
    }
    if (rule.namespaceSelector !== undefined) return `rule for ${rule.resource}: namespaceSelector needs hook version v2 or a cluster-scoped parent`
  }
  return undefined
}

/**
 * Whether a hook answer decodes: v2 decodes strictly (an unknown top-level field is an error),
 * v1 loosely (unknown top-level fields are ignored).
 */
function schemaProblem (schema: typeof SyncResponseSchema | typeof CustomizeResponseSchema, body: unknown, version: HookVersion): string | undefined {
  let value = body
  if (version === 'v1' && isRecord(body)) {
    const known = Object.keys(schema.properties)
    value = Object.fromEntries(Object.entries(body).filter(([k]) => known.includes(k)))
  }
  if (Value.Check(schema, value)) return undefined
  return [...Value.Errors(schema, value)].slice(0, 3).map(e => `${e.path === '' ? '(top level)' : e.path}: ${e.message}`).join('; ')
}

/** The message of a `Valid` condition that is False: why jobhooks refused a spec. */
function invalidMessage (status: Record<string, unknown>): string | undefined {
  const conditions = Array.isArray(status.conditions) ? status.conditions : []
  const valid = conditions.find(c => isRecord(c) && c.type === 'Valid' && c.status === 'False')
  return isRecord(valid) && typeof valid.message === 'string' ? valid.message : undefined
}

function describeChanges (result: ReconcileResult): string[] {
  return [
    ...(result.error !== undefined ? [`error: ${result.error.slice(0, 200)}`] : []),
    ...result.created.map(r => `created ${describeRef(r)}`),
    ...result.deleted.map(r => `deleted ${describeRef(r)}`),
    ...result.adopted.map(r => `adopted ${describeRef(r)}`),
    ...result.released.map(r => `released ${describeRef(r)}`),
    ...result.updated.map(r => `updated ${describeRef(r)}`),
    ...result.statusDiff.map(p => `changed ${p}`),
    ...(result.resyncAfterSeconds !== undefined ? [`resync in ${result.resyncAfterSeconds}s`] : [])
  ]
}
