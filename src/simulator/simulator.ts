// An in-process Metacontroller, API server, Job controller and garbage collector, for scenario
// tests and `npm run simulate`. It plays a CompositeController the way Metacontroller does (its
// pkg/controller/composite and pkg/controller/common in the v4.17.2 source):
//
// - children are the objects of the declared child types that the parent controls (controller
//   ownerReference with its uid), claimed with the parent's selector (generateSelector: the
//   `controller-uid` label), orphans adopted, non-matching ones released (./reconcile.ts);
// - `children` and `related` are keyed `"<Kind>.<apiVersion>"` with one entry per child type and
//   per related rule even when empty, objects keyed `name` (v1, namespaced parent) or
//   `namespace/name` (v2), and v1 drops related objects outside the parent's namespace;
// - customize is called once per (parent uid, generation) and cached for 20 minutes; a related
//   object that a cached rule matches enqueues the parent (./related.ts, ./watches.ts);
// - the hook is called through the real fastify app (`buildApp`, `app.inject`) with the simulated
//   clock, and its answer must be HTTP 200 and match the response schema, or nothing changes
//   (./transport.ts);
// - dynamic apply (./children.ts, ./apply.ts): observed children not desired are deleted; missing
//   children are created with a controller ownerReference and the last-applied annotation;
//   existing ones are merged with the answer three ways and, when that changes them, left as they
//   are under the update strategy OnDelete or written (PUT) under InPlace, the strategies the
//   controller gives each child type; a child the API server refuses fails the sync after the
//   rest is done; then the parent's status is replaced by the answer's status plus
//   observedGeneration, and written only if it differs;
// - every write to a parent, to a child it owns, or to an object its related rules match
//   enqueues the parent again (Metacontroller reacts to its own status writes too).
//
// Time is simulated (./clock.ts, ./scheduler.ts): nothing sleeps, `Date` comes only from the
// simulated clock, and every generated uid and resourceVersion comes from a counter, so runs are
// deterministic. Jobs run as ./job-controller.ts scripts them; deletion and garbage collection
// are ./garbage.ts's; with a quota in the options, Kueue admits queued Jobs (./kueue.ts). This
// file wires the parts and is what scenarios drive.
import type { KubeObject } from '../k8s/types.js'
import { LAST_APPLIED_ANNOTATION } from '../k8s/objects.js'
import { shippedScriptLibrary } from '../scripts/library.js'
import { describeRef, refKey, refOf, wire, type ObjectRef } from './objects.js'
import { ObjectStore } from './store.js'
import { ResourceTable, type TypeName } from './resources.js'
import type { JobResult, JobScript } from './jobs.js'
import { SimulatorExecutor } from './effects.js'
import { EphemeralKubelet } from './ephemeraljob.js'
import { Clock } from './clock.js'
import { Scheduler, type Scheduled } from './scheduler.js'
import { Timeline } from './timeline.js'
import { GarbageCollector } from './garbage.js'
import { JobController } from './job-controller.js'
import { Kueue } from './kueue.js'
import { resolveController } from './controller.js'
import { RelatedObjects } from './related.js'
import { HookTransport } from './transport.js'
import { Reconciler } from './reconcile.js'
import { enqueueWatchers } from './watches.js'
import type { World } from './world.js'
import type { ReconcileResult, RunOptions, RunSummary, SimulatorOptions, TimelineEvent } from './types.js'

// Scenarios and the CLI import the simulator's vocabulary from here, with the simulator.
export type * from './types.js'
export { CONTROLLER_UID_LABEL, childUpdateMethods } from './controller.js'
export { comparable } from './children.js'
export { objectKey, relatedRuleMatches, ruleProblem } from './related.js'
export { LAST_APPLIED_ANNOTATION }

export class Simulator {
  readonly timeline: TimelineEvent[]
  readonly resources: ResourceTable
  readonly store: ObjectStore
  /** Status writes per parent (`namespace/name`), to check that a quiet system stays quiet. */
  readonly statusWrites: Map<string, number>
  /** Applies the hooks' effects to the store (both transports); its log lists every effect applied. */
  readonly effects: SimulatorExecutor
  /** Moves injected ephemeral containers through waiting, running and terminated. */
  readonly kubelet: EphemeralKubelet

  private readonly world: World
  private readonly jobs: JobController
  /** Kueue, when the options give it a quota. */
  private readonly kueue: Kueue | undefined
  private readonly coalesce: boolean
  private readonly transport: HookTransport
  private readonly reconciler: Reconciler

