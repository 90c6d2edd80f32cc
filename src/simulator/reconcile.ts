// One sync of a parent, as Metacontroller's composite controller does it (pkg/controller/composite
// in v4.17.2): finalizer, claim the children (adopt orphans that match, release owned ones that
// no longer do), ask for related objects, call the hook, check every desired child, delete the
// undesired, create the missing and apply the rest (./children.ts), write the status, then
// release the parent after finalize or schedule the resync. A failed sync is retried with
// exponential backoff.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { controllerOf } from '../k8s/objects.js'
import type { SyncRequest, SyncResponse } from '../protocol/hooks.js'
import {
  deepEqual, describeRef, diffPaths, matchesSelector, namespacedName, refKey, refOf, wire,
  type LabelSelector, type ObjectRef
} from './objects.js'
import { CONTROLLER_UID_LABEL, ownerReference, parentSelector } from './controller.js'
import { applyDesired, deleteUndesired, type Admit } from './children.js'
import { objectKey, type RelatedObjects } from './related.js'
import type { HookTransport } from './transport.js'
import type { Controller, ReconcileResult } from './types.js'
import type { World } from './world.js'

const MAX_BACKOFF_SECONDS = 1000

export interface ReconcilerParts {
  world: World
  controllers: readonly Controller[]
  related: RelatedObjects
  transport: HookTransport
  admit: Admit
}

export class Reconciler {
  /** Status writes per parent (`namespace/name`), to check that a quiet system stays quiet. */
  readonly statusWrites = new Map<string, number>()
  readonly lastResults = new Map<string, ReconcileResult>()
  /** Older copies of parents that their next reconcile is handed (handOlderParent). */
  readonly olderParents = new Map<string, KubeObject>()
  private readonly failures = new Map<string, number>()
  private readonly world: World

  constructor (private readonly parts: ReconcilerParts) {
    this.world = parts.world
  }

