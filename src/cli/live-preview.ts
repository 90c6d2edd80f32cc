// One object's preview: the request Metacontroller would send its next sync, built from what the
// cluster holds now (live-request.ts), answered by the real hooks through the real HTTP app in
// process, and read back as what the sync would do: the children it would create and delete, the
// status it would write, when it would come back, and the effects the service would apply.
//
// Nothing here writes: the cluster is only read, and the app's executor records effects without
// applying them (a dry-run executor, which also keeps the app from ever holding credentials).
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { selectorMatches, type LabelSelector } from '../k8s/selectors.js'
import type { CustomizeResponse, SyncRequest, SyncResponse } from '../protocol/hooks.js'
import { RecordingExecutor } from '../effects/dry-run.js'
import {
  describeEffect, type Effect, type EffectExecutor, type EffectOutcome, type ObjectRef as EffectTarget
} from '../effects/types.js'
import { shippedScriptLibrary } from '../scripts/library.js'
import { CONTROLLER_UID_LABEL } from '../simulator/controller.js'
import { comparable } from '../simulator/children.js'
import type { Controller } from '../simulator/types.js'
import { deepEqual, isContainedIn, kubeTime, refKey, refOf, wire } from '../simulator/objects.js'
import { applyUpdate, changedFields, LastAppliedError } from '../simulator/apply.js'
import { groupKey } from '../k8s/objects.js'
import type { LiveCluster } from './live-cluster.js'
import { claimChildren, liveController, parentSelector, relatedObjects } from './live-request.js'

/** A child of the parent, in the parent's namespace. */
export interface ChildName {
  kind: string
  name: string
}

export interface PreviewEffect {
  type: Effect['type']
  /** `label Pod default/web-0 track=canary`, as the service's logs say it. */
  description: string
  target: { kind: string, namespace?: string, name: string }
  /** `dry_run`: the service would send it; `refused`: out of the parent's reach, never sent. */
  result: EffectOutcome['result']
  message?: string
}

export interface ObjectPreview {
  kind: string
  name: string
  namespace?: string
  /** Whether the cluster has the object now. */
  exists: boolean
  /** Its phase now (the kind's phase field), when it has one. */
  phase?: string
  /** What the preview assumed, and what Metacontroller would do besides the sync. */
  notes: string[]
  /** Why the sync would fail, changing nothing. */
  error?: string
  create: ChildName[]
  delete: ChildName[]
  keep: ChildName[]
  /** Kept children that differ from what the hook asks for: Metacontroller leaves them as they are (OnDelete). */
  changed: ChildName[]
  /** Kept children Metacontroller would write in place (InPlace), with the fields that would change. */
  update: Array<ChildName & { fields: string[] }>
  /** Orphans matching the selector, which Metacontroller adopts before the sync. */
  adopt: ChildName[]
  effects: PreviewEffect[]
  /** The status the sync would write. */
  status?: Record<string, unknown>
  /** The kind's phase field, to read `status` with. */
  phaseField: string
  resyncAfterSeconds?: number
  finalized?: boolean
}

/** The UID a parent that is not in the cluster yet goes by in its preview. */
export const NEW_PARENT_UID = '00000000-0000-0000-0000-000000000000'

/** An executor that records the effects of each call, applying none of them. */
class PreviewExecutor implements EffectExecutor {
  readonly mode = 'dry-run' as const
  private readonly recording = new RecordingExecutor()
  private outcomes: EffectOutcome[] = []

  async apply (parent: EffectTarget | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    const outcomes = await this.recording.apply(parent, effects)
    this.outcomes.push(...outcomes)
    return outcomes
  }

  /** The outcomes since the last call. */
  take (): EffectOutcome[] {
    const taken = this.outcomes
    this.outcomes = []
    return taken
  }
}

export class Previewer {
  private constructor (
    private readonly cluster: LiveCluster,
    private readonly app: FastifyInstance,
    private readonly executor: PreviewExecutor,
    readonly now: Date
  ) {}

  /** The real app, on a clock pinned to `now`, with effects recorded and never applied. */
  static async start (cluster: LiveCluster, now: Date): Promise<Previewer> {
    const executor = new PreviewExecutor()
    const scripts = shippedScriptLibrary()
    const app = await buildApp({ logger: false, scripts, clock: () => now, effects: executor })
    return new Previewer(cluster, app, executor, now)
  }

  async close (): Promise<void> {
    await this.app.close()
  }

