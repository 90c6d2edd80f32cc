// Effects: what a hook needs done that Metacontroller cannot do for it (write a subresource,
// delete its own parent after a TTL, change Pods it does not own). Pure hooks return effects as
// data next to their answer; one executor applies them (docs/operations.md, "Effects and permissions").
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'

/** One RBAC rule's worth of access, as a ClusterRole spells it. */
export interface Permission {
  apiGroup: string
  resource: string
  verbs: string[]
}

/** An object an effect acts on. The UID guards every write: a new object of the same name is left alone. */
export interface ObjectRef {
  apiVersion: string
  kind: string
  namespace?: string
  name: string
  uid: string
}

/** The reference effects use for an observed object; none when it has no UID to guard with. */
export function refTo (object: KubeObject): ObjectRef | undefined {
  const { namespace, name, uid } = object.metadata
  if (typeof uid !== 'string') return undefined
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    ...(namespace !== undefined ? { namespace } : {}),
    name,
    uid
  }
}

/** Adds ephemeral containers to a Pod through its `pods/ephemeralcontainers` subresource. */
export interface InjectEphemeralContainers {
  type: 'InjectEphemeralContainers'
  target: ObjectRef
  containers: EphemeralContainer[]
}

/** Deletes an object (an EphemeralJob after its TTL, say), in the background. */
export interface DeleteObject {
  type: 'Delete'
  target: ObjectRef
}

/** A condition a Pod's status carries, as `SetPodCondition` writes it. */
export interface PodConditionValue {
  type: string
  status: 'True' | 'False' | 'Unknown'
  reason?: string
  message?: string
  /**
   * When the status last changed: the kubelet sets it for its own conditions; without it the API
   * server stores null.
   */
  lastTransitionTime?: string
}

/**
 * Sets one condition in a Pod's status (a readiness gate's, say) through the `pods/status`
 * subresource: a strategic-merge patch, so the conditions merge on `type` and the others stay.
 */
export interface SetPodCondition {
  type: 'SetPodCondition'
  target: ObjectRef
  condition: PodConditionValue
}

/**
 * Sets or removes labels of a Pod the hook does not own (OperationJob's `to-replace` request, the
 * PodOpsLifecycle lock): a strategic-merge patch of the Pod's metadata; `null` removes a label.
 */
export interface SetPodLabels {
  type: 'SetPodLabels'
  target: ObjectRef
  labels: Record<string, string | null>
}

/**
 * Evicts a Pod through the eviction API (`pods/eviction`), so PodDisruptionBudgets hold: a
 * refusal (HTTP 429) is a failure to retry, not an error in the job.
 */
export interface EvictPod {
  type: 'Evict'
  target: ObjectRef
}

/**
 * Stops a running JobFlow by its own deadline (CronJobFlow's concurrencyPolicy Replace): a merge
 * patch of its `spec.activeDeadlineSeconds` and of the annotation naming the run that replaced it.
 * The JobFlow's hook then stops it as any deadline does, its records kept.
 */
export interface StopJobFlow {
  type: 'StopJobFlow'
  target: ObjectRef
  activeDeadlineSeconds: number
  /** The annotation `jobhooks.io/replaced-by` and its value: the run that replaced this one. */
  annotations: Record<string, string>
}

/** A container's new image, at its place in the Pod's list (the patch merges containers by name). */
export interface PodImage {
  index: number
  name: string
  image: string
}

/**
 * Updates a running Pod in place (CollaSet's in-place rollout): a strategic-merge patch of its
 * containers' images, which Kubernetes lets change on a running Pod (the kubelet restarts those
 * containers), and of labels and annotations, which merge by key.
 */
export interface UpdatePodInPlace {
  type: 'UpdatePodInPlace'
  target: ObjectRef
  images: PodImage[]
  labels: Record<string, string>
  annotations: Record<string, string>
}

/**
 * Resizes a running Pod's containers in place through its `resize` subresource (Kubernetes 1.33
 * and later): a strategic-merge patch of their `resources`, merged on the container's name.
 */
export interface ResizePod {
  type: 'ResizePod'
  target: ObjectRef
  containers: Array<{ name: string, resources: Record<string, unknown> }>
}

/**
 * Releases a PersistentVolumeClaim from its CollaSet before the CollaSet goes (whenDeleted:
 * Retain): its owner reference to the CollaSet and its `controller-uid` label removed, so the
 * garbage collector leaves it. The reference goes by this patch: Metacontroller, as Kubernetes'
 * ClaimObject, releases nothing while its parent is being deleted.
 */
