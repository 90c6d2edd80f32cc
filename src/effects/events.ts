// Kubernetes Events on the parent for what the service did outside Metacontroller: containers
// injected, a Pod evicted or its eviction refused by a PodDisruptionBudget, a Pod labelled or its
// condition set, the parent deleted after its TTL. `kubectl describe` of the parent lists them.
//
// As client-go's recorder writes them (k8s.io/client-go/tools/record): core/v1 Events whose
// involvedObject is the parent (what `kubectl describe` looks events up by) and whose `related`
// is the Pod acted on; and its EventCorrelator before anything is sent:
//
// - the same event again (same parent, type, reason and message) is one Event whose `count` and
//   `lastTimestamp` a PATCH raises, not a new Event;
// - past 10 different messages of one reason about one parent within 10 minutes, the latest stands
//   for them all: "(combined from similar events): ...";
// - a spam filter: per parent and reason, a burst of 25 writes, then one every 5 minutes; an
//   observation held back is still counted, and the next write carries the count.
//
// Its memory is bounded (least recently used caches of 4,096 entries, a queue of 1,000 writes)
// and it never holds up a hook's answer: `record` only queues; a few requests at a time write the
// queue, each within a timeout, and what cannot be written is counted and given up.
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { timestamp } from '../k8s/time.js'
import type { EffectEvents, EffectOutcome, EventListener, EventResult, ObjectRef, Permission } from './types.js'

export type { EventListener, EventResult }

/** What recording Events needs from the API server: `create` and `patch` on core `events`. */
export const EVENT_PERMISSIONS: readonly Permission[] = [
  { apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }
]

/** The component Events name as their source (`kubectl describe`'s From column). */
export const EVENT_COMPONENT = 'jobhooks'

/** The reasons of the Events this service records. */
export const EVENT_REASONS = {
  InjectedContainers: 'InjectedContainers',
  EvictedPod: 'EvictedPod',
  EvictionRefused: 'EvictionRefused',
  LabelledPod: 'LabelledPod',
  SetPodCondition: 'SetPodCondition',
  TTLExpired: 'TTLExpired'
} as const

/** The longest message an Event keeps (the limit events.k8s.io/v1 sets). */
const MESSAGE_LIMIT = 1024

