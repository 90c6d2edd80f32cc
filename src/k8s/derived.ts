// What a hook reads out of an object, kept with the object when the object cannot change. The
// memo of built objects (src/protocol/object-memo.ts) gives a hook the very same deeply frozen
// objects sync after sync while their bytes stay the same; what a pure function reads of one is
// then the same every time, and reading it again costs more than it looks: at 5,000 Jobs the
// objects lie scattered through the heap, and a walk down a Job's Pod template to its node pin
// misses the caches at every step (most of what a DaemonJob sync over 5,000 Nodes spent in its
// hook). An object that is not frozen is read every time: it was built for this request alone.
import type { KubeObject } from './types.js'

/**
 * `read`, remembered for each frozen object it is given: `read` must be a pure function of the
 * object (which, frozen by the memo, is frozen all the way down).
 */
export function rememberedFor<T> (read: (object: KubeObject) => T): (object: KubeObject) => T {
  const remembered = new WeakMap<KubeObject, T>()
  return object => {
    if (!Object.isFrozen(object)) return read(object)
    const known = remembered.get(object)
    if (known !== undefined || remembered.has(object)) return known as T
    const value = read(object)
    remembered.set(object, value)
    return value
  }
}