export interface ReleaseClaim {
  type: 'ReleaseClaim'
  target: ObjectRef
  /** The UID of the owner whose reference is removed. */
  ownerUid: string
}

export type Effect =
  InjectEphemeralContainers | DeleteObject | SetPodCondition | SetPodLabels | EvictPod | StopJobFlow |
  UpdatePodInPlace | ResizePod | ReleaseClaim

export type EffectResult = 'applied' | 'gone' | 'failed' | 'refused' | 'dry_run'

/**
 * What became of one effect. `gone`: the target no longer exists, or is another object now (its
 * UID changed), so there is nothing left to do — not a failure. `refused`: out of its parent's
 * reach (another namespace, or a parent the API server does not have), never sent. `dry_run`:
 * recorded, not applied (no cluster credentials).
 */
export interface EffectOutcome {
  effect: Effect
  result: EffectResult
  message?: string
  /**
   * A failed eviction that a PodDisruptionBudget refused (HTTP 429 with the `DisruptionBudget`
   * cause): the API server's reason, which names the budget. A wait, retried, not an error.
   */
  disruptionBudget?: string
}

/** Failed (retried on the next sync) or refused (never sent): what the answer and the log name. */
export function isUnapplied (outcome: EffectOutcome): boolean {
  return outcome.result === 'failed' || outcome.result === 'refused'
}

export interface EffectExecutor {
  /** `cluster` writes through the Kubernetes API; `dry-run` only records (no credentials). */
  readonly mode: 'cluster' | 'dry-run'
  /**
   * Applies the effects a sync of `parent` asked for, within the executor's time budget, and
   * only those within the parent's reach (scope.ts); never throws. `parent` is undefined when
   * the request's parent has no UID: then nothing is in reach.
   */
  apply: (parent: ObjectRef | undefined, effects: Effect[]) => Promise<EffectOutcome[]>
  /**
   * Records Kubernetes Events on the parents for what was applied (events.ts), when this
   * executor does; it never holds up `apply`.
   */
  readonly events?: EffectEvents
}

/**
 * What became of an occurrence: `created` (a new Event), `patched` (an Event's count raised),
 * `merged` (into a write still queued, which carries its count), `suppressed` (held back by the
 * spam filter; the next write carries its count), `dropped` (the queue was full), `failed` (the
 * API server refused the write or did not answer in time), `dry_run` (kept in memory only).
 */
export type EventResult = 'created' | 'patched' | 'merged' | 'suppressed' | 'dropped' | 'failed' | 'dry_run'

export type EventListener = (reason: string, result: EventResult, message?: string) => void

/** What an executor's Event recorder (events.ts) offers; declared here so this file needs nothing of it. */
export interface EffectEvents {
  observe: (listener: EventListener) => void
  record: (parent: ObjectRef, outcomes: readonly EffectOutcome[]) => void
  flush: (timeoutMs?: number) => Promise<void>
}

/** A short, stable description of an effect for logs, metrics and status messages. */
export function describeEffect (effect: Effect): string {
  const { kind, namespace, name } = effect.target
  const where = `${kind} ${namespace === undefined ? name : `${namespace}/${name}`}`
  switch (effect.type) {
    case 'InjectEphemeralContainers': return `inject ${effect.containers.map(c => c.name).join(', ')} into ${where}`
    case 'Delete': return `delete ${where}`
    case 'SetPodCondition': return `set condition ${effect.condition.type}=${effect.condition.status} on ${where}`
    case 'SetPodLabels': {
      const labels = Object.keys(effect.labels).sort()
        .map(k => (effect.labels[k] === null ? `${k}-` : `${k}=${effect.labels[k] as string}`))
      return `label ${where} ${labels.join(' ')}`
    }
    case 'Evict': return `evict ${where}`
    case 'StopJobFlow': return `stop ${where} (activeDeadlineSeconds ${effect.activeDeadlineSeconds})`
    case 'UpdatePodInPlace': return `update ${where} in place (${imageList(effect.images)})`
    case 'ResizePod': return `resize ${where} (${effect.containers.map(c => c.name).join(', ')})`
    case 'ReleaseClaim': return `release ${where} from its owner`
  }
}

/** `name=image, …`, or what else an in-place update changes when no image does. */
export function imageList (images: readonly PodImage[]): string {
  return images.length === 0 ? 'labels and annotations' : images.map(i => `${i.name}=${i.image}`).join(', ')
}
