// Metacontroller's informers: who must reconcile after a change. Every write to a parent, to a
// child it owns (or an orphan it could adopt), or to an object its cached related rules match
// enqueues the parent again (Metacontroller reacts to its own status writes too).
import type { KubeObject } from '../k8s/types.js'
import { controllerOf } from '../k8s/objects.js'
import { matchesSelector, refKey, refOf } from './objects.js'
import { parentSelector } from './controller.js'
import type { RelatedObjects } from './related.js'
import type { Controller } from './types.js'
import type { World } from './world.js'

export function enqueueWatchers (
  world: World, controllers: readonly Controller[], related: RelatedObjects,
  old: KubeObject | undefined, current: KubeObject | undefined
): void {
  const object = (current ?? old) as KubeObject
  for (const controller of controllers) {
    const { parentType } = controller
    if (object.apiVersion === parentType.apiVersion && object.kind === parentType.kind) {
      if (current === undefined) {
        world.scheduler.dirty.delete(refKey(refOf(object)))
        related.forget(object.metadata.uid as string)
      } else {
        world.scheduler.enqueue(refOf(object))
      }
      continue
    }
    const parents = world.store.view(parentType.apiVersion, parentType.kind)
    if (controller.childTypes.some(t => t.apiVersion === object.apiVersion && t.kind === object.kind)) {
      enqueueOwners(world, controller, parents, old, current)
    }
    for (const parent of parents) {
      const rules = related.cached(parent)
      if (rules === undefined) continue
      const hit = rules.some(rule => {
        const type = world.resources.byResource(rule.apiVersion, rule.resource)
        return type !== undefined &&
          [old, current].some(o => o !== undefined && related.matches(controller, parent, rule, type, o))
      })
      if (hit) world.scheduler.enqueue(refOf(parent))
    }
  }
}

/** A child changed: its owner reconciles, or, for an orphan, every parent that could adopt it. */
function enqueueOwners (
  world: World, controller: Controller, parents: readonly KubeObject[],
  old: KubeObject | undefined, current: KubeObject | undefined
): void {
  const object = (current ?? old) as KubeObject
  const owners = new Set([old, current].map(o => (o === undefined ? undefined : controllerOf(o)?.uid)))
  for (const parent of parents) {
    if (owners.has(parent.metadata.uid)) world.scheduler.enqueue(refOf(parent))
    else if (owners.has(undefined) && controllerOf(object) === undefined && couldAdopt(controller, parent, object)) {
      world.scheduler.enqueue(refOf(parent))
    }
  }
}

function couldAdopt (controller: Controller, parent: KubeObject, object: KubeObject): boolean {
  if (controller.parentType.namespaced && parent.metadata.namespace !== object.metadata.namespace) return false
  try {
    return matchesSelector(parentSelector(controller, parent), object.metadata.labels)
  } catch {
    return false
  }
}
