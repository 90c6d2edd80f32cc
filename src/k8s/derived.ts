// What a hook reads out of an object, kept with the object when the object cannot change. The
// memo of built objects (docs/wire.md) gives a hook the very same objects sync after sync while
// their bytes stay the same; what a pure function reads of one is then the same every time, and
// reading it again costs more than it looks: at 5,000 Jobs the objects lie scattered through the
// heap, and a walk down a Job's Pod template to its node pin misses the caches at every step.
//
// Which objects cannot change is said explicitly: the memo hands them over through
// freezeForGood, which freezes them all the way down and gives them a place for what is read of
// them. Any other object, frozen or not, is read every time: it was built for one request, or by
// a caller who may still change it. What is remembered lives on the object, so it goes when the
// object does (with the memo of the app that built it), and nothing is kept at module level.
import type { KubeObject } from './types.js'

/**
 * On an object freezeForGood froze: what each reader read of it. Not enumerable, so never
 * serialised nor copied by a spread (a copy is an object of its own).
 */
const READ_BEFORE = Symbol('jobhooks.readBefore')

/**
 * `value` and everything in it frozen, and an object given its place for what is read of it
 * (rememberedFor): what is shared between requests cannot be written to.
 */
export function freezeForGood<T> (value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  if (!Array.isArray(value)) Object.defineProperty(value, READ_BEFORE, { value: new Map() })
  deepFreeze(value)
  return value
}

function deepFreeze (value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i])
  } else {
    // What JSON.parse built has no members but its own, all enumerable.
    const record = value as Record<string, unknown>
    for (const member in record) deepFreeze(record[member])
  }
}

/** Whether `object` was frozen for good (freezeForGood): nothing in it can change. */
export function isFrozenForGood (object: object): boolean {
  return readBefore(object) !== undefined
}

function readBefore (object: object): Map<unknown, unknown> | undefined {
  return (object as { [READ_BEFORE]?: Map<unknown, unknown> })[READ_BEFORE]
}

/**
 * `read`, remembered on each object frozen for good it is given: `read` must be a pure function
 * of the object. What is remembered is shared from sync to sync, so it is frozen for good too.
 */
export function rememberedFor<T> (read: (object: KubeObject) => T): (object: KubeObject) => T {
  return object => {
    const remembered = readBefore(object)
    if (remembered === undefined) return read(object)
    const known = remembered.get(read)
    if (known !== undefined || remembered.has(read)) return known as T
    const value = freezeForGood(read(object))
    remembered.set(read, value)
    return value
  }
}