/** `text`, cut to MESSAGE_LIMIT characters with an ellipsis when longer. */
function truncated (text: string): string {
  return text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT - 3)}...` : text
}

/** What happened, before it is correlated into an Event. */
export interface EventRecord {
  type: 'Normal' | 'Warning'
  reason: string
  message: string
  /** What the service did (events.k8s.io's `action`). */
  action: string
  /** The object acted on (a Pod), when it is not the parent itself. */
  related?: ObjectRef
}

/**
 * The Event an effect's outcome deserves, if any: what was applied, and an eviction a
 * PodDisruptionBudget refused (a Warning, which repeats on every retry and so is counted on one
 * Event). Nothing for an effect that failed otherwise (retried as it is, and named in the
 * parent's EffectsApplied condition), was gone, refused as out of reach or only recorded.
 */
export function eventFor (outcome: EffectOutcome): EventRecord | undefined {
  const { effect } = outcome
  const pod = `${effect.target.kind} ${effect.target.name}`
  const related = effect.target
  if (outcome.result === 'failed' && effect.type === 'Evict' && outcome.disruptionBudget !== undefined) {
    const message = `Cannot evict ${pod}: ${outcome.disruptionBudget}`
    return { type: 'Warning', reason: EVENT_REASONS.EvictionRefused, action: 'Evict', related, message }
  }
  if (outcome.result !== 'applied') return undefined
  switch (effect.type) {
    case 'InjectEphemeralContainers': {
      const names = effect.containers.map(c => c.name)
      const message = `Injected ephemeral container${names.length === 1 ? '' : 's'} ${names.join(', ')} into ${pod}`
      return { type: 'Normal', reason: EVENT_REASONS.InjectedContainers, action: 'Inject', related, message }
    }
    case 'Evict':
      return { type: 'Normal', reason: EVENT_REASONS.EvictedPod, action: 'Evict', related, message: `Evicted ${pod}` }
    case 'SetPodLabels': {
      const keys = Object.keys(effect.labels).sort()
      const set = keys.filter(k => effect.labels[k] !== null).map(k => `${k}=${effect.labels[k] as string}`)
      const removed = keys.filter(k => effect.labels[k] === null)
      const changes = [...set, ...(removed.length > 0 ? [`removed ${removed.join(', ')}`] : [])]
      const message = `Labelled ${pod}: ${changes.join(', ')}`
      return { type: 'Normal', reason: EVENT_REASONS.LabelledPod, action: 'Label', related, message }
    }
    case 'SetPodCondition': {
      const { condition } = effect
      const why = condition.message ?? condition.reason
      const because = why !== undefined && why !== '' ? `: ${why}` : ''
      const message = `Set condition ${condition.type}=${condition.status} on ${pod}${because}`
      return { type: 'Normal', reason: EVENT_REASONS.SetPodCondition, action: 'SetCondition', related, message }
    }
    case 'Delete': {
      // A Delete acts only on the parent itself, after its TTL (scope.ts).
      const message = `Deleted ${effect.target.kind} ${effect.target.name}: its time to live has passed`
      return { type: 'Normal', reason: EVENT_REASONS.TTLExpired, action: 'Delete', message }
    }
    default: {
      // A new effect type decides here what Event it earns.
      const unknown: never = effect
      return unknown
    }
  }
}

/** A core/v1 Event as this service writes it. */
export interface CoreEvent {
  apiVersion: 'v1'
  kind: 'Event'
  metadata: { name: string, namespace: string }
  involvedObject: ObjectRef
  related?: ObjectRef
  type: EventRecord['type']
  reason: string
  message: string
  action: string
  source: { component: string }
  reportingComponent: string
  reportingInstance: string
  firstTimestamp: string
  lastTimestamp: string
  count: number
}

/** A map that forgets its least recently used entry past `limit` entries. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>()

  constructor (readonly limit: number) {}

  get size (): number {
    return this.entries.size
  }

  get (key: K): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      // Map keeps insertion order: the newest use goes last.
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set (key: K, value: V): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as K)
  }

  values (): IterableIterator<V> {
    return this.entries.values()
  }
}

export interface CorrelatorOptions {
  /** Entries of each cache (client-go: 4096). */
  cacheSize: number
  /** Writes per parent and reason at once (client-go: 25). */
  burst: number
  /** Then one more every this many seconds (client-go: 300). */
  refillSeconds: number
  /** Different messages of one reason before they are combined (client-go: 10). */
  aggregateMaxEvents: number
  /** ... within this many seconds (client-go: 600). */
  aggregateIntervalSeconds: number
}

export const DEFAULT_CORRELATOR: Readonly<CorrelatorOptions> = {
  cacheSize: 4096, burst: 25, refillSeconds: 300, aggregateMaxEvents: 10, aggregateIntervalSeconds: 600
}

/** An Event to write: a new one, or a PATCH of the count of one written before. */
export interface Correlated {
  event: CoreEvent
  create: boolean
}

/** Short and fixed-size, so that a cache key holds no message whole. */
function digest (...parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22)
}

/**
 * client-go's EventCorrelator: which Event an occurrence goes to (aggregation and counting), and
 * whether it is written now (the spam filter). Synchronous and in memory.
 */
export class EventCorrelator {
  private readonly options: CorrelatorOptions
  /** Aggregate key → the digests of the messages seen, and when the last one was. */
  private readonly aggregates: LruCache<string, { messages: Set<string>, lastMs: number }>
  /** Event key → the Event written for it. */
  private readonly logs: LruCache<string, { name: string, count: number, firstTimestamp: string }>
  /** Parent and reason → a token bucket. */
  private readonly buckets: LruCache<string, { tokens: number, lastMs: number }>
  private sequence = 0

  constructor (options: Partial<CorrelatorOptions> = {}, private readonly instance = hostname()) {
    this.options = { ...DEFAULT_CORRELATOR, ...options }
    this.aggregates = new LruCache(this.options.cacheSize)
    this.logs = new LruCache(this.options.cacheSize)
    this.buckets = new LruCache(this.options.cacheSize)
  }

  /** The Event `record` about `parent` goes to, or undefined when the spam filter holds it back. */
  correlate (parent: ObjectRef, record: EventRecord, now: Date): Correlated | undefined {
    const nowMs = now.getTime()
    const object = [parent.apiVersion, parent.kind, parent.namespace ?? '', parent.name, parent.uid]
    // Aggregation: by parent, type and reason; the message tells occurrences apart.
    const aggregateKey = digest(...object, record.type, record.reason)
    let aggregate = this.aggregates.get(aggregateKey)
    const windowStart = nowMs - this.options.aggregateIntervalSeconds * 1000
    if (aggregate === undefined || aggregate.lastMs < windowStart) aggregate = { messages: new Set(), lastMs: nowMs }
    aggregate.messages.add(digest(record.message))
    aggregate.lastMs = nowMs
    this.aggregates.set(aggregateKey, aggregate)
    let message = truncated(record.message)
    let key = digest(...object, record.type, record.reason, message)
    if (aggregate.messages.size >= this.options.aggregateMaxEvents) {
      // Do not grow the set past the limit; from here on the combined Event is the one counted.
      aggregate.messages.delete(aggregate.messages.values().next().value as string)
      message = truncated(`(combined from similar events): ${message}`)
      key = `combined:${aggregateKey}`
    }

    // Counting: the same key again is the same Event, one more time.
    const last = this.logs.get(key)
    const stamp = timestamp(now)
    const name = last?.name ?? this.nameFor(parent, now)
    const count = (last?.count ?? 0) + 1
    const firstTimestamp = last?.firstTimestamp ?? stamp
    this.logs.set(key, { name, count, firstTimestamp })

    // The spam filter, after counting (as client-go's): a held-back occurrence is still counted.
    const bucketKey = digest(...object, record.type, record.reason)
    const bucket = this.buckets.get(bucketKey) ?? { tokens: this.options.burst, lastMs: nowMs }
    const refilled = Math.max(0, nowMs - bucket.lastMs) / 1000 / this.options.refillSeconds
    bucket.tokens = Math.min(this.options.burst, bucket.tokens + refilled)
    bucket.lastMs = nowMs
    this.buckets.set(bucketKey, bucket)
    if (bucket.tokens < 1) return undefined
    bucket.tokens -= 1

    const namespace = parent.namespace ?? 'default'
    const event: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: parent.apiVersion, kind: parent.kind, namespace, name: parent.name, uid: parent.uid
      },
      ...(record.related !== undefined ? { related: { ...record.related } } : {}),
      type: record.type,
      reason: record.reason,
      message,
      action: record.action,
      source: { component: EVENT_COMPONENT },
      reportingComponent: EVENT_COMPONENT,
      reportingInstance: this.instance,
      firstTimestamp,
      lastTimestamp: stamp,
      count
    }
    return { event, create: last === undefined }
  }

  /** `<parent>.<hex nanoseconds>`, as client-go names Events; unique within this process. */
  private nameFor (parent: ObjectRef, now: Date): string {
    this.sequence = (this.sequence + 1) % 1_000_000
    const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(this.sequence)
    return `${parent.name.slice(0, 253 - 17)}.${nanos.toString(16)}`
  }
}

/** A request for an Event: what the executor's connection sends. */
export interface EventRequest {
  method: 'POST' | 'PATCH'
  path: string
  contentType: string
  body: unknown
}

/** Sends one request to the API server and collects the answer, whatever its status. */
export type EventSend = (request: EventRequest, signal: AbortSignal) => Promise<{ statusCode: number, body: string }>

export interface EventRecorderOptions {
  send: EventSend
  /** Writes in flight at once. */
  concurrency?: number
  /** Time one write may take. */
  timeoutMs?: number
  /** Writes queued at most; past it, occurrences are dropped. */
  maxPending?: number
  clock?: () => Date
  /** `reportingInstance`: the Pod's name in a cluster. */
  instance?: string
  correlator?: Partial<CorrelatorOptions>
  /** The writes only reach memory (the recording executor): count them `dry_run`. */
  dryRun?: boolean
}

interface Write {
  event: CoreEvent
  create: boolean
}

/** The path of the Events of a namespace, or of one Event. */
function eventsPath (event: CoreEvent, named: boolean): string {
  const base = `/api/v1/namespaces/${encodeURIComponent(event.metadata.namespace)}/events`
  return named ? `${base}/${encodeURIComponent(event.metadata.name)}` : base
}

/** Records Events on the parents of effects: correlates at once, writes in the background. */
export class EventRecorder implements EffectEvents {
  private readonly correlator: EventCorrelator
  private readonly send: EventSend
  private readonly concurrency: number
  private readonly timeoutMs: number
  private readonly maxPending: number
  private readonly clock: () => Date
  private readonly dryRun: boolean
  /** Writes waiting, by Event name, oldest first. */
  private readonly pending = new Map<string, Write>()
  /** Events being written: a later write of the same Event waits for it. */
  private readonly writing = new Set<string>()
  private waiters: Array<() => void> = []
  private listener: EventListener | undefined

  constructor (options: EventRecorderOptions) {
    this.send = options.send
    this.concurrency = Math.max(1, options.concurrency ?? 4)
    this.timeoutMs = options.timeoutMs ?? 5000
    this.maxPending = Math.max(1, options.maxPending ?? 1000)
    this.clock = options.clock ?? (() => new Date())
    this.dryRun = options.dryRun === true
    this.correlator = new EventCorrelator(options.correlator, options.instance ?? hostname())
  }

  /** Who hears what became of each occurrence (the metrics). One listener. */
  observe (listener: EventListener): void {
    this.listener = listener
  }

  /** Records the Events that the outcomes of a sync of `parent` deserve. Never throws, never waits. */
  record (parent: ObjectRef, outcomes: readonly EffectOutcome[]): void {
    for (const outcome of outcomes) {
      const record = eventFor(outcome)
      if (record !== undefined) this.recordEvent(parent, record)
    }
  }

  /** Records one occurrence about `parent`. Never throws, never waits. */
  recordEvent (parent: ObjectRef, record: EventRecord): void {
    try {
      const correlated = this.correlator.correlate(parent, record, this.clock())
      if (correlated === undefined) return this.count(record.reason, 'suppressed')
      const name = correlated.event.metadata.name
      const queued = this.pending.get(name)
      if (queued !== undefined) {
        // The queued write now carries this occurrence too (its count, its time, its message).
        queued.event = correlated.event
        return this.count(record.reason, 'merged')
      }
      if (this.pending.size >= this.maxPending) return this.count(record.reason, 'dropped')
      this.pending.set(name, correlated)
      this.pump()
    } catch (error) {
      this.count(record.reason, 'failed', error instanceof Error ? error.message : String(error))
    }
  }

  /** Resolves once every write queued so far is done or given up, or after `timeoutMs`. */
  async flush (timeoutMs = this.timeoutMs): Promise<void> {
    if (this.idle) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      new Promise<void>(resolve => this.waiters.push(resolve)),
      new Promise<void>(resolve => { timer = setTimeout(resolve, timeoutMs) })
    ])
    clearTimeout(timer)
  }

  private get idle (): boolean {
    return this.pending.size === 0 && this.writing.size === 0
  }

  private count (reason: string, result: EventResult, message?: string): void {
    try {
      this.listener?.(reason, result, message)
    } catch {
      // A listener's failure is not the recorder's.
    }
  }

  /** Starts the oldest writes whose Event is not being written already, up to the concurrency. */
  private pump (): void {
    for (const [name, write] of this.pending) {
      if (this.writing.size >= this.concurrency) break
      if (this.writing.has(name)) continue
      this.pending.delete(name)
      this.writing.add(name)
      void this.write(write).then(result => {
        this.count(write.event.reason, result.result, result.message)
      }).finally(() => {
        this.writing.delete(name)
        this.pump()
        if (this.idle) {
          const waiters = this.waiters
          this.waiters = []
          for (const resolve of waiters) resolve()
        }
      })
    }
  }

  /** One write: a PATCH of the count, or a create (also when the Event to patch is gone). */
  private async write ({ event, create }: Write): Promise<{ result: EventResult, message?: string }> {
    const signal = AbortSignal.timeout(this.timeoutMs)
    // Whether or not the connection heeds the signal, the write is over when it fires.
    const aborted = new Promise<never>((_resolve, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
    aborted.catch(() => {})
    const send = async (request: EventRequest): Promise<{ statusCode: number, body: string }> =>
      await Promise.race([this.send(request, signal), aborted])
    const done = (result: 'created' | 'patched'): { result: EventResult } =>
      ({ result: this.dryRun ? 'dry_run' : result })
    const failed = (statusCode: number, body: string): { result: EventResult, message: string } =>
      ({ result: 'failed', message: `HTTP ${statusCode}: ${body.trim().replace(/\s+/g, ' ').slice(0, 200)}` })
    const patch: EventRequest = {
      method: 'PATCH',
      path: eventsPath(event, true),
      contentType: 'application/strategic-merge-patch+json',
      body: { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message }
    }
    try {
      if (!create) {
        const patched = await send(patch)
        if (patched.statusCode >= 200 && patched.statusCode < 300) return done('patched')
        // 404: the Event is gone (Events live an hour by default), or was never written.
        if (patched.statusCode !== 404) return failed(patched.statusCode, patched.body)
      }
      const created = await send({
        method: 'POST', path: eventsPath(event, false), contentType: 'application/json', body: event
      })
      if (created.statusCode >= 200 && created.statusCode < 300) return done('created')
      // 409: an earlier create landed after all (it timed out here): count on it.
      if (created.statusCode === 409) {
        const patched = await send(patch)
        if (patched.statusCode >= 200 && patched.statusCode < 300) return done('patched')
        return failed(patched.statusCode, patched.body)
      }
      return failed(created.statusCode, created.body)
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      const message = signal.aborted ? `not written within ${this.timeoutMs} ms` : `request failed: ${reason}`
      return { result: 'failed', message }
    }
  }
}

/**
 * Events kept in memory, answered as the API server answers their writes: what the recording
 * executor (no cluster) and the tests read. At most `limit` Events, the least recently written
 * forgotten first.
 */
export class MemoryEvents {
  private readonly events: LruCache<string, CoreEvent>

  constructor (limit = 1000) {
    this.events = new LruCache(limit)
  }

  /** Every Event kept, oldest write first. */
  list (): CoreEvent[] {
    return [...this.events.values()].map(e => structuredClone(e))
  }

  /** The Events about `object`, as `kubectl describe` finds them (kind, namespace, name, UID), oldest first. */
  about (object: Pick<ObjectRef, 'kind' | 'namespace' | 'name' | 'uid'>): CoreEvent[] {
    return this.list()
      .filter(({ involvedObject: o }) =>
        o.kind === object.kind && o.namespace === object.namespace && o.name === object.name && o.uid === object.uid)
      .sort((a, b) => a.firstTimestamp.localeCompare(b.firstTimestamp))
  }

  readonly send: EventSend = async request => {
    const match = /^\/api\/v1\/namespaces\/([^/]+)\/events(?:\/([^/]+))?$/.exec(request.path)
    if (match === null) return { statusCode: 404, body: '{}' }
    const namespace = decodeURIComponent(match[1] as string)
    if (request.method === 'POST') {
      const event = structuredClone(request.body as CoreEvent)
      const key = `${namespace}/${event.metadata.name}`
      if (this.events.get(key) !== undefined) return { statusCode: 409, body: '{}' }
      this.events.set(key, event)
      return { statusCode: 201, body: JSON.stringify(event) }
    }
    const key = `${namespace}/${decodeURIComponent(match[2] ?? '')}`
    const current = this.events.get(key)
    if (current === undefined) return { statusCode: 404, body: '{}' }
    const next = { ...current, ...(request.body as Partial<CoreEvent>) }
    this.events.set(key, next)
    return { statusCode: 200, body: JSON.stringify(next) }
  }
}
