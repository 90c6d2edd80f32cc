// The simulated API server's storage: objects keyed by (apiVersion, kind, namespace, name), with
// the bookkeeping the API server does (uid, creationTimestamp, resourceVersion, generation).
// Deterministic: uids and resource versions come from counters, times from the simulated clock.
// Every write reports (old, new) to a listener, as a watch would.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { deepEqual, describeRef, kubeTime, refKey, refOf, wire, type ObjectRef } from './objects.js'

export type ChangeListener = (old: KubeObject | undefined, current: KubeObject | undefined) => void

/** Fields of metadata only the API server sets. */
const SYSTEM_METADATA = [
  'uid', 'creationTimestamp', 'resourceVersion', 'generation', 'managedFields', 'deletionTimestamp'
] as const

export class ObjectStore {
  /** Mutating admission webhooks on CREATE (Kueue's, when modelled): they see every new object before it is stored. */
  readonly createWebhooks: Array<(stored: KubeObject) => void> = []
  private readonly objects = new Map<string, KubeObject>()
  /** The same objects by type (`apiVersion kind`): a list reads its type only, of thousands of Jobs and Pods. */
  private readonly byType = new Map<string, Map<string, KubeObject>>()
  private uids = 0
  private versions = 0

  constructor (private readonly nowMs: () => number, private readonly listener: ChangeListener = () => {}) {}

  /** A copy of the stored object, or undefined. */
  get (ref: ObjectRef): KubeObject | undefined {
    const found = this.objects.get(refKey(ref))
    return found === undefined ? undefined : wire(found)
  }

  getByUid (uid: string): KubeObject | undefined {
    for (const object of this.objects.values()) if (object.metadata.uid === uid) return wire(object)
    return undefined
  }

  /** Copies of the objects of one type, optionally in one namespace, sorted by namespace and name. */
  list (apiVersion: string, kind: string, namespace?: string): KubeObject[] {
    return this.view(apiVersion, kind, namespace).map(o => wire(o))
  }

  /**
   * The stored objects of one type themselves, in the order of `list`: for who only reads them at
   * once (the informers deciding whom a change wakes), as a copy of each would cost every event.
   */
  view (apiVersion: string, kind: string, namespace?: string): readonly KubeObject[] {
    return [...this.byType.get(`${apiVersion} ${kind}`)?.entries() ?? []]
      .filter(([, o]) => namespace === undefined || o.metadata.namespace === namespace)
      .sort(([a], [b]) => compareText(a, b))
      .map(([, o]) => o)
  }

  /**
   * A copy of the first object, in the order of `all`, that has owners and none of them exists: what
   * the garbage collector deletes next. One pass without copies, for thousands of Jobs go at once.
   */
  firstOrphan (): KubeObject | undefined {
    const uids = new Set<unknown>()
    for (const object of this.objects.values()) uids.add(object.metadata.uid)
    let first: [string, KubeObject] | undefined
    for (const [key, object] of this.objects) {
      const owners = object.metadata.ownerReferences ?? []
      if (owners.length === 0 || owners.some(r => uids.has(r.uid))) continue
      if (first === undefined || compareText(key, first[0]) < 0) first = [key, object]
    }
    return first === undefined ? undefined : wire(first[1])
  }

  all (): KubeObject[] {
    return [...this.objects.values()].sort((a, b) => compareText(refKey(refOf(a)), refKey(refOf(b)))).map(o => wire(o))
  }

  /**
   * POST: fails if the object exists. `manager` names who wrote it in managedFields; `admit`
   * plays the API server's defaulting on the object about to be stored (its uid is set).
   */
  create (object: KubeObject, manager: string, admit?: (stored: KubeObject) => void): KubeObject {
    const key = refKey(refOf(object))
    if (this.objects.has(key)) throw new AlreadyExistsError(refOf(object))
    const stored = wire(object)
    const now = this.nowMs()
    for (const field of SYSTEM_METADATA) delete stored.metadata[field]
    stored.metadata.uid = this.nextUid()
    stored.metadata.creationTimestamp = kubeTime(now)
    stored.metadata.generation = 1
    stored.metadata.resourceVersion = this.nextVersion()
    admit?.(stored)
    for (const webhook of this.createWebhooks) webhook(stored)
    stored.metadata.managedFields = [managedFieldsEntry(stored, manager, 'Update', now)]
    this.put(key, stored)
    this.listener(undefined, wire(stored))
    return wire(stored)
  }

  /**
   * PUT of the main resource: everything but status and the system metadata is replaced.
   * `metadata.generation` moves when anything outside metadata and status changed. `admit`
   * plays the API server's defaulting on the object about to be stored. With `checkVersion`, the
   * object's resourceVersion must be the stored one (ConflictError otherwise), as for a client
   * that sends the object it read. An update the API server would refuse throws InvalidError
   * (422): a Job's template, selector or completion mode changed.
   */
  update (
    object: KubeObject,
    options: { keepStatus?: boolean, checkVersion?: boolean, admit?: (stored: KubeObject) => void } = {}
  ): KubeObject {
    const key = refKey(refOf(object))
    const old = this.objects.get(key)
    if (old === undefined) throw new NotFoundError(refOf(object))
    if (options.checkVersion === true && object.metadata.resourceVersion !== old.metadata.resourceVersion) {
      throw new ConflictError(refOf(object))
    }
    const next = wire(object)
    for (const field of SYSTEM_METADATA) {
      if (old.metadata[field] === undefined) delete next.metadata[field]
      else (next.metadata as Record<string, unknown>)[field] = old.metadata[field]
    }
    if (options.keepStatus !== false) {
      if (old.status === undefined) delete next.status
      else next.status = old.status
    }
    options.admit?.(next)
    const invalid = updateProblem(old, next)
    if (invalid !== undefined) throw new InvalidError(refOf(object), invalid)
    if (deepEqual(next, old)) return wire(old)
    if (!deepEqual(withoutMetadataAndStatus(next), withoutMetadataAndStatus(old))) {
      next.metadata.generation = (old.metadata.generation ?? 0) + 1
    }
    next.metadata.resourceVersion = this.nextVersion()
    this.put(key, next)
    this.listener(wire(old), wire(next))
    return wire(next)
  }