  /** One sync of a parent, as Metacontroller does it. */
  async reconcile (ref: ObjectRef): Promise<ReconcileResult> {
    const key = refKey(ref)
    this.world.scheduler.dirty.delete(key)
    const result: ReconcileResult = {
      parent: ref,
      ok: false,
      created: [],
      deleted: [],
      adopted: [],
      released: [],
      drift: [],
      updated: [],
      conflicts: [],
      statusChanged: false,
      statusDiff: []
    }
    const live = this.world.store.get(ref)
    const older = this.olderParents.get(key)
    this.olderParents.delete(key)
    const parent = older !== undefined && live !== undefined && older.metadata.uid === live.metadata.uid ? older : live
    if (parent === undefined) {
      result.error = `${describeRef(ref)} does not exist`
      return result
    }
    const controller = this.controllerFor(parent)
    if (controller === undefined) throw new Error(`no controller for ${describeRef(ref)}`)
    try {
      await this.syncParent(controller, parent, result)
      result.ok = result.error === undefined
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error)
    }
    this.afterSync(key, parent, result)
    return result
  }

  controllerFor (parent: KubeObject): Controller | undefined {
    return this.parts.controllers
      .find(c => c.parentType.apiVersion === parent.apiVersion && c.parentType.kind === parent.kind)
  }

  /** Clears a parent's failures, or records the failure and retries with backoff, as Metacontroller does. */
  private afterSync (key: string, parent: KubeObject, result: ReconcileResult): void {
    if (result.ok) {
      this.failures.delete(key)
    } else {
      // Metacontroller records a SyncError event and retries with exponential backoff.
      const failures = (this.failures.get(key) ?? 0) + 1
      this.failures.set(key, failures)
      this.world.timeline.record({ type: 'sync-error', object: result.parent, message: result.error })
      const delay = Math.min(0.005 * 2 ** (failures - 1), MAX_BACKOFF_SECONDS)
      this.world.scheduler.scheduleResync(parent, delay, true)
    }
    this.lastResults.set(key, result)
    this.world.timeline.note(`reconcile ${describeRef(result.parent)}`, describeChanges(result))
  }

  /**
   * One reconcile of a parent: finalizer, children, related objects, the hook, the answer's
   * children and status; a child that could not be applied then fails the reconcile.
   */
  private async syncParent (controller: Controller, parent: KubeObject, result: ReconcileResult): Promise<void> {
    const finalizer = `metacontroller.io/compositecontroller-${controller.object.metadata.name}`
    const finalizing = controller.hooks.finalize !== undefined && parent.metadata.deletionTimestamp !== undefined
    parent = this.ensureFinalizer(controller, parent, finalizer, finalizing)
    const selector = parentSelector(controller, parent)
    const children = this.claimChildren(controller, parent, selector, result)
    const related = await this.parts.related.of(controller, parent)
    if (typeof related === 'string') {
      result.error = related
      return
    }
    const request: SyncRequest = { controller: controller.object, parent, children, related, finalizing }
    // Kept as built: the transport hands each hook a copy of its own.
    result.request = request
    const answer = await this.parts.transport.callSync(controller, request, finalizing ? 'finalize' : 'sync')
    if (!answer.ok) {
      result.error = answer.error
      return
    }
    const response = answer.value
    result.response = wire(response)
    const desired = checkDesiredChildren(controller, parent, selector, response)
    if (typeof desired === 'string') {
      result.error = desired
      return
    }
    deleteUndesired(this.world, parent, children, desired, result)
    const problems = applyDesired(this.world, this.parts.admit, controller, parent, desired, result)
    this.writeStatus(controller, parent, response, result)
    if (problems.length > 0) result.error = `can't reconcile children: ${problems.join('; ')}`
    if (finalizing && response.finalized === true) {
      this.releaseFinalized(parent, finalizer)
      return
    }
    const resync = response.resyncAfterSeconds
    if (typeof resync === 'number' && resync > 0) {
      result.resyncAfterSeconds = resync
      this.world.scheduler.scheduleResync(parent, resync, false)
    }
  }

  /** With a finalize hook, Metacontroller puts its finalizer on the parent before anything else. */
  private ensureFinalizer (
    controller: Controller, parent: KubeObject, finalizer: string, finalizing: boolean
  ): KubeObject {
    const finalizers = (parent.metadata.finalizers as string[] | undefined) ?? []
    if (controller.hooks.finalize === undefined || finalizing || finalizers.includes(finalizer)) return parent
    const metadata = { ...parent.metadata, finalizers: [...finalizers, finalizer] }
    return this.world.store.update({ ...parent, metadata })
  }

  /** Claim: owned children that still match, orphans that match (adopted); release the rest. */
  private claimChildren (
    controller: Controller, parent: KubeObject, selector: LabelSelector, result: ReconcileResult
  ): ObjectMap {
    const { store, timeline } = this.world
    const children: ObjectMap = {}
    const namespace = controller.parentType.namespaced ? parent.metadata.namespace : undefined
    for (const type of controller.childTypes) {
      const group: Record<string, KubeObject> = {}
      children[`${type.kind}.${type.apiVersion}`] = group
      // The stored objects themselves (the store replaces, never changes, what it holds): a copy of
      // thousands of Jobs every sync is what made a large JobFlow slow to simulate.
      for (const stored of store.view(type.apiVersion, type.kind, namespace)) {
        let object = stored
        const owner = controllerOf(object)
        const matches = matchesSelector(selector, object.metadata.labels)
        if (owner !== undefined && owner.uid !== parent.metadata.uid) continue
        if (owner === undefined) {
          if (!matches || parent.metadata.deletionTimestamp !== undefined) continue
          object = wire(stored)
          object.metadata.ownerReferences = [...(object.metadata.ownerReferences ?? []), ownerReference(parent)]
          object = store.update(object)
          result.adopted.push(refOf(object))
          timeline.record({ type: 'adopted', object: refOf(object), owner: refOf(parent) })
        } else if (!matches) {
          // As Kubernetes' ClaimObject (and Metacontroller's copy of it): a parent being deleted
          // neither keeps nor releases a child that no longer matches.
          if (parent.metadata.deletionTimestamp !== undefined) continue
          const others = (object.metadata.ownerReferences ?? []).filter(r => r.uid !== parent.metadata.uid)
          object = wire(stored)
          object.metadata.ownerReferences = others
          store.update(object)
          result.released.push(refOf(object))
          timeline.record({ type: 'released', object: refOf(object), owner: refOf(parent) })
          continue
        }
        group[objectKey(controller, parent, object)] = object
      }
    }
    return children
  }

  /** Replaces the status, with observedGeneration, if it changed; a new phase goes on the timeline. */
  private writeStatus (
    controller: Controller, parent: KubeObject, response: SyncResponse, result: ReconcileResult
  ): void {
    const { store, timeline } = this.world
    const live = store.get(refOf(parent))
    if (live === undefined || live.metadata.uid !== parent.metadata.uid) return
    const answered = isRecord(response.status) ? wire(response.status) : {}
    const status: Record<string, unknown> = { ...answered, observedGeneration: parent.metadata.generation }
    if (deepEqual(live.status, status)) return
    result.statusChanged = true
    result.statusDiff = diffPaths(live.status, status, 'status')
    store.updateStatus(refOf(parent), status)
    const name = namespacedName(refOf(parent))
    this.statusWrites.set(name, (this.statusWrites.get(name) ?? 0) + 1)
    const field = controller.hooks.phaseField
    const before = isRecord(live.status) ? live.status[field] : undefined
    const after = status[field]
    if (before === after || typeof after !== 'string') return
    const invalid = invalidMessage(status)
    timeline.record({
      type: 'phase',
      object: refOf(parent),
      phase: after,
      ...(typeof before === 'string' ? { previousPhase: before } : {}),
      ...(invalid !== undefined ? { message: invalid } : {})
    })
  }

  /** Finalize said done: the finalizer goes, and with the last one the parent. */
  private releaseFinalized (parent: KubeObject, finalizer: string): void {
    const { store, timeline, gc } = this.world
    const current = store.get(refOf(parent))
    if (current === undefined || current.metadata.uid !== parent.metadata.uid) return
    const left = ((current.metadata.finalizers as string[] | undefined) ?? []).filter(f => f !== finalizer)
    store.update({ ...current, metadata: { ...current.metadata, finalizers: left } })
    if (left.length > 0) return
    store.delete(refOf(parent))
    timeline.record({ type: 'deleted', object: refOf(parent), cause: 'finalized' })
    gc.collect()
  }
}