  /**
   * What the next sync of `object` (a jobhooks object of the manifest) would do; `namespace`
   * when the manifest names none; `context`: objects of the manifest related rules may select
   * instead of the cluster's (JobTemplates, JobFlowTemplates), namespaces set.
   */
  async preview (object: KubeObject, namespace: string, context: KubeObject[]): Promise<ObjectPreview> {
    const parentType = await this.cluster.resolve(object)
    const controller = await liveController(this.cluster, parentType.resource)
    const ns = parentType.namespaced ? object.metadata.namespace ?? namespace : undefined
    const live = await this.cluster.get(parentType, ns, object.metadata.name)
    const { parent, notes } = parentOf(object, live, ns, this.now)
    const result = emptyPreview(object, ns, live, notes, controller.hooks.phaseField)
    const selector = parentSelector(controller, parent)
    if (typeof selector === 'string') return { ...result, error: selector }
    const finalizer = `metacontroller.io/compositecontroller-${String(controller.object.metadata.name)}`
    const finalizing = controller.hooks.finalize !== undefined && parent.metadata.deletionTimestamp !== undefined
    const finalizers = (parent.metadata.finalizers as string[] | undefined) ?? []
    if (controller.hooks.finalize !== undefined && !finalizing && !finalizers.includes(finalizer)) {
      notes.push(`Metacontroller would first add its finalizer ${finalizer}`)
    }
    const { children, adopted } = await claimChildren(this.cluster, controller, parent, selector)
    result.adopt = adopted.map(nameOf)
    const rules = await this.customize(controller, parent)
    if (typeof rules === 'string') return { ...result, error: rules }
    const related = await relatedObjects(this.cluster, controller, parent, rules, context)
    if (typeof related === 'string') return { ...result, error: related }
    const request: SyncRequest = { controller: controller.object, parent, children, related, finalizing }
    const hook = finalizing ? 'finalize' : 'sync'
    const answer = await this.call<SyncResponse>(`/hooks/${controller.hooks.kind}/${hook}`, request)
    const effects = this.executor.take()
    if (typeof answer === 'string') return { ...result, error: `the ${hook} hook ${answer}` }
    const desired = desiredChildren(controller, parent, selector, answer.children)
    if (typeof desired === 'string') return { ...result, error: desired }
    const observed = Object.values(children).flatMap(group => Object.values(group))
    const manages = parent.metadata.deletionTimestamp === undefined || finalizing
    for (const child of observed) {
      const wanted = desired.get(refKey(refOf(child)))
      if (wanted === undefined) {
        if (manages) result.delete.push(nameOf(child))
        continue
      }
      result.keep.push(nameOf(child))
      if ((controller.childMethods.get(groupKey(child.kind, child.apiVersion)) ?? 'OnDelete') === 'InPlace') {
        const fields = inPlaceChanges(child, wanted)
        if (typeof fields === 'string') return { ...result, error: fields }
        if (fields.length > 0) result.update.push({ ...nameOf(child), fields })
      } else if (!isContainedIn(comparable(wanted), child)) {
        result.changed.push(nameOf(child))
      }
    }
    const seen = new Set(observed.map(child => refKey(refOf(child))))
    if (manages) result.create = [...desired.values()].filter(child => !seen.has(refKey(refOf(child)))).map(nameOf)
    const resync = answer.resyncAfterSeconds
    return {
      ...result,
      effects: effects.map(previewEffect),
      status: answer.status,
      ...(typeof resync === 'number' && resync > 0 ? { resyncAfterSeconds: resync } : {}),
      ...(answer.finalized === true ? { finalized: true } : {})
    }
  }

  /** The related rules, from the customize hook if the kind has one. */
  private async customize (
    controller: Controller, parent: KubeObject
  ): Promise<CustomizeResponse['relatedResources'] | string> {
    if (controller.hooks.customize === undefined) return []
    const request = { controller: controller.object, parent }
    const answer = await this.call<CustomizeResponse>(`/hooks/${controller.hooks.kind}/customize`, request)
    return typeof answer === 'string' ? `the customize hook ${answer}` : answer.relatedResources
  }

  /** A hook call through the app: its answer, or what went wrong (`answered HTTP 400: …`). */
  private async call<T> (url: string, payload: object): Promise<T | string> {
    const reply = await this.app.inject({ method: 'POST', url, payload: wire(payload) })
    if (reply.statusCode !== 200) return `answered HTTP ${reply.statusCode}: ${reply.body.slice(0, 500)}`
    return JSON.parse(reply.body) as T
  }
}

