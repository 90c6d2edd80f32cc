import type { KubeObject, ObjectMap } from './types.js'
import { isRecord } from './types.js'

/** The `"<Kind>.<apiVersion>"` key Metacontroller uses for a group of children or related objects. */
export function groupKey (kind: string, apiVersion: string): string {
  return `${kind}.${apiVersion}`
}

/**
 * The objects of one group, sorted by namespace and name. Names are read from the objects, never
 * from the map keys: those are `name` or `namespace/name` depending on the hook version.
 */
export function objectsOf (map: ObjectMap | undefined, kind: string, apiVersion: string): KubeObject[] {
  return sortedObjects(map?.[groupKey(kind, apiVersion)])
}

function sortedObjects (group: unknown): KubeObject[] {
  if (!isRecord(group)) return []
  return Object.values(group)
    .filter((o): o is KubeObject => isRecord(o) && isRecord(o.metadata) && typeof o.metadata.name === 'string')
    .sort(byNamespacedName)
}

/** The objects of one group indexed by name (children live in the parent's namespace). */
export function objectsByName (map: ObjectMap | undefined, kind: string, apiVersion: string): Map<string, KubeObject> {
  return new Map(objectsOf(map, kind, apiVersion).map(o => [o.metadata.name, o]))
}

/** Orders objects by name: the order children are returned in. */
export function byName (a: KubeObject, b: KubeObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0
}

function byNamespacedName (a: KubeObject, b: KubeObject): number {
  const an = `${a.metadata.namespace ?? ''}/${a.metadata.name}`
  const bn = `${b.metadata.namespace ?? ''}/${b.metadata.name}`
  return an < bn ? -1 : an > bn ? 1 : 0
}

/** Annotations Metacontroller and kubectl write to remember what they applied. */
const APPLY_BOOKKEEPING = ['metacontroller.k8s.io/last-applied-configuration', 'kubectl.kubernetes.io/last-applied-configuration']

/**
 * An observed child as a desired child: the same spec and identity, without what the API server
 * and Metacontroller add (status, uid, managedFields, last-applied bookkeeping). Returning a child
 * this way keeps it exactly as it is, whatever update strategy the controller uses.
 */
export function keepAsObserved (observed: KubeObject): KubeObject {
  const meta = observed.metadata
  const kept: KubeObject = {
    apiVersion: observed.apiVersion,
    kind: observed.kind,
    metadata: { name: meta.name }
  }
  if (meta.namespace !== undefined) kept.metadata.namespace = meta.namespace
  if (meta.labels !== undefined) kept.metadata.labels = meta.labels
  if (meta.annotations !== undefined) {
    const annotations = Object.fromEntries(Object.entries(meta.annotations).filter(([k]) => !APPLY_BOOKKEEPING.includes(k)))
    if (Object.keys(annotations).length > 0) kept.metadata.annotations = annotations
  }
  for (const [key, value] of Object.entries(observed)) {
    if (key !== 'apiVersion' && key !== 'kind' && key !== 'metadata' && key !== 'status') kept[key] = value
  }
  return kept
}

/** Every observed child of every group, kept as it is: the answer when we must not change anything. */
export function keepAllObserved (children: ObjectMap | undefined): KubeObject[] {
  if (!isRecord(children)) return []
  return Object.keys(children).sort().flatMap(key => sortedObjects(children[key]).map(keepAsObserved))
}
