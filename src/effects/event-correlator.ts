// How client-go's EventCorrelator (k8s.io/client-go/tools/record) turns what happened into the
// Event to write: the same event again raises a count, past 10 messages of one reason the latest
// stands for them all, and a spam filter holds back bursts. Kept apart from the recorder
// (events.ts), which queues and writes what this decides.
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { timestamp } from '../k8s/time.js'
import type { ObjectRef } from './types.js'

/** The component Events name as their source (`kubectl describe`'s From column). */
export const EVENT_COMPONENT = 'jobhooks'

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
