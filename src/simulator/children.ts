// Dynamic apply of a sync's desired children (./apply.ts does the merge): observed children not
// desired are deleted; missing children are created with a controller ownerReference and the
// last-applied annotation; existing ones are merged with the answer three ways and, when that
// changes them, left as they are under OnDelete or written (PUT) under InPlace.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import { controllerOf, groupKey, LAST_APPLIED_ANNOTATION } from '../k8s/objects.js'
import { deepEqual, describeRef, isContainedIn, refKey, refOf, wire } from './objects.js'
import { AlreadyExistsError, ConflictError, InvalidError, NotFoundError } from './store.js'
import type { ResourceType } from './resources.js'
import { applyUpdate, changedFields, goJson, LastAppliedError } from './apply.js'
import { ownerReference } from './controller.js'
import type { Controller, ReconcileResult } from './types.js'
import type { World } from './world.js'

/** What the API server does to an object Metacontroller writes before storing it (a Job's defaults). */
export type Admit = (stored: KubeObject) => void

/** Deletes the observed children that are not desired, then collects their garbage. */
export function deleteUndesired (
  world: World, parent: KubeObject, children: ObjectMap, desired: Map<string, KubeObject>, result: ReconcileResult
): void {
  for (const group of Object.values(children)) {
    for (const observed of Object.values(group)) {
      const ref = refOf(observed)
      if (desired.has(refKey(ref))) continue
      if (world.store.delete(ref) === undefined) continue
      result.deleted.push(ref)
      world.timeline.record({ type: 'deleted', object: ref, owner: refOf(parent), cause: 'controller' })
    }
  }
  if (result.deleted.length > 0) world.gc.collect()
}

/**
 * Creates what is missing and applies the rest over what exists (./apply.ts): a child the merge
 * does not change, or one being deleted, is not written; under OnDelete none is (drift noted);
 * under InPlace the merge is PUT, a conflict or a child gone in between passing unnoticed, as
 * in Metacontroller. Returns what failed (a child the API server refuses, an unreadable
 * last-applied annotation); the other children are applied all the same.
 */
export function applyDesired (
  world: World, admit: Admit, controller: Controller, parent: KubeObject, desired: Map<string, KubeObject>,
  result: ReconcileResult
): string[] {
  const problems: string[] = []
  for (const child of desired.values()) {
    const ref = refOf(child)
    const observed = world.store.get(ref)
    if (observed === undefined) {
      createChild(world, admit, parent, child, result)
      continue
    }
    if (controllerOf(observed)?.uid !== parent.metadata.uid) {
      result.conflicts.push(ref)
      continue
    }
    const problem = updateChild(world, admit, controller, observed, child, result)
    if (problem !== undefined) problems.push(problem)
  }
  return problems
}

/** Metacontroller's create: the answer's child as it is, its annotation the JSON of it, owned by the parent. */
function createChild (
  world: World, admit: Admit, parent: KubeObject, child: KubeObject, result: ReconcileResult
): void {
  const ref = refOf(child)
  const type = world.resources.byKind(child.apiVersion, child.kind) as ResourceType
  const toCreate = wire(child)
  delete toCreate.status
  toCreate.metadata.annotations = { ...toCreate.metadata.annotations, [LAST_APPLIED_ANNOTATION]: goJson(child) }
  toCreate.metadata.ownerReferences = [ownerReference(parent)]
  if (type.hasStatus) toCreate.status = {}
  try {
    world.store.create(toCreate, 'metacontroller', admit)
  } catch (error) {
    if (!(error instanceof AlreadyExistsError)) throw error
    result.conflicts.push(ref)
    return
  }
  result.created.push(ref)
  world.timeline.record({ type: 'created', object: ref, owner: refOf(parent) })
}

/** Metacontroller's update of a child that exists, by its type's strategy; what failed, if anything. */
function updateChild (
  world: World, admit: Admit, controller: Controller, observed: KubeObject, child: KubeObject, result: ReconcileResult
): string | undefined {
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
    written = world.store.update(merged, { checkVersion: true, admit })
  } catch (error) {
    if (error instanceof ConflictError || error instanceof NotFoundError) return undefined
    if (error instanceof InvalidError) return `can't update ${describeRef(ref)}: ${error.message}`
    throw error
  }
  if (written.metadata.resourceVersion === observed.metadata.resourceVersion) return undefined
  result.updated.push(ref)
  const message = changedFields(observed, merged).join(', ')
  world.timeline.record({ type: 'updated', object: ref, ...world.gc.ownerOf(written), message })
  return undefined
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
