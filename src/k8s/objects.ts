import type { KubeObject, ObjectMap, OwnerReference } from './types.js'
import { isRecord } from './types.js'
import { rememberedFor } from './derived.js'

/** The ownerReference with `controller: true`: the workload that manages the object, if any. */
export function controllerOf (object: KubeObject): OwnerReference | undefined {
  const refs = Array.isArray(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []
  return refs.find(r => r.controller === true)
}

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
  // One array, no intermediate copies: groups hold thousands of objects.
  const objects: KubeObject[] = []
  for (const key in group) {
    if (!Object.hasOwn(group, key)) continue
    const o = group[key]
    if (isRecord(o) && isRecord(o.metadata) && typeof o.metadata.name === 'string') objects.push(o as KubeObject)
  }
  return objects.sort(byNamespacedName)
}

/** The objects of one group indexed by name (children live in the parent's namespace). */
export function objectsByName (map: ObjectMap | undefined, kind: string, apiVersion: string): Map<string, KubeObject> {
  return new Map(objectsOf(map, kind, apiVersion).map(o => [o.metadata.name, o]))
}

/** Orders objects by name: the order children are returned in. */
export function byName (a: KubeObject, b: KubeObject): number {
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0
}

/**
 * Orders objects as their `"<namespace>/<name>"` keys compare (an absent namespace is empty),
 * without building those keys: a sort makes n·log n comparisons, and two new strings each was
 * most of what sorting thousands of objects allocated.
 */
function byNamespacedName (a: KubeObject, b: KubeObject): number {
  const an: unknown = a.metadata.namespace ?? ''
  const bn: unknown = b.metadata.namespace ?? ''
  // The same namespace (the usual case): the keys share `<namespace>/`, the names decide.
  if (an === bn) return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0
  if (typeof an === 'string' && typeof bn === 'string') return compareJoined(an, a.metadata.name, bn, b.metadata.name)
  // A namespace that is not a string (not from an API server): compare the keys themselves.
  const ak = `${an as string}/${a.metadata.name}`
  const bk = `${bn as string}/${b.metadata.name}`
  return ak < bk ? -1 : ak > bk ? 1 : 0
}

/** Compares `${a1}/${a2}` with `${b1}/${b2}` code unit by code unit, as `<` on the strings would. */
function compareJoined (a1: string, a2: string, b1: string, b2: string): number {
  const aLength = a1.length + 1 + a2.length
  const bLength = b1.length + 1 + b2.length
  const common = Math.min(aLength, bLength)
  for (let i = 0; i < common; i++) {
    const x = joinedCodeUnit(a1, a2, i)
    const y = joinedCodeUnit(b1, b2, i)
    if (x !== y) return x < y ? -1 : 1
  }
  return aLength < bLength ? -1 : aLength > bLength ? 1 : 0
}

const SLASH = 0x2f

function joinedCodeUnit (first: string, second: string, i: number): number {
  if (i < first.length) return first.charCodeAt(i)
  if (i === first.length) return SLASH
  return second.charCodeAt(i - first.length - 1)
}

/** The annotation in which Metacontroller's dynamic apply keeps the child it last applied, as JSON. */
export const LAST_APPLIED_ANNOTATION = 'metacontroller.k8s.io/last-applied-configuration'

/**
 * An observed child as the answer keeps it: its identity, nothing more. Under the update strategy
 * OnDelete, Metacontroller never updates a child that exists (pkg/controller/common/manage_children.go
 * in v4.17.2): it only matches the answer's children to the observed ones by name to know which to
 * keep, which to create and which to delete. So the hooks need not build, nor send back, the spec
 * of a child they keep. Under any other strategy this identity would be applied over the child:
 * a child type a kind declares safe beyond OnDelete (KindHooks.childUpdates) is kept with
 * keepAsApplied instead, and the hook routes refuse a controller with a strategy its kind does not
 * declare (src/protocol/update-strategy.ts).
 */
export function keepAsObserved (observed: KubeObject): KubeObject {
  const meta = observed.metadata
  const kept: KubeObject = { apiVersion: observed.apiVersion, kind: observed.kind, metadata: { name: meta.name } }
  if (meta.namespace !== undefined) kept.metadata.namespace = meta.namespace
  return kept
}

/**
 * An observed child as Metacontroller last applied it: the object its last-applied annotation
 * holds, or its identity (keepAsObserved) when it has no such annotation, an annotation that is
 * not the JSON of an object, or one that names another object.
 *
 * Why: under the update strategy InPlace, Metacontroller's dynamic apply (v4.17.2) merges an
 * answer's child into the observed one three ways, against that annotation: a field the
 * annotation has and the answer lacks is deleted, a field the answer has is set. The identity
 * alone would therefore delete every field Metacontroller once applied (a Job's spec, its labels);
 * this copy deletes nothing and sets every field to what it already is, so the child is not
 * written at all, and a hook that changes one field of it (a Job's `spec.suspend`) changes that
 * field and nothing else. Without an annotation there is nothing to merge against, and the
 * identity removes nothing. A kind that keeps children so must read the annotation
 * (APPLIED_JOB_READS, src/k8s/reads.ts).
 */
export function keepAsApplied (observed: KubeObject): KubeObject {
  const applied = lastApplied(observed)
  return applied ?? keepAsObserved(observed)
}

/**
 * The object of a child's last-applied annotation, if it is the JSON of this child; else undefined.
 * Of an observed object the memo keeps (src/k8s/derived.ts), parsed once and given frozen, as the
 * object is: a JobFlow of 10,000 Jobs would otherwise parse 10,000 annotations at every sync.
 */
export const lastApplied: (observed: KubeObject) => KubeObject | undefined = rememberedFor(readLastApplied)

function readLastApplied (observed: KubeObject): KubeObject | undefined {
  const annotations = observed.metadata.annotations
  const text = isRecord(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined
  if (typeof text !== 'string' || text === '') return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(parsed) || !isRecord(parsed.metadata)) return undefined
  const same =
    parsed.apiVersion === observed.apiVersion &&
    parsed.kind === observed.kind &&
    parsed.metadata.name === observed.metadata.name &&
    (parsed.metadata.namespace ?? '') === (observed.metadata.namespace ?? '')
  return same ? parsed as KubeObject : undefined
}

/**
 * Every observed child of every group, kept as it is: the answer when we must not change anything.
 * Children of the groups in `asApplied` (`"<Kind>.<apiVersion>"`) are kept as last applied, the
 * others by identity (see keepAsApplied and keepAsObserved).
 */
export function keepAllObserved (children: ObjectMap | undefined, asApplied: readonly string[] = []): KubeObject[] {
  if (!isRecord(children)) return []
  return Object.keys(children)
    .sort()
    .flatMap(key => sortedObjects(children[key]).map(asApplied.includes(key) ? keepAsApplied : keepAsObserved))
}
