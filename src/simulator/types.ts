// The simulator's vocabulary: what a scenario configures (controllers, options) and what it reads
// back (timeline, reconcile results). Every part of the simulator imports these from here.
import type { KindHooks, SyncRequest, SyncResponse, UpdateMethod } from '../protocol/hooks.js'
import type { KubeObject } from '../k8s/types.js'
import type { ScriptLibrary } from '../scripts/library.js'
import type { ObjectRef } from './objects.js'
import type { ResourceType, TypeName } from './resources.js'
import type { JobBehaviour } from './jobs.js'

export type HookVersion = 'v1' | 'v2'
export type Transport = 'http' | 'direct'

/** A CompositeController, as far as the simulator needs one. */
export interface ControllerConfig {
  /** The CompositeController's name; `<resource>-controller` when unset. */
  name?: string
  hooks: KindHooks
  parent: TypeName
  /**
   * The child types, each with its update strategy (OnDelete when unset; the simulator plays
   * OnDelete and InPlace).
   */
  children: ChildType[]
  /** The hooks' `version`. Default v2, as our manifests register them. */
  hookVersion?: HookVersion
  /** Default true, as our CompositeControllers set it. */
  generateSelector?: boolean
}

/** A child type of a CompositeController, with its `updateStrategy.method`. */
export type ChildType = TypeName & { updateStrategy?: UpdateMethod }

/** What an ephemeral container does: exit with this code, or run until the Pod goes (`hang`). */
export type ContainerExit = number | 'hang'

/** What injected ephemeral containers do (the kubelet's part, ephemeraljob.ts). */
export interface EphemeralBehaviour {
  /** Seconds from injection to running (the image pull). Default 1. */
  startAfterSeconds?: number
  /** Seconds from running to terminated. Default 5. */
  runSeconds?: number
  /** Per Pod name: one exit for every container, or per container name. Default exit code 0. */
  exits?: Record<string, ContainerExit | Record<string, ContainerExit>>
}

/** Kueue as the simulator plays it (./kueue.ts). */
export interface KueueBehaviour {
  /** How many queued Jobs may be admitted (unsuspended and unfinished) at once. */
  quota: number
}

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
  /**
   * Model Kueue (./kueue.ts) with this quota: Jobs labelled with a queue name are created
   * suspended and admitted in order. Unset: no Kueue, a queued Job stays as it was created.
   */
  kueue?: KueueBehaviour
  /**
   * Handle every clock event due at one instant before any parent reconciles, as Metacontroller's
   * queue folds a burst into one sync (default false: a sync after each event, which the examples'
   * timelines show). With thousands of Jobs finishing together, syncs then follow the waves.
   */
  coalesce?: boolean
}

export type TimelineType =
  | 'applied' | 'edited' | 'deleted' | 'terminating' | 'created' | 'adopted' | 'released'
  | 'job-started' | 'job-succeeded' | 'job-failed' | 'job-suspended' | 'job-resumed' | 'updated' | 'phase'
  | 'sync-error' | 'injected' | 'container-started' | 'container-finished'
  | 'kueue-admitted' | 'kueue-preempted' | 'kueue-suspended' | 'kueue-unsuspended'

/** Who deleted an object (`ttl`: Kubernetes' TTL-after-finished controller). */
export type DeleteCause = 'user' | 'controller' | 'garbage-collector' | 'effect' | 'finalized' | 'ttl'

export interface TimelineEvent {
  /** Simulated seconds since the simulation started. */
  seconds: number
  type: TimelineType
  object: ObjectRef
  /** The object's controller (its parent), for children. */
  owner?: ObjectRef
  /**
   * `deleted`: who deleted it (`ttl`: Kubernetes' TTL-after-finished controller, for a Job's
   * ttlSecondsAfterFinished).
   */
  cause?: DeleteCause
  /** `phase`: the parent's new phase and the one before (its message: a `Valid` False condition's). */
  phase?: string
  previousPhase?: string
  /**
   * Also `kueue-preempted`: `for <the Job admitted instead>`. The `kueue-*` events are Kueue's
   * writes of a Job's `spec.suspend`: it admitted the Job, preempted it, or undid someone else's
   * write (suspended a Job it has not admitted, unsuspended one it has).
   */
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
  /**
   * Stop, without throwing, before the first event later than this many simulated seconds from
   * the start.
   */
  untilSeconds?: number
}

export interface RunSummary {
  steps: number
  reconciles: number
  seconds: number
}

/**
 * What the request's keys, rule checks and rule matching depend on of a controller: its parent's
 * scope and its hook version. The live preview (src/cli/) builds requests with these too.
 */
export interface ControllerScope {
  parentType: { namespaced: boolean }
  version: HookVersion
}

/**
 * A CompositeController with its types resolved: what a reconcile, and the live preview's
 * request, work from.
 */
export interface Controller extends ControllerScope {
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