  constructor (options: SimulatorOptions) {
    this.resources = new ResourceTable()
    for (const type of options.resources ?? []) this.resources.add(type)
    const clock = new Clock(options.start)
    const scripts = options.scripts ?? shippedScriptLibrary()
    this.store = new ObjectStore(() => clock.nowMs, (old, current) => { this.onChange(old, current) })
    const timeline = new Timeline(clock)
    const world: World = {
      store: this.store,
      resources: this.resources,
      clock,
      scheduler: new Scheduler(clock),
      timeline,
      gc: new GarbageCollector(this.store, this.resources, timeline)
    }
    this.world = world
    this.timeline = timeline.events
    this.jobs = new JobController(world, { ...options.jobs, outcomes: { ...options.jobs?.outcomes } })
    const kueue = options.kueue !== undefined ? new Kueue(world, options.kueue) : undefined
    this.kueue = kueue
    this.coalesce = options.coalesce ?? false
    if (kueue !== undefined) this.store.createWebhooks.push(stored => { kueue.webhook(stored) })
    const controllers = options.controllers.map((config, i) => resolveController(this.resources, config, i))
    this.kubelet = new EphemeralKubelet({
      store: this.store,
      nowMs: () => clock.nowMs,
      schedule: (seconds, ref, uid, what, run) => {
        world.scheduler.schedule({ type: 'call', at: clock.inSeconds(seconds), ref, uid, what, run })
      },
      record: (type, pod, message) => { timeline.record({ type, object: pod, message }) }
    }, options.ephemeral)
    this.effects = new SimulatorExecutor({
      store: this.store,
      seconds: () => clock.seconds(),
      nowMs: () => clock.nowMs,
      remove: ref => world.gc.remove(ref, 'effect'),
      injected: (pod, containers) => {
        timeline.record({ type: 'injected', object: refOf(pod), message: containers.map(c => c.name).join(', ') })
        this.kubelet.injected(pod, containers)
      }
    })
    this.transport = new HookTransport({
      transport: options.transport ?? 'http',
      checkReads: options.checkReads ?? true,
      scripts,
      clock,
      kinds: [...new Set(controllers.map(c => c.hooks))],
      effects: this.effects
    })
    const related = new RelatedObjects(world, this.transport, (options.customizeCacheSeconds ?? 1200) * 1000)
    this.onChange = (old, current) => {
      this.jobs.watch(old, current)
      kueue?.watch(old, current)
      enqueueWatchers(world, controllers, related, old, current)
    }
    const admit = (stored: KubeObject): void => { this.jobs.admit(stored) }
    this.reconciler = new Reconciler({ world, controllers, related, transport: this.transport, admit })
    this.statusWrites = this.reconciler.statusWrites
  }

  /** Who must act after a change to the store; set once every part exists. */
  private onChange: (old: KubeObject | undefined, current: KubeObject | undefined) => void = () => {}

  // ---- clock and queries ---------------------------------------------------------------------

  /** The simulated time. */
  now (): Date {
    return this.world.clock.now()
  }

  /** Simulated seconds since the start. */
  seconds (): number {
    return this.world.clock.seconds()
  }

  /** Simulated seconds since the start of an ISO time (e.g. a status time), for reports. */
  secondsAt (time: string): number {
    return this.world.clock.secondsAt(time)
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
    return this.reconciler.lastResults.get(refKey(ref))
  }

  /** Whether anything is owed: a parent to reconcile or a clock event. */
  isQuiet (): boolean {
    return this.world.scheduler.isQuiet() && this.kueue?.due !== true
  }