  /** PUT of the status subresource: only `status` changes. No write when nothing changes. */
  updateStatus (ref: ObjectRef, status: unknown): KubeObject {
    const key = refKey(ref)
    const old = this.objects.get(key)
    if (old === undefined) throw new Error(`${describeRef(ref)} does not exist`)
    if (deepEqual(old.status, status)) return wire(old)
    const next: KubeObject = { ...wire(old), status: wire(status) }
    next.metadata.resourceVersion = this.nextVersion()
    this.put(key, next)
    this.listener(wire(old), wire(next))
    return wire(next)
  }

  /**
   * DELETE of an object that still has finalizers: the API server only sets its
   * deletionTimestamp (once); the object goes when its last finalizer is removed.
   */
  terminate (ref: ObjectRef): KubeObject | undefined {
    const key = refKey(ref)
    const old = this.objects.get(key)
    if (old === undefined) return undefined
    if (old.metadata.deletionTimestamp !== undefined) return wire(old)
    const next: KubeObject = wire(old)
    next.metadata.deletionTimestamp = kubeTime(this.nowMs())
    next.metadata.resourceVersion = this.nextVersion()
    this.put(key, next)
    this.listener(wire(old), wire(next))
    return wire(next)
  }

  private put (key: string, object: KubeObject): void {
    this.objects.set(key, object)
    const type = `${object.apiVersion} ${object.kind}`
    const ofType = this.byType.get(type) ?? new Map<string, KubeObject>()
    ofType.set(key, object)
    this.byType.set(type, ofType)
  }

  /** DELETE: returns the deleted object, or undefined if there was none. */
  delete (ref: ObjectRef): KubeObject | undefined {
    const key = refKey(ref)
    const old = this.objects.get(key)
    if (old === undefined) return undefined
    this.objects.delete(key)
    this.byType.get(`${old.apiVersion} ${old.kind}`)?.delete(key)
    this.listener(wire(old), undefined)
    return wire(old)
  }

  private nextUid (): string {
    this.uids += 1
    return `00000000-0000-4000-8000-${this.uids.toString(16).padStart(12, '0')}`
  }

  private nextVersion (): string {
    this.versions += 1
    return String(this.versions)
  }
}

export class AlreadyExistsError extends Error {
  constructor (readonly ref: ObjectRef) {
    super(`${describeRef(ref)} already exists`)
  }
}

/** 404: the object is not there (any more). */
export class NotFoundError extends Error {
  constructor (readonly ref: ObjectRef) {
    super(`${describeRef(ref)} does not exist`)
  }
}

/** 409: the object changed since the writer read it. */
export class ConflictError extends Error {
  constructor (readonly ref: ObjectRef) {
    super(`${describeRef(ref)}: the object has been modified; ` +
      'please apply your changes to the latest version and try again')
  }
}

/** 422: the API server refuses the object. */
export class InvalidError extends Error {
  constructor (readonly ref: ObjectRef, reason: string) {
    super(`${ref.kind} ${JSON.stringify(ref.name)} is invalid: ${reason}`)
  }
}

/**
 * Why the API server would refuse `next` over `old`: the fields of a Job's spec that never change
 * (Kubernetes lets a suspended Job's template change in a few scheduling fields and container
 * resources; the simulator refuses those too, so a hook that rebuilds a Job is always caught).
 */
function updateProblem (old: KubeObject, next: KubeObject): string | undefined {
  if (old.apiVersion !== 'batch/v1' || old.kind !== 'Job') return undefined
  const spec = (o: KubeObject): Record<string, unknown> => (isRecord(o.spec) ? o.spec : {})
  const changed = IMMUTABLE_JOB_FIELDS.filter(field => !deepEqual(spec(old)[field], spec(next)[field]))
  if (changed.length === 0) return undefined
  return changed.map(field => `spec.${field}: Invalid value: field is immutable`).join(', ')
}

const IMMUTABLE_JOB_FIELDS = ['selector', 'template', 'completionMode']

function withoutMetadataAndStatus (object: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status: _status, ...rest } = object
  return rest
}

function managedFieldsEntry (
  object: KubeObject, manager: string, operation: string, now: number
): Record<string, unknown> {
  const owned = Object.keys(object).filter(k => k !== 'apiVersion' && k !== 'kind' && k !== 'status')
  const fields = Object.fromEntries(owned.map(k => [`f:${k}`, {}]))
  return {
    manager,
    operation,
    apiVersion: object.apiVersion,
    time: kubeTime(now),
    fieldsType: 'FieldsV1',
    fieldsV1: isRecord(fields) ? fields : {}
  }
}

function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
