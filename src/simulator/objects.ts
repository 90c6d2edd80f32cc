// Small pure helpers of the simulator: object references, deep equality the way Go's
// reflect.DeepEqual sees decoded JSON (map order does not matter), the paths where two values
// differ, and label selectors.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'

/** Which object: what Kubernetes keys an object by. `namespace` is absent for cluster-scoped ones. */
export interface ObjectRef {
  apiVersion: string
  kind: string
  namespace?: string
  name: string
}

export function refOf (object: KubeObject): ObjectRef {
  const ref: ObjectRef = { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name }
  if (object.metadata.namespace !== undefined) ref.namespace = object.metadata.namespace
  return ref
}

export function refKey (ref: ObjectRef): string {
  return `${ref.apiVersion}|${ref.kind}|${ref.namespace ?? ''}|${ref.name}`
}

/** `Job default/flow-job1`, for messages. */
export function describeRef (ref: ObjectRef): string {
  return `${ref.kind} ${namespacedName(ref)}`
}

export function namespacedName (ref: { namespace?: string, name: string }): string {
  return ref.namespace === undefined ? ref.name : `${ref.namespace}/${ref.name}`
}

/**
 * A copy as if it went through JSON, as everything does on the wire: undefined fields dropped,
 * undefined in a list and numbers JSON cannot hold as null, `toJSON` honoured. Walked by hand:
 * twice as fast as JSON.stringify and JSON.parse, and the simulator copies every object it hands out.
 */
export function wire<T> (value: T): T {
  return copyAsJson(value) as T
}

function copyAsJson (value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value !== 'object') return undefined
  if (Array.isArray(value)) {
    const list: unknown[] = new Array(value.length)
    for (let i = 0; i < value.length; i++) list[i] = copyAsJson(value[i]) ?? null
    return list
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return JSON.parse(JSON.stringify(value))
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const field = copyAsJson((value as Record<string, unknown>)[key])
    if (field === undefined) continue
    // As JSON.parse makes it: an own field, even named __proto__.
    if (key !== '__proto__') copy[key] = field
    else Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true })
  }
  return copy
}

export function deepEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a).filter(k => a[k] !== undefined)
    const otherKeys = Object.keys(b).filter(k => b[k] !== undefined)
    return keys.length === otherKeys.length && keys.every(k => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

/** Up to `limit` paths (`status.jobs[1].phase`) where `a` and `b` differ. */
export function diffPaths (a: unknown, b: unknown, prefix = '', limit = 10): string[] {
  const out: string[] = []
  walkDiff(a, b, prefix, out, limit)
  return out
}

function walkDiff (a: unknown, b: unknown, path: string, out: string[], limit: number): void {
  if (out.length >= limit || deepEqual(a, b)) return
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, i) => walkDiff(item, b[i], `${path}[${i}]`, out, limit))
    return
  }
  if (isRecord(a) && isRecord(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      walkDiff(a[key], b[key], path === '' ? key : `${path}.${key}`, out, limit)
    }
    return
  }
  out.push(path === '' ? '(whole value)' : path)
}

/**
 * Whether applying `desired` over `observed` would change anything: every field the desired
 * object sets must already hold that value (lists element by element). A rough stand-in for the
 * three-way merge of Metacontroller's dynamic apply, used to report drift, never to act on it.
 */
export function isContainedIn (desired: unknown, observed: unknown): boolean {
  if (Array.isArray(desired)) {
    return Array.isArray(observed) && desired.length === observed.length &&
      desired.every((item, i) => isContainedIn(item, observed[i]))
  }
  if (isRecord(desired)) {
    return isRecord(observed) &&
      Object.entries(desired).every(([k, v]) => v === undefined || isContainedIn(v, observed[k]))
  }
  return desired === observed
}

export interface LabelSelector {
  matchLabels?: Record<string, string>
  matchExpressions?: Array<{ key: string, operator: string, values?: string[] }>
}

/** Label selector semantics of the API server. An empty selector matches everything. */
export function matchesSelector (
  selector: LabelSelector | undefined, labels: Record<string, string> | undefined
): boolean {
  if (selector === undefined) return true
  const have = labels ?? {}
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, key)
    const value = have[key]
    switch (operator) {
      case 'In': if (!present || !values.includes(value as string)) return false; break
      case 'NotIn': if (present && values.includes(value as string)) return false; break
      case 'Exists': if (!present) return false; break
      case 'DoesNotExist': if (present) return false; break
      default: throw new Error(`unknown label selector operator ${JSON.stringify(operator)}`)
    }
  }
  return true
}

/** Kubernetes writes times with second precision: `2026-01-01T00:00:10Z`. */
export function kubeTime (ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z')
}