/** Every desired child checked before anything changes: one bad child fails the whole sync. */
function checkDesiredChildren (
  controller: Controller, parent: KubeObject, selector: LabelSelector, response: SyncResponse
): Map<string, KubeObject> | string {
  const desired = new Map<string, KubeObject>()
  for (const raw of response.children ?? []) {
    const child = checkDesiredChild(controller, parent, selector, raw)
    if (typeof child === 'string') return child
    desired.set(refKey(refOf(child)), child)
  }
  return desired
}

function checkDesiredChild (
  controller: Controller, parent: KubeObject, selector: LabelSelector, raw: unknown
): KubeObject | string {
  if (!isRecord(raw) || typeof raw.apiVersion !== 'string' || typeof raw.kind !== 'string' ||
    !isRecord(raw.metadata) || typeof raw.metadata.name !== 'string' || raw.metadata.name === '') {
    return `a desired child lacks apiVersion, kind or metadata.name: ${JSON.stringify(raw).slice(0, 200)}`
  }
  const child = wire(raw) as KubeObject
  const type = controller.childTypes.find(t => t.apiVersion === child.apiVersion && t.kind === child.kind)
  if (type === undefined) {
    // Metacontroller would create it and never see it again; the simulator refuses it outright.
    const declared = controller.childTypes.map(t => `${t.kind}.${t.apiVersion}`).join(', ')
    return `desired child ${describeRef(refOf(child))} is not of a declared child type (${declared})`
  }
  if (type.namespaced && child.metadata.namespace === undefined && parent.metadata.namespace !== undefined) {
    child.metadata.namespace = parent.metadata.namespace
  }
  if (controller.generateSelector) {
    child.metadata.labels = { ...child.metadata.labels }
    child.metadata.labels[CONTROLLER_UID_LABEL] ??= parent.metadata.uid as string
  }
  if (!matchesSelector(selector, child.metadata.labels)) {
    return `labels on desired child ${describeRef(refOf(child))} don't match parent selector`
  }
  if (controller.parentType.namespaced && type.namespaced && child.metadata.namespace !== parent.metadata.namespace) {
    const namespace = parent.metadata.namespace ?? ''
    return `desired child ${describeRef(refOf(child))} is outside the parent's namespace ${namespace}`
  }
  return child
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
