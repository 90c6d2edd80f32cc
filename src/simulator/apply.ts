// Metacontroller's dynamic apply of a desired child over one that exists (v4.17.2, the default
// apply strategy: pkg/dynamic/apply and pkg/controller/common/manage_children.go), written again
// from how it behaves:
//
// - the last-applied annotation of the observed child is what Metacontroller applied before;
// - the desired child (its own last-applied annotation dropped) is merged into a copy of the
//   observed one three ways: in an object, a member the last-applied copy has and the desired
//   child lacks is removed, and every member the desired child has is merged in turn; a list
//   whose items are all objects sharing a conventional key (containerPort, port, mountPath, name,
//   uid, ip, path, in that order of preference) is merged as a map by that key, keeping the
//   observed order; any other list, and any scalar, becomes the desired value. A value of
//   another type than the observed one counts as absent (the type checks of v4.17.2 never fire);
//   an observed object merged with an absent desired value stays, minus the last-applied members;
// - the system fields of metadata and the status are put back as observed;
// - the annotation is set to the JSON of the desired child, which Go writes with its keys sorted.
//
// Metacontroller then compares the result with the observed child and, when they differ and the
// child resource's update strategy is InPlace, PUTs it.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { LAST_APPLIED_ANNOTATION } from '../k8s/objects.js'
import { diffPaths, wire } from './objects.js'

/** Metadata fields that only the API server sets: what a merge may never change. */
const SYSTEM_METADATA = [
  'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp',
  'deletionGracePeriodSeconds', 'managedFields'
]

/** The list item members taken for a map key, most likely first. */
const LIST_MAP_KEYS = ['containerPort', 'port', 'mountPath', 'name', 'uid', 'ip', 'path']

export class LastAppliedError extends Error {
  override name = 'LastAppliedError'
}

/**
 * The object Metacontroller would PUT for `desired` over `observed`: the merge described above,
 * with the annotation set. Throws LastAppliedError when the observed annotation is not the JSON
 * of an object, as Metacontroller fails that child then, whatever its update strategy.
 */
export function applyUpdate (observed: KubeObject, desired: KubeObject): KubeObject {
  const last = lastAppliedOf(observed)
  const update = wire(desired)
  const annotations = update.metadata.annotations
  if (isRecord(annotations) && Object.hasOwn(annotations, LAST_APPLIED_ANNOTATION)) {
    delete annotations[LAST_APPLIED_ANNOTATION]
  }
  const merged = mergeValue(wire(observed), last, wire(update)) as KubeObject
  for (const field of SYSTEM_METADATA) restore(merged, observed, 'metadata', field)
  restore(merged, observed, 'status')
  if (!isRecord(merged.metadata)) merged.metadata = {} as KubeObject['metadata']
  merged.metadata.annotations = { ...stringMap(merged.metadata.annotations), [LAST_APPLIED_ANNOTATION]: goJson(update) }
  return merged
}

/**
 * Where `merged` differs from `observed`, the last-applied annotation aside: what applying it changes (`spec.suspend`).
 */
export function changedFields (observed: KubeObject, merged: KubeObject): string[] {
  return diffPaths(withoutLastApplied(observed), withoutLastApplied(merged), '', 20)
}

function withoutLastApplied (object: KubeObject): KubeObject {
  const copy = wire(object)
  if (isRecord(copy.metadata?.annotations)) delete copy.metadata.annotations[LAST_APPLIED_ANNOTATION]
  return copy
}

/** The observed annotation's object; undefined when there is none (or `null`). */
function lastAppliedOf (observed: KubeObject): Record<string, unknown> | undefined {
  const text = observed.metadata.annotations?.[LAST_APPLIED_ANNOTATION]
  if (text === undefined || text === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new LastAppliedError(`can't unmarshal ${JSON.stringify(LAST_APPLIED_ANNOTATION)} annotation: ${reason}`)
  }
  if (value === null) return undefined
  if (!isRecord(value)) {
    const annotation = JSON.stringify(LAST_APPLIED_ANNOTATION)
    throw new LastAppliedError(`can't unmarshal ${annotation} annotation: not a JSON object`)
  }
  return value
}