/** A preview of `object` before the sync: where it stands, nothing to do yet. */
function emptyPreview (
  object: KubeObject, ns: string | undefined, live: KubeObject | undefined, notes: string[], phaseField: string
): ObjectPreview {
  const phase = isRecord(live?.status) ? live.status[phaseField] : undefined
  return {
    kind: object.kind,
    name: object.metadata.name,
    ...(ns !== undefined ? { namespace: ns } : {}),
    exists: live !== undefined,
    ...(typeof phase === 'string' ? { phase } : {}),
    notes,
    create: [],
    delete: [],
    keep: [],
    changed: [],
    update: [],
    adopt: [],
    effects: [],
    phaseField
  }
}

/**
 * The parent the next sync would be handed. In the cluster: as it is there, with the manifest's
 * spec if that differs (what `kubectl apply` would set: a new generation, the same metadata and
 * status). Not in the cluster: the manifest's object as the API server would first store it.
 */
function parentOf (
  object: KubeObject, live: KubeObject | undefined, namespace: string | undefined, now: Date
): { parent: KubeObject, notes: string[] } {
  const manifest = wire(object)
  if (live === undefined) {
    delete manifest.status
    const metadata = {
      ...manifest.metadata,
      ...(namespace !== undefined ? { namespace } : {}),
      uid: NEW_PARENT_UID,
      generation: 1,
      creationTimestamp: kubeTime(now.getTime())
    }
    return { parent: { ...manifest, metadata }, notes: ['not in the cluster: the first sync after apply'] }
  }
  // Rough, as apply's merge is: every field the manifest sets already holds its value.
  if (isContainedIn(manifest.spec, live.spec)) return { parent: live, notes: [] }
  return {
    parent: {
      ...live, spec: manifest.spec, metadata: { ...live.metadata, generation: (live.metadata.generation ?? 0) + 1 }
    },
    notes: [
      'its spec in the cluster differs from the manifest\'s: the preview uses the manifest\'s spec, ' +
      'as kubectl apply would set it (metadata and status as they are in the cluster)'
    ]
  }
}

/**
 * The desired children by reference, as Metacontroller checks them before it changes anything:
 * in the parent's namespace, with the `controller-uid` label it adds, matching the selector.
 */
function desiredChildren (
  controller: Controller, parent: KubeObject, selector: LabelSelector, answered: unknown
): Map<string, KubeObject> | string {
  const desired = new Map<string, KubeObject>()
  for (const raw of Array.isArray(answered) ? answered : []) {
    const child = wire(raw) as KubeObject
    const type = controller.childTypes.find(t => t.apiVersion === child.apiVersion && t.kind === child.kind)
    const namespaceless = child.metadata.namespace === undefined && parent.metadata.namespace !== undefined
    if (type?.namespaced === true && namespaceless) {
      child.metadata.namespace = parent.metadata.namespace
    }
    if (controller.generateSelector) {
      child.metadata.labels = { [CONTROLLER_UID_LABEL]: parent.metadata.uid as string, ...child.metadata.labels }
    }
    if (!selectorMatches(selector, child.metadata.labels)) {
      return `labels on desired child ${child.kind} ${child.metadata.name} don't match parent selector`
    }
    desired.set(refKey(refOf(child)), child)
  }
  return desired
}

/** What Metacontroller's merge would change of `observed` (./simulator/apply.ts), or why it would fail the child. */
function inPlaceChanges (observed: KubeObject, wanted: KubeObject): string[] | string {
  try {
    const merged = applyUpdate(observed, wanted)
    const unchanged = deepEqual(merged, observed) || observed.metadata.deletionTimestamp !== undefined
    return unchanged ? [] : changedFields(observed, merged)
  } catch (error) {
    if (error instanceof LastAppliedError) return `${observed.kind} ${observed.metadata.name}: ${error.message}`
    throw error
  }
}

function nameOf (object: KubeObject): ChildName {
  return { kind: object.kind, name: object.metadata.name }
}

function previewEffect (outcome: EffectOutcome): PreviewEffect {
  const { kind, namespace, name } = outcome.effect.target
  return {
    type: outcome.effect.type,
    description: describeEffect(outcome.effect),
    target: { kind, ...(namespace !== undefined ? { namespace } : {}), name },
    result: outcome.result,
    ...(outcome.message !== undefined ? { message: outcome.message } : {})
  }
}