  /** A plain-text timeline, one event a line, for test diagnostics. */
  timelineText (): string {
    return this.world.timeline.text()
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
      this.world.timeline.record({ type: 'applied', object: ref })
      return created
    }
    const updated = this.store.update(desired)
    if (updated.metadata.resourceVersion !== existing.metadata.resourceVersion) {
      this.world.timeline.record({ type: 'edited', object: ref })
    }
    return updated
  }

  /**
   * `kubectl edit`: `mutate` changes a copy of the object, which then replaces it; `what` says how, for the timeline.
   */
  edit (ref: ObjectRef, mutate: (object: KubeObject) => void, what?: string): KubeObject {
    const existing = this.store.get(ref)
    if (existing === undefined) throw new Error(`cannot edit ${describeRef(ref)}: not found`)
    mutate(existing)
    const updated = this.store.update(existing)
    if (updated.metadata.resourceVersion !== existing.metadata.resourceVersion) {
      this.world.timeline.record({ type: 'edited', object: ref, ...(what !== undefined ? { message: what } : {}) })
    }
    return updated
  }

  /**
   * `kubectl delete` (background propagation): the garbage collector deletes what it owned. An
   * object with finalizers (a parent whose controller has a finalize hook) only starts terminating.
   */
  delete (ref: ObjectRef): boolean {
    return this.world.gc.remove(ref, 'user')
  }

  /** Deletes a Job by hand. */
  deleteJob (name: string, namespace = 'default'): boolean {
    return this.delete({ apiVersion: 'batch/v1', kind: 'Job', namespace, name })
  }

  /** What a Job (by name, or flow name) will do; read when the Job starts, so it applies to Jobs not started yet. */
  setJobOutcome (name: string, script: JobScript | JobResult): void {
    this.jobs.setOutcome(name, script)
  }

  /**
   * The next reconcile of `ref` is handed `older` as its parent, as Metacontroller's informer
   * hands a sync its cached copy, which may not have caught up with the last status writes yet.
   * The status is still written over the live object (Metacontroller's AtomicStatusUpdate reads
   * the latest copy and replaces its status with the hook's).
   */
  handOlderParent (ref: ObjectRef, older: KubeObject): void {
    this.reconciler.olderParents.set(refKey(ref), wire(older))
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
    if (!met) {
      const when = `at t=${this.seconds()}s`
      throw new Error(`the simulation went quiet ${when} before the condition held\n${this.timelineText()}`)
    }
    return summary
  }

  /** Runs everything due in the next `seconds` and leaves the clock there. */
  async advance (seconds: number, options: Omit<RunOptions, 'untilSeconds'> = {}): Promise<RunSummary> {
    const { clock } = this.world
    const target = this.seconds() + seconds
    const summary = await this.run(() => false, { ...options, untilSeconds: target })
    if (clock.nowMs < clock.startMs + target * 1000) clock.nowMs = clock.startMs + target * 1000
    return summary
  }

  /** One sync of a parent, as Metacontroller does it. Also used by `runUntilQuiet`. */
  async reconcile (ref: ObjectRef): Promise<ReconcileResult> {
    return await this.reconciler.reconcile(ref)
  }

  /** Closes the fastify app, if one was built. */
  async close (): Promise<void> {
    await this.transport.close()
  }

  private async run (stop: () => boolean, options: RunOptions): Promise<RunSummary> {
    const { clock, scheduler } = this.world
    const maxSteps = options.maxSteps ?? 1000
    const horizon = options.untilSeconds === undefined ? Infinity : clock.startMs + options.untilSeconds * 1000
    let steps = 0
    let reconciles = 0
    const started = clock.nowMs
    if (stop()) return { steps, reconciles, seconds: 0 }
    for (;;) {
      if (steps >= maxSteps) throw new Error(this.world.timeline.notQuietMessage(maxSteps))
      const next = scheduler.dirty.values().next()
      // Kueue's pass first: a Job it admits now starts on its first step, unsuspended.
      if (this.kueue?.due === true) {
        this.kueue.reconcile()
      } else if (next.done !== true) {
        await this.reconcile(next.value)
        reconciles += 1
      } else {
        const event = scheduler.takeDue(horizon)
        if (event === undefined) break
        if (event.at > clock.nowMs) clock.nowMs = event.at
        this.handle(event)
        // Metacontroller's queue folds a burst of events into one sync of each parent.
        for (let more = this.coalesce ? scheduler.takeDue(clock.nowMs) : undefined; more !== undefined;
          more = scheduler.takeDue(clock.nowMs)) {
          this.handle(more)
          steps += 1
        }
      }
      steps += 1
      if (stop()) break
    }
    return { steps, reconciles, seconds: (clock.nowMs - started) / 1000 }
  }

  /** A clock event, for an object that still exists with the event's uid. */
  private handle (event: Scheduled): void {
    const current = this.store.get(event.ref)
    if (current === undefined || current.metadata.uid !== event.uid) return
    switch (event.type) {
      case 'resync':
        this.world.timeline.note(`${event.retry ? 'retry' : 'resync'} ${describeRef(event.ref)}`, [])
        this.world.scheduler.enqueue(event.ref)
        return
      case 'call':
        this.world.timeline.note(event.what, [])
        event.run()
        return
      default:
        this.jobs.handle(event, current)
    }
  }
}