/** The three-way merge of one value: `destination` is a copy of the observed value, which it may change. */
export function mergeValue (destination: unknown, last: unknown, desired: unknown): unknown {
  if (isRecord(destination)) {
    return mergeObject(destination, isRecord(last) ? last : undefined, isRecord(desired) ? desired : undefined)
  }
  if (Array.isArray(destination)) {
    return mergeList(destination, Array.isArray(last) ? last : undefined, Array.isArray(desired) ? desired : undefined)
  }
  return desired
}

function mergeObject (
  destination: Record<string, unknown>, last: Record<string, unknown> | undefined,
  desired: Record<string, unknown> | undefined
): Record<string, unknown> {
  for (const key of Object.keys(last ?? {})) {
    if (desired === undefined || !Object.hasOwn(desired, key)) delete destination[key]
  }
  for (const [key, value] of Object.entries(desired ?? {})) {
    const current = Object.hasOwn(destination, key) ? destination[key] : undefined
    const applied = last !== undefined && Object.hasOwn(last, key) ? last[key] : undefined
    destination[key] = mergeValue(current, applied, value)
  }
  return destination
}

function mergeList (destination: unknown[], last: unknown[] | undefined, desired: unknown[] | undefined): unknown {
  const key = listMapKey([destination, last ?? [], desired ?? []])
  if (key === undefined) return desired ?? null
  const byKey = (list: unknown[] | undefined): Record<string, unknown> | undefined => {
    if (list === undefined) return undefined
    const map: Record<string, unknown> = {}
    for (const item of list) map[keyText((item as Record<string, unknown>)[key])] = item
    return map
  }
  const merged = mergeObject(byKey(destination) as Record<string, unknown>, byKey(last), byKey(desired))
  // The observed items first, in their order (each time they occur), then the new ones.
  const out: unknown[] = []
  const placed = new Set<string>()
  for (const item of destination) {
    const k = keyText((item as Record<string, unknown>)[key])
    if (!Object.hasOwn(merged, k)) continue
    out.push(merged[k])
    placed.add(k)
  }
  for (const item of desired ?? []) {
    const k = keyText((item as Record<string, unknown>)[key])
    if (placed.has(k)) continue
    out.push(merged[k])
    placed.add(k)
  }
  return out
}

/** The key every item of every list has, if all items are objects and one conventional key is common to them. */
function listMapKey (lists: unknown[][]): string | undefined {
  let common: Set<string> | undefined
  for (const list of lists) {
    for (const item of list) {
      if (!isRecord(item)) return undefined
      if (common === undefined) common = new Set(Object.keys(item))
      else for (const k of common) if (!Object.hasOwn(item, k)) common.delete(k)
    }
  }
  return common === undefined ? undefined : LIST_MAP_KEYS.find(k => common.has(k))
}

/** A key value as Go's `%v` prints it, for the values JSON has. */
function keyText (value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return '<nil>'
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** Puts `path` of `merged` back as `observed` has it: set when it was set, removed when it was not. */
function restore (merged: Record<string, unknown>, observed: Record<string, unknown>, ...path: string[]): void {
  let from: unknown = observed
  for (const step of path) from = isRecord(from) && Object.hasOwn(from, step) ? from[step] : undefined
  let into = merged
  for (const step of path.slice(0, -1)) {
    if (!isRecord(into[step])) {
      if (from === undefined) return
      into[step] = {}
    }
    into = into[step] as Record<string, unknown>
  }
  const last = path[path.length - 1] as string
  if (from === undefined) delete into[last]
  else into[last] = wire(from)
}

function stringMap (value: unknown): Record<string, string> {
  if (!isRecord(value)) return {}
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'))
}

/**
 * JSON as Go's encoding/json writes a decoded object: members sorted by key, and `<`, `>`, `&`,
 * U+2028 and U+2029 escaped. Metacontroller writes the last-applied annotation so; two copies of
 * one object give the same text.
 */
export function goJson (value: unknown): string {
  const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  return JSON.stringify(sortedKeys(value)).replace(/[<>&\u2028\u2029]/g, escape)
}

function sortedKeys (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (!isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort(compareUtf8)) {
    if (value[key] !== undefined) out[key] = sortedKeys(value[key])
  }
  return out
}

/** Go sorts map keys as byte strings: UTF-8 order, which differs from UTF-16's past U+FFFF. */
function compareUtf8 (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}
