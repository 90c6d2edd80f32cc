// The executor that applies effects to the cluster through the Kubernetes API (docs/operations.md,
// "Effects and permissions"), and the choice between it and the recording dry-run at start-up.
//
// Requests go through the project's one API client (src/kube/client.ts): credentials, TLS and the
// API server's address from the kubeconfig, each request with the exact content type, body and
// abort signal it needs. A write is sent once; the GET that confirms the parent is retried as
// that client retries reads. client-node is loaded only when there are credentials to use.
import { setMaxListeners } from 'node:events'
import { STATUS_CODES } from 'node:http'
import type { KubeConfig } from '@kubernetes/client-node'
import { ApiClient, type ApiAnswer } from '../kube/client.js'
import { describe } from '../kube/errors.js'
import type { CredentialSource } from './credentials.js'
import { RecordingExecutor } from './dry-run.js'
import { EventRecorder, type EventRecorderOptions } from './events.js'
import { withinReach } from './scope.js'
import type {
  DeleteObject, Effect, EffectExecutor, EffectOutcome, EvictPod, InjectEphemeralContainers, ObjectRef, Permission,
  ReleaseClaim, ResizePod, SetPodCondition, SetPodLabels, StopJobFlow, UpdatePodInPlace
} from './types.js'

export type { Permission } from './types.js'
export { EVENT_PERMISSIONS } from './events.js'
export { loadCredentials, SERVICE_ACCOUNT_DIR, type CredentialSource } from './credentials.js'

/**
 * What each effect type needs from the API server, and nothing more. The ClusterRole in
 * manifests/deploy/rbac.yaml grants exactly the union of these, PARENT_PERMISSIONS and
 * EVENT_PERMISSIONS (events.ts: the Events recorded on the parents), which
 * test/manifests/deployment.test.ts checks; and `Delete` acts only on the resources listed for it here.
 */
export const EFFECT_PERMISSIONS: Readonly<Record<Effect['type'], readonly Permission[]>> = {
  InjectEphemeralContainers: [{ apiGroup: '', resource: 'pods/ephemeralcontainers', verbs: ['patch'] }],
  // An EphemeralJob, an OperationJob or a JobFlow deletes itself after its TTL.
  Delete: [
    { apiGroup: 'jobhooks.io', resource: 'ephemeraljobs', verbs: ['delete'] },
    { apiGroup: 'jobhooks.io', resource: 'operationjobs', verbs: ['delete'] },
    { apiGroup: 'jobhooks.io', resource: 'jobflows', verbs: ['delete'] }
  ],
  // CollaSet: the readiness-gate condition of its Pods (Metacontroller cannot write pods/status).
  SetPodCondition: [{ apiGroup: '', resource: 'pods/status', verbs: ['patch'] }],
  // OperationJob: the Replace request label and the PodOpsLifecycle lock on target Pods.
  SetPodLabels: [{ apiGroup: '', resource: 'pods', verbs: ['patch'] }],
  // OperationJob's Recreate: evict through the API, so PodDisruptionBudgets hold.
  Evict: [{ apiGroup: '', resource: 'pods/eviction', verbs: ['create'] }],
  // CronJobFlow's Replace: the running run's deadline and the annotation naming its replacement.
  StopJobFlow: [{ apiGroup: 'jobhooks.io', resource: 'jobflows', verbs: ['patch'] }],
  // CollaSet's in-place rollout: its Pods' images, labels and annotations.
  UpdatePodInPlace: [{ apiGroup: '', resource: 'pods', verbs: ['patch'] }],
  // CollaSet's in-place resize: its Pods' resources, through the resize subresource.
  ResizePod: [{ apiGroup: '', resource: 'pods/resize', verbs: ['patch'] }],
  // CollaSet's whenDeleted: Retain: its claims' controller-uid label, before it goes.
  ReleaseClaim: [{ apiGroup: '', resource: 'persistentvolumeclaims', verbs: ['patch'] }]
}

/**
 * Before it acts for a sync, the executor reads the sync's parent (one GET) to confirm that the
 * API server has it, with the request's UID: the parents whose hooks have effects.
 */
export const PARENT_PERMISSIONS: readonly Permission[] = [
  { apiGroup: 'jobhooks.io', resource: 'ephemeraljobs', verbs: ['get'] },
  { apiGroup: 'jobhooks.io', resource: 'operationjobs', verbs: ['get'] },
  { apiGroup: 'jobhooks.io', resource: 'collasets', verbs: ['get'] },
  { apiGroup: 'jobhooks.io', resource: 'jobflows', verbs: ['get'] },
  { apiGroup: 'jobhooks.io', resource: 'cronjobflows', verbs: ['get'] }
]

