// Deleting as the API server and Kubernetes' garbage collector do: an object with finalizers
// only starts terminating; a deleted object's dependents go once all their owners are gone.
import type { KubeObject } from '../k8s/types.js'
import { controllerOf } from '../k8s/objects.js'
import { refOf, type ObjectRef } from './objects.js'
import type { ObjectStore } from './store.js'
import type { ResourceTable } from './resources.js'
import type { Timeline } from './timeline.js'

export class GarbageCollector {
  constructor (
    private readonly store: ObjectStore,
    private readonly resources: ResourceTable,
    private readonly timeline: Timeline
  ) {}

  /** Deletes as the API server does: with finalizers left, only a deletionTimestamp. */
  remove (ref: ObjectRef, cause: 'user' | 'effect' | 'ttl'): boolean {
    const current = this.store.get(ref)
    if (current === undefined) return false
    if ((current.metadata.finalizers as string[] | undefined ?? []).length > 0) {
      if (current.metadata.deletionTimestamp === undefined) {
        this.store.terminate(ref)
        this.timeline.record({ type: 'terminating', object: ref, cause, ...this.ownerOf(current) })
      }
      return true
    }
    const deleted = this.store.delete(ref)
    if (deleted === undefined) return false
    this.timeline.record({ type: 'deleted', object: ref, cause, ...this.ownerOf(deleted) })
    this.collect()
    return true
  }

  /** Deletes, until none is left, every object whose owners are all gone. */
  collect (): void {
    for (;;) {
      const orphaned = this.store.firstOrphan()
      if (orphaned === undefined) return
      this.store.delete(refOf(orphaned))
      const owner = this.ownerOf(orphaned)
      this.timeline.record({ type: 'deleted', object: refOf(orphaned), cause: 'garbage-collector', ...owner })
    }
  }

  /** The object's controller as a timeline `owner`, if it has one. */
  ownerOf (object: KubeObject): { owner?: ObjectRef } {
    const ref = controllerOf(object)
    if (ref === undefined) return {}
    const owner: ObjectRef = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name }
    if (object.metadata.namespace !== undefined && this.resources.isNamespaced(ref.apiVersion, ref.kind)) {
      owner.namespace = object.metadata.namespace
    }
    return { owner }
  }
}
