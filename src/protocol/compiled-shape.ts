// A shape (src/k8s/reads.ts) made ready for the projection (src/protocol/projection.ts): its
// member names as bytes, and where the memo of built objects comes in (docs/wire.md, "The memo").
// A shape says what the memo remembers by a mark a hook's request shape puts on it:
// - memoized(shape): a child or related object, remembered under its group (the name of the map
//   it is in, `Job.batch/v1`) and its key in that map (`namespace/name` for hook version v2);
// - memoizedPart(shape): a member of the parent (its spec, its status), remembered under the
//   parent's UID and the member's name;
// - PARENT_UID: where the parent's UID is read, before its spec and status (Kubernetes writes an
//   object's members in order of their names: metadata comes first).
import type { ObjectShape, Shape } from '../k8s/reads.js'

/** How an object of a shape is remembered: by its group and key, or by the parent's UID and its name. */
export type MemoRole = 'object' | 'part'

const ROLE = Symbol('jobhooks.memoRole')
type Marked = ObjectShape & { [ROLE]?: MemoRole | 'uid' }

function marked (shape: ObjectShape, role: MemoRole | 'uid'): ObjectShape {
  const copy: Marked = { ...shape }
  copy[ROLE] = role
  return copy
}

/** `shape`, for a child or related object in its group's map: what is built of it is remembered. */
export function memoized (shape: ObjectShape): ObjectShape {
  return marked(shape, 'object')
}

/** `shape`, for a member of the parent: what is built of it is remembered under the parent's UID. */
export function memoizedPart (shape: ObjectShape): ObjectShape {
  return marked(shape, 'part')
}

/** The shape of the parent's `metadata.uid`: kept whole, and naming the parent's memoized parts. */
export const PARENT_UID: ObjectShape = marked({ '*': true }, 'uid')

/**
 * A shape that names members, made ready for matching names as bytes: the names' UTF-8 bytes and
 * the shape of each, and the shape of the members it does not name.
 */
export interface Members {
  readonly names: readonly Buffer[]
  readonly strings: readonly string[]
  readonly shapes: readonly Compiled[]
  readonly others: Compiled
  /** How an object of this shape is remembered; undefined: it is not. */
  readonly memo: MemoRole | undefined
  /** Which reading of an object this is, in its memo keys: another shape builds another object. */
  readonly id: number
  /** Whether the members of this shape are remembered objects: the name it comes under is their group. */
  readonly holdsObjects: boolean
  /** Whether this is the parent's UID. */
  readonly isParentUid: boolean
  /** Whether a remembered shape is this one or below it: where the built request holds stand-ins. */
  readonly hasMemo: boolean
}
export type Compiled = boolean | Members

/** Shapes made ready, each once, by the app that reads them (src/protocol/wire-state.ts). */
export class ShapeCompiler {
  private readonly compiled = new WeakMap<object, Members>()
  private count = 0

  compile (shape: Shape): Compiled {
    if (typeof shape === 'boolean') return shape
    let members = this.compiled.get(shape)
    if (members === undefined) {
      const strings = Object.keys(shape).filter(name => name !== '*')
      const shapes = strings.map(name => this.compile(shape[name] as Shape))
      const others = Object.hasOwn(shape, '*') ? this.compile(shape['*'] as Shape) : false
      const role = (shape as Marked)[ROLE]
      const memo = role === 'uid' ? undefined : role
      const below = [...shapes, others].filter((s): s is Members => typeof s !== 'boolean')
      members = {
        names: strings.map(name => Buffer.from(name, 'utf8')),
        strings,
        shapes,
        others,
        memo,
        id: ++this.count,
        holdsObjects: below.some(s => s.memo === 'object'),
        isParentUid: role === 'uid',
        hasMemo: memo !== undefined || below.some(s => s.hasMemo)
      }
      this.compiled.set(shape, members)
    }
    return members
  }
}