/**
 * The kinds effects act on, and the parents they are confirmed against: kind → API group and
 * plural (the resource in the URL). All namespaced.
 */
export const RESOURCES: Readonly<Record<string, { group: string, plural: string }>> = {
  Pod: { group: '', plural: 'pods' },
  PersistentVolumeClaim: { group: '', plural: 'persistentvolumeclaims' },
  EphemeralJob: { group: 'jobhooks.io', plural: 'ephemeraljobs' },
  OperationJob: { group: 'jobhooks.io', plural: 'operationjobs' },
  CollaSet: { group: 'jobhooks.io', plural: 'collasets' },
  JobFlow: { group: 'jobhooks.io', plural: 'jobflows' },
  CronJobFlow: { group: 'jobhooks.io', plural: 'cronjobflows' }
}

export interface ClusterExecutorOptions {
  /** Most requests in flight at once. */
  concurrency: number
  /** Time one `apply` call may take; what is not done by then fails (and is retried next sync). */
  budgetMs: number
  /**
   * Record Events on the parents for what was applied (events.ts), written in the background
   * through the same connection, `concurrency` at a time, each within `budgetMs`. Off unless set.
   */
  events?: boolean | Omit<EventRecorderOptions, 'send'>
}

/** One request to the API server: what an effect turns into, or a read. */
export interface Request {
  method: 'GET' | 'PATCH' | 'DELETE' | 'POST'
  path: string
  contentType: string
  body: unknown
}

/** A request an effect cannot be turned into: it fails without reaching the API server. */
class Refused extends Error {}

/** The API path of an object: core `/api/v1/...` or `/apis/<group>/<version>/...`. */
export function objectPath (target: ObjectRef): string {
  const resource = RESOURCES[target.kind]
  if (resource === undefined) {
    throw new Refused(`unknown kind ${target.kind}: effects act on ${Object.keys(RESOURCES).join(', ')}`)
  }
  const slash = target.apiVersion.indexOf('/')
  const group = slash < 0 ? '' : target.apiVersion.slice(0, slash)
  if (group !== resource.group) {
    throw new Refused(`${target.kind} is in API group ${JSON.stringify(resource.group)}, not in ${target.apiVersion}`)
  }
  if (target.namespace === undefined || target.namespace === '') {
    throw new Refused(`${target.kind} ${target.name} has no namespace`)
  }
  const prefix = group === '' ? `/api/${target.apiVersion}` : `/apis/${target.apiVersion}`
  const namespace = encodeURIComponent(target.namespace)
  return `${prefix}/namespaces/${namespace}/${resource.plural}/${encodeURIComponent(target.name)}`
}

/** Whether `permissions` let `verb` act on `kind`'s resource (or a subresource of it). */
function allowed (permissions: readonly Permission[], kind: string, verb: string, subresource?: string): boolean {
  const resource = RESOURCES[kind]
  if (resource === undefined) return false
  const name = subresource === undefined ? resource.plural : `${resource.plural}/${subresource}`
  return permissions.some(p => p.apiGroup === resource.group && p.resource === name && p.verbs.includes(verb))
}

/** The API request that applies an effect. The target's UID is its precondition either way. */
export function requestFor (effect: Effect): Request {
  switch (effect.type) {
    case 'InjectEphemeralContainers': return injectRequest(effect)
    case 'Delete': return deleteRequest(effect)
    case 'SetPodCondition': return podConditionRequest(effect)
    case 'SetPodLabels': return podLabelsRequest(effect)
    case 'Evict': return evictRequest(effect)
    case 'StopJobFlow': return stopJobFlowRequest(effect)
    case 'UpdatePodInPlace': return inPlaceRequest(effect)
    case 'ResizePod': return resizeRequest(effect)
    case 'ReleaseClaim': return releaseClaimRequest(effect)
  }
}

/** The label Metacontroller claims a CollaSet's children by (generateSelector). */
const CONTROLLER_UID_LABEL = 'controller-uid'

