// What an OperationJob action is (docs/plugins.md, "Writing an action"): data plus pure functions. An action
// names the related resources it needs, declares and checks its own spec field, and for one target
// computes the effects that operate it, reads its progress from the observed Pod, and computes the
// effects that release it. The OperationJob hooks own everything else: partition, deadlines, TTL,
// status, finalize. Types only: the registry (registry.ts) and every action import them from here.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import type { Effect } from '../effects/types.js'
import type { RelatedResourceRule } from '../protocol/schemas.js'
import type { ScriptLibrary } from '../scripts/library.js'
import type { StructuralSchema } from '../k8s/openapi.js'
import type { Shape } from '../k8s/reads.js'

export type TargetProgress = 'Pending' | 'Processing' | 'Succeeded' | 'Failed'

export interface TargetError {
  reason: string
  message: string
}

/** One entry of `status.targetDetails`: the memory of what became of a target. */
export interface TargetDetail {
  name: string
  progress: TargetProgress
  startTime?: string
  endTime?: string
  extraInfo?: Record<string, string>
  error?: TargetError
}

/** The OperationJob as an action sees it. */
export interface ActionJob {
  name: string
  namespace?: string
  uid?: string
  /** The whole `spec`, as observed: an action reads its own fields (`exec`, say) from it. */
  spec: Record<string, unknown>
  /** The names of every target Pod of the job, in spec order (as far as `spec.targets` reads). */
  targets: string[]
}

/** What an action function may read besides the target: the job, related objects, the clock, the shipped scripts. */
export interface ActionContext {
  job: ActionJob
  related: ObjectMap
  now: Date
  scripts: ScriptLibrary
}

/** One target of the job, with its Pod when the Pod exists. */
export interface ActionTarget {
  name: string
  /** `spec.targets[].containers`, possibly empty. */
  containers: string[]
  pod?: KubeObject
  /** The target's entry as it stands (extraInfo the action wrote before, say). */
  detail: TargetDetail
}

export interface OperateResult {
  effects: Effect[]
  /** Merged into the target's extraInfo; an empty string removes a key. */
  extraInfo?: Record<string, string>
  /** The target cannot be operated at all: it fails with this error. */
  error?: TargetError
  /** Look again this soon (a delay ends, or the Pod should have caught up with the effects by then). */
  resyncAfterSeconds?: number
}

export interface ProgressResult {
  progress: 'Processing' | 'Succeeded' | 'Failed'
  /** Why it failed; required when Failed. */
  error?: TargetError
  extraInfo?: Record<string, string>
}

export interface ReleaseResult {
  /** What is still owed to undo the operation; none means the target is released. */
  effects: Effect[]
  extraInfo?: Record<string, string>
}

/**
 * An action plugin. Every function is pure and idempotent: it is called on every sync with the
 * observed state, so an effect that was lost is computed again and one already applied must be a
 * no-op (or not be returned at all).
 */
export interface ActionHandler {
  /** Related resources the action reads besides the target Pods (the customize hook asks for them). */
  relatedResources?: (job: ActionJob) => RelatedResourceRule[]
  /** What is wrong with the action's part of the spec; an empty list when it is usable. */
  validate?: (job: ActionJob, scripts: ScriptLibrary) => string[]
  /**
   * What to remember about a started target whenever it is seen (extraInfo), from its first sync
   * on and before `progress`: a later sync judging from an older copy of the job's status then
   * still has what it needs (Metacontroller may hand a hook a stale parent, and writes its answer).
   */
  observe?: (target: ActionTarget, context: ActionContext) => Record<string, string> | undefined
  /** Operates a started target. Called when it starts and again on every sync while it is Processing. */
  operate: (target: ActionTarget, context: ActionContext) => OperateResult
  /** Reads the progress of a started, unfinished target. */
  progress: (target: ActionTarget, context: ActionContext) => ProgressResult
  /** Undoes what operate did, for a failed, timed-out or cancelled target. */
  release: (target: ActionTarget, context: ActionContext) => ReleaseResult
}

/** The action's own field of the OperationJob spec (`spec.exec` for Exec), with its schema. */
export interface ActionSpecField {
  /** The field's name under `spec`: lower camel case, not one of the OperationJob's own fields. */
  name: string
  /** Whether a job with this action must set the field (the CRD then says so in a rule). */
  required: boolean
  /**
   * The field's structural schema. It goes into the OperationJob CRD as it is (`npm run crds`),
   * and the hook checks the field against it before `validate` runs.
   */
  schema: StructuralSchema
}

/**
 * An action, whole: everything the service needs to know about it, in the one object its file
 * exports. `src/actions/index.ts` lists the actions the service runs.
 */
export interface ActionPlugin {
  /** What `spec.action` says: letters and digits, starting with a letter. */
  name: string
  handler: ActionHandler
  /**
   * Operate targets inside a PodOpsLifecycle (src/actions/lifecycle.ts): lock the Pod, take it
   * out of traffic, wait `operationDelaySeconds`, operate, put it back and wait for Ready.
   */
  podOpsLifecycle?: boolean
  /** The action's own spec field, if it has one. */
  specField?: ActionSpecField
  /**
   * What the action reads of a Pod beyond what the OperationJob hooks build of every Pod
   * (`POD_READS` in src/k8s/reads.ts): a field left out of both is never built, and reads as absent.
   */
  podReads?: Shape
}

/** An action as the registry holds it: the handler wrapped in the lifecycle when it asked for one. */
export interface RegisteredAction {
  name: string
  handler: ActionHandler
  podOpsLifecycle: boolean
  specField?: ActionSpecField
  podReads?: Shape
}
