// Typed reads and edits of objects in tests: a test names the shape it expects (a type of
// kubernetes-types, or the few fields it touches), or walks a path to an `unknown`, never `as any`.
import type { KubeObject } from '../../src/k8s/types.js'

function present (object: KubeObject | undefined, what: string): KubeObject {
  if (object === undefined) throw new Error(`expected an object to read its ${what}, found none`)
  return object
}

/** `object` as a typed Kubernetes object (kubernetes-types' `Job`, `Pod`, ...); throws when it is missing. */
export function objectAs<T extends object> (object: KubeObject | undefined): T {
  return present(object, 'fields') as unknown as T
}

/** The spec of `object`, of shape T, to read or to edit in place; throws when there is none. */
export function specOf<T extends object = Record<string, unknown>> (object: KubeObject | undefined): T {
  const { spec, kind, metadata } = present(object, 'spec')
  if (typeof spec !== 'object' || spec === null) throw new Error(`${kind} ${metadata.name} has no spec`)
  return spec as T
}

/** The status of `object`, of shape T; throws when there is none. */
export function statusOf<T extends object> (object: KubeObject | undefined): T {
  const { status, kind, metadata } = present(object, 'status')
  if (typeof status !== 'object' || status === null) throw new Error(`${kind} ${metadata.name} has no status`)
  return status as T
}

/** The value at `path` (keys and array indexes) in `value`, or undefined where the path ends early. */
export function valueAt (value: unknown, ...path: Array<string | number>): unknown {
  let current = value
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}