function releaseClaimRequest (effect: ReleaseClaim): Request {
  if (effect.target.kind !== 'PersistentVolumeClaim') {
    throw new Refused(`only PersistentVolumeClaims are released so, not a ${effect.target.kind}`)
  }
  return {
    method: 'PATCH',
    path: objectPath(effect.target),
    contentType: 'application/strategic-merge-patch+json',
    // null removes the label, the $patch directive the owner reference (owner references merge
    // on uid); the UID is the precondition (422 on metadata.uid).
    body: {
      metadata: {
        uid: effect.target.uid,
        labels: { [CONTROLLER_UID_LABEL]: null },
        ownerReferences: [{ $patch: 'delete', uid: effect.ownerUid }]
      }
    }
  }
}

function resizeRequest (effect: ResizePod): Request {
  // Containers merge on `name`. A cluster without the subresource (before 1.33, or the feature
  // off) answers 404, read as the Pod gone: the hook never asks it there, as such a kubelet
  // reports no container resources (resize.ts).
  return podPatch(effect.target, 'only Pods are resized', 'resize', { spec: { containers: effect.containers } })
}

function inPlaceRequest (effect: UpdatePodInPlace): Request {
  const containers = effect.images.map(({ name, image }) => ({ name, image }))
  // Containers merge on `name`, labels and annotations by key. Any change beyond what a running
  // Pod may take is refused by the API server (422), not here.
  return podPatch(effect.target, 'only Pods are updated in place', undefined, {
    metadata: { labels: effect.labels, annotations: effect.annotations },
    ...(containers.length > 0 ? { spec: { containers } } : {})
  })
}

function stopJobFlowRequest (effect: StopJobFlow): Request {
  if (effect.target.kind !== 'JobFlow') throw new Refused(`only JobFlows are stopped so, not a ${effect.target.kind}`)
  return {
    method: 'PATCH',
    path: objectPath(effect.target),
    // A custom resource takes no strategic merge: a JSON merge patch sets the two fields and
    // nothing else. The UID is the precondition (another JobFlow of the same name: 422 on metadata.uid).
    contentType: 'application/merge-patch+json',
    body: {
      metadata: { uid: effect.target.uid, annotations: effect.annotations },
      spec: { activeDeadlineSeconds: effect.activeDeadlineSeconds }
    }
  }
}

function podLabelsRequest (effect: SetPodLabels): Request {
  // Labels merge by key and null removes one.
  return podPatch(effect.target, 'pod labels go onto Pods', undefined, { metadata: { labels: effect.labels } })
}

function evictRequest (effect: EvictPod): Request {
  if (effect.target.kind !== 'Pod') throw new Refused(`only Pods are evicted, not a ${effect.target.kind}`)
  const { namespace, name, uid } = effect.target
  return {
    method: 'POST',
    path: `${objectPath(effect.target)}/eviction`,
    contentType: 'application/json',
    // The UID precondition answers 409 when the name is another Pod's now.
    body: {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      deleteOptions: { preconditions: { uid } }
    }
  }
}

function podConditionRequest (effect: SetPodCondition): Request {
  // Pod conditions merge on `type`: only this one changes.
  const body = { status: { conditions: [effect.condition] } }
  return podPatch(effect.target, 'pod conditions go into Pods', 'status', body)
}

function injectRequest (effect: InjectEphemeralContainers): Request {
  const body = { spec: { ephemeralContainers: effect.containers } }
  return podPatch(effect.target, 'ephemeral containers go into Pods', 'ephemeralcontainers', body)
}

/**
 * A strategic-merge patch of a Pod, or of its `subresource`, with the Pod's UID as the
 * precondition: when the Pod of that name is another one, the API server refuses the patch (1.36
 * answers 422 Invalid, "metadata.uid: ... field is immutable"). Anything but a Pod is refused,
 * `refusal` saying why.
 */
function podPatch (
  target: ObjectRef,
  refusal: string,
  subresource: string | undefined,
  body: { metadata?: Record<string, unknown>, [part: string]: unknown }
): Request {
  if (target.kind !== 'Pod') throw new Refused(`${refusal}, not a ${target.kind}`)
  const { metadata, ...parts } = body
  return {
    method: 'PATCH',
    path: subresource === undefined ? objectPath(target) : `${objectPath(target)}/${subresource}`,
    contentType: 'application/strategic-merge-patch+json',
    body: { metadata: { uid: target.uid, ...metadata }, ...parts }
  }
}

function deleteRequest (effect: DeleteObject): Request {
  const path = objectPath(effect.target)
  if (!allowed(EFFECT_PERMISSIONS.Delete, effect.target.kind, 'delete')) {
    throw new Refused(`deleting a ${effect.target.kind} is not an effect this service may apply`)
  }
  return {
    method: 'DELETE',
    path,
    contentType: 'application/json',
    body: {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid: effect.target.uid },
      propagationPolicy: 'Background'
    }
  }
}

