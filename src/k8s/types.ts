// The few shapes of Kubernetes objects every hook reads. Objects arrive whole (status,
// managedFields, ownerReferences), so everything beyond these fields stays `unknown`.

export interface ObjectMeta {
  name: string
  namespace?: string
  uid?: string
  generation?: number
  creationTimestamp?: string
  deletionTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
  [key: string]: unknown
}

export interface OwnerReference {
  apiVersion: string
  kind: string
  name: string
  uid: string
  controller?: boolean
  blockOwnerDeletion?: boolean
}

export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: ObjectMeta
  spec?: unknown
  status?: unknown
  [key: string]: unknown
}

/** A condition as the Kubernetes API conventions define it. */
export interface Condition {
  type: string
  status: 'True' | 'False' | 'Unknown'
  reason?: string
  message?: string
  lastTransitionTime?: string
  [key: string]: unknown
}

/** `children` / `related` of a hook request: `"<Kind>.<apiVersion>"` → object key → object. */
export type ObjectMap = Record<string, Record<string, KubeObject>>

export function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A string field of an object read from the cluster, or undefined when it is anything else. */
export function stringOrUndefined (value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** `record` without its undefined fields, so that answers compare and serialise alike every time. */
export function withoutUndefined<T extends object> (record: T): T {
  // A loop rather than Object.fromEntries, whose objects are slow to read: records come by the 10,000.
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(record)) {
    const value = (record as Record<string, unknown>)[key]
    if (value !== undefined) out[key] = value
  }
  return out as T
}
