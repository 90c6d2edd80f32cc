// The typed view of the wire the pure hooks work with, and the contract of a kind's hooks.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import type { RelatedResourceRule } from './schemas.js'
import type { ScriptLibrary } from '../scripts/library.js'
import type { Effect } from '../effects/types.js'
import { WHOLE_OBJECT, type ObjectShape, type Shape } from '../k8s/reads.js'
import { memoized, memoizedPart, PARENT_UID } from './compiled-shape.js'

export const HOOK_NAMES = ['sync', 'finalize', 'customize'] as const
export type HookName = typeof HOOK_NAMES[number]

export interface SyncRequest {
  controller?: unknown
  parent: KubeObject
  children: ObjectMap
  related: ObjectMap
  finalizing?: boolean
}

export interface SyncResponse {
  status: Record<string, unknown>
  children: KubeObject[]
  resyncAfterSeconds?: number
  finalized?: boolean
}

export interface CustomizeRequest {
  controller?: unknown
  parent: KubeObject
}

export interface CustomizeResponse {
  relatedResources: RelatedResourceRule[]
}

/** What a hook may depend on besides the request: the clock and the scripts shipped with the service. */
export interface HookContext {
  now: Date
  scripts: ScriptLibrary
}

/** What a sync or finalize hook answers: Metacontroller's part, and the effects the service applies. */
export interface SyncAnswer {
  response: SyncResponse
  effects: Effect[]
}

/** A kind's hooks: pure functions of the request and the context. */
export interface KindHooks {
  kind: string
  /** The status field of the kind's phase column, set to `Invalid` when a hook fails. */
  phaseField: string
  /**
   * The top-level status fields this version knows, as its CRD names them: those its hooks write,
   * and `observedGeneration`, which Metacontroller writes. Any other field of the observed status
   * belongs to another version and is carried forward unchanged (src/controllers/common/status-fields.ts).
   */
  statusFields: readonly string[]
  sync: (request: SyncRequest, context: HookContext) => SyncAnswer
  finalize?: (request: SyncRequest, context: HookContext) => SyncAnswer
  customize?: (request: CustomizeRequest, context: HookContext) => CustomizeResponse
  /** What the sync and finalize hooks read of the children and related objects. */
  reads?: KindReads
  /**
   * The update strategies the answers are safe under, by child group (`"<Kind>.<apiVersion>"`,
   * as in `reads`). A group not named: OnDelete only, the answers keeping its children by
   * identity. A group that allows more is kept as last applied wherever an answer keeps every
   * child (keepAllObserved, `keptAsApplied`).
   */
  childUpdates?: Readonly<Record<string, ChildUpdates>>
}

/** A child update strategy of Metacontroller's (`childResources[].updateStrategy.method`). */
export type UpdateMethod = 'OnDelete' | 'InPlace' | 'Recreate' | 'RollingRecreate' | 'RollingInPlace'

/** The strategies a kind's answers are safe under for one child type. */
export interface ChildUpdates {
  /** The plural a CompositeController names the type by in `childResources` (`jobs`). */
  resource: string
  methods: readonly UpdateMethod[]
}

/** The child groups a kind lets Metacontroller update: their children are kept as last applied, not by identity. */
export function keptAsApplied (kind: Pick<KindHooks, 'childUpdates'>): string[] {
  return Object.entries(kind.childUpdates ?? {})
    .filter(([, updates]) => updates.methods.some(m => m !== 'OnDelete'))
    .map(([group]) => group)
}

/**
 * The shapes (src/k8s/reads.ts) a kind reads its children and related objects to, by group
 * (`"<Kind>.<apiVersion>"`). A group not named is read whole, without managedFields.
 */
export interface KindReads {
  children?: Readonly<Record<string, Shape>>
  related?: Readonly<Record<string, Shape>>
}

/**
 * The shape of a sync or finalize request whose hooks read `reads`: the controller and the parent
 * whole (without managedFields), each child and related object to its group's shape. Made once
 * per route: the memo (docs/wire.md) tells readings of an object apart by their shape.
 */
export function syncRequestShape (reads: KindReads = {}): Shape {
  // Each child and related object is remembered by its group and key: Metacontroller sends the
  // same bytes for most of them sync after sync.
  const groups = (shapes: Readonly<Record<string, Shape>> = {}): Shape => {
    const byGroup: Record<string, Shape> = { '*': { '*': memoized(WHOLE_OBJECT) } }
    for (const [group, shape] of Object.entries(shapes)) {
      byGroup[group] = { '*': typeof shape === 'boolean' ? shape : memoized(shape) }
    }
    return byGroup
  }
  // The parent whole, its spec and status remembered by its UID: a sync mostly sees them as the
  // last one did, and the status of a large job (a record per Pod or target) is most of what is
  // left to build once its objects come from the memo.
  const metadata = { ...WHOLE_OBJECT.metadata as ObjectShape, uid: PARENT_UID }
  const parent = { ...WHOLE_OBJECT, metadata, spec: memoizedPart({ '*': true }), status: memoizedPart({ '*': true }) }
  const children = groups(reads.children)
  return { '*': true, controller: WHOLE_OBJECT, parent, children, related: groups(reads.related) }
}

/** A request built whole but for managedFields: customize requests, and kinds that declare no reads. */
export const WHOLE_REQUEST = syncRequestShape()

/** How a hook call ended, for its log line and metrics: `invalid` is a spec the hook refused (law 2). */
export type Outcome = 'ok' | 'invalid' | 'error' | 'bad_request' | 'shed'