/** The parts of the API's Status answer we read. */
interface Status {
  message?: unknown
  /** A cause's type is spelled `reason` in JSON (metav1.StatusCause). */
  details?: { causes?: Array<{ field?: unknown, reason?: unknown, message?: unknown }> }
}

/** What an API answer means for an effect. */
export function classify (
  statusCode: number, body: string
): Pick<EffectOutcome, 'result' | 'message' | 'disruptionBudget'> {
  if (statusCode >= 200 && statusCode < 300) return { result: 'applied' }
  // 404: the object is gone. 409: a Delete's UID precondition failed, the name is another
  // object's now.
  if (statusCode === 404 || statusCode === 409) return { result: 'gone' }
  const status = parseStatus(body)
  // A patch's UID precondition fails as an invalid change of metadata.uid: another object too.
  const causes = status?.details?.causes ?? []
  if (statusCode === 422 && causes.some(cause => cause.field === 'metadata.uid')) return { result: 'gone' }
  const message = statusMessage(statusCode, status, body)
  const budget = disruptionBudget(statusCode, status, message)
  const withBudget = budget !== undefined ? { disruptionBudget: budget } : {}
  return { result: 'failed', message: `HTTP ${statusCode}: ${message}`, ...withBudget }
}

/**
 * Why a PodDisruptionBudget refused an eviction, if one did: the API server answers 429 (or 403,
 * for a budget it cannot count) with a cause of type `DisruptionBudget` whose message names the
 * budget ("The disruption budget web needs 2 healthy pods and has 2 currently").
 */
function disruptionBudget (statusCode: number, status: Status | undefined, message: string): string | undefined {
  const cause = (status?.details?.causes ?? []).find(c => c.reason === 'DisruptionBudget')
  if (cause !== undefined) return typeof cause.message === 'string' && cause.message !== '' ? cause.message : message
  return statusCode === 429 && /disruption budget/i.test(message) ? message : undefined
}

function parseStatus (body: string): Status | undefined {
  try {
    const status: unknown = JSON.parse(body)
    return typeof status === 'object' && status !== null ? status : undefined
  } catch {
    return undefined // Not JSON: a proxy's page, say.
  }
}

/** The `message` of the API's Status answer, else the start of whatever came back. */
function statusMessage (statusCode: number, status: Status | undefined, body: string): string {
  if (typeof status?.message === 'string' && status.message !== '') return status.message
  const text = body.trim().replace(/\s+/g, ' ').slice(0, 200)
  return text !== '' ? text : STATUS_CODES[statusCode] ?? 'no message'
}

/** Applies effects through the Kubernetes API with the credentials of a KubeConfig. */
export class ClusterExecutor implements EffectExecutor {
  readonly mode = 'cluster' as const
  readonly events: EventRecorder | undefined
  private readonly client: ApiClient

  constructor (kubeConfig: KubeConfig, private readonly options: ClusterExecutorOptions) {
    if (kubeConfig.getCurrentCluster() === null) throw new Error('the kubeconfig has no current cluster')
    // Each request is bounded by the budget's signal too; the client's timeout is the same budget.
    this.client = new ApiClient(kubeConfig, { timeoutMs: options.budgetMs, userAgent: 'jobhooks' })
    const events = options.events === true ? {} : options.events === false ? undefined : options.events
    this.events = events === undefined
      ? undefined
      : new EventRecorder({
        concurrency: options.concurrency,
        timeoutMs: options.budgetMs,
        ...events,
        send: async (request, signal) => await this.send(request, signal)
      })
  }

  /** What an effect the time budget left undone fails with. */
  private get late (): string {
    return `not applied within ${this.options.budgetMs} ms`
  }

  async apply (parent: ObjectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    if (effects.length === 0) return []
    const { inReach, refused } = withinReach(parent, effects)
    const outcomes = new Map<Effect, EffectOutcome>(refused)
    if (inReach.length > 0 && parent !== undefined) await this.applyWithinBudget(parent, inReach, outcomes)
    const applied = effects.map(effect =>
      outcomes.get(effect) ?? { effect, result: 'failed' as const, message: this.late })
    // Only queued: the answer does not wait for its Events. Only what was applied, or refused by
    // a PodDisruptionBudget, earns one, which needs the parent confirmed.
    if (parent !== undefined) this.events?.record(parent, applied)
    return applied
  }

  /**
   * Confirms the parent, then applies `effects`, all within the time budget; each effect's
   * outcome goes into `outcomes` (none for those the budget left undone).
   */
  private async applyWithinBudget (
    parent: ObjectRef, effects: Effect[], outcomes: Map<Effect, EffectOutcome>
  ): Promise<void> {
    const abort = new AbortController()
    const concurrency = Math.max(1, Math.min(this.options.concurrency, effects.length))
    // Each request in flight listens to the signal.
    setMaxListeners(concurrency + 10, abort.signal)
    let timer: NodeJS.Timeout | undefined
    const budget = new Promise<void>(resolve => {
      timer = setTimeout(() => { abort.abort(); resolve() }, this.options.budgetMs)
    })
    const work = async (): Promise<void> => {
      const doubt = await this.confirmParent(parent, abort.signal)
      if (doubt !== undefined) {
        if (!abort.signal.aborted) for (const effect of effects) outcomes.set(effect, { effect, ...doubt })
        return
      }
      let next = 0
      const worker = async (): Promise<void> => {
        while (!abort.signal.aborted && next < effects.length) {
          const effect = effects[next++] as Effect
          const outcome = await this.applyOne(effect, abort.signal)
          // An answer that lands after the budget is not reported: the caller has moved on.
          if (!abort.signal.aborted) outcomes.set(effect, outcome)
        }
      }
      await Promise.all(Array.from({ length: concurrency }, worker))
    }
    try {
      // Whatever a request waits for (a slow credential plugin, say), apply returns at the budget.
      await Promise.race([work(), budget])
    } finally {
      clearTimeout(timer)
      abort.abort()
    }
  }

  /**
   * Whether the API server has the parent the request named, with its UID: a request about a
   * parent that does not exist (made up, or deleted and made again) gets nothing written.
   * Undefined when confirmed, else the outcome of every effect.
   */
  private async confirmParent (
    parent: ObjectRef, signal: AbortSignal
  ): Promise<Pick<EffectOutcome, 'result' | 'message'> | undefined> {
    const what = `${parent.kind} ${parent.namespace ?? ''}/${parent.name}`
    try {
      const path = objectPath(parent)
      const request: Request = { method: 'GET', path, contentType: 'application/json', body: undefined }
      const { statusCode, body } = await this.send(request, signal)
      if (statusCode === 404) {
        return { result: 'refused', message: `the API server has no ${what}: the parent is unknown` }
      }
      if (statusCode !== 200) {
        const why = classify(statusCode, body).message ?? `HTTP ${statusCode}`
        return { result: 'failed', message: `cannot confirm the parent ${what}: ${why}` }
      }
      const uid = (parseStatus(body) as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid
      if (uid !== parent.uid) {
        const message = `the API server's ${what} has UID ${String(uid)}, not ${parent.uid}: the parent is unknown`
        return { result: 'refused', message }
      }
      return undefined
    } catch (error) {
      if (error instanceof Refused) return { result: 'refused', message: error.message }
      const why = describe(error)
      return { result: 'failed', message: signal.aborted ? this.late : `cannot confirm the parent ${what}: ${why}` }
    }
  }

  private async applyOne (effect: Effect, signal: AbortSignal): Promise<EffectOutcome> {
    try {
      const request = requestFor(effect)
      const { statusCode, body } = await this.send(request, signal)
      return { effect, ...classify(statusCode, body) }
    } catch (error) {
      if (error instanceof Refused) return { effect, result: 'failed', message: error.message }
      const message = signal.aborted
        ? this.late
        : `request failed: ${describe(error)}`
      return { effect, result: 'failed', message }
    }
  }

  private async send (request: Request, signal: AbortSignal): Promise<ApiAnswer> {
    return await this.client.send({ ...request, signal })
  }
}

/**
 * The executor for these credentials: the cluster one when there are any, else the recording
 * dry-run.
 */
export function selectExecutor (
  credentials: CredentialSource, options: ClusterExecutorOptions
): { executor: EffectExecutor, message: string, level: 'info' | 'warn' } {
  if (credentials.source === 'none') {
    return {
      executor: new RecordingExecutor(),
      message: `no cluster credentials: effects are recorded, not applied (dry-run); ${credentials.reason}`,
      level: credentials.unexpected === true ? 'warn' : 'info'
    }
  }
  return {
    executor: new ClusterExecutor(credentials.kubeConfig, { events: true, ...options }),
    level: 'info',
    message: `effects are applied to the cluster (${credentials.description}; ` +
      `concurrency ${options.concurrency}, budget ${options.budgetMs} ms)`
  }
}
