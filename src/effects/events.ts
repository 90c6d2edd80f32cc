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
import { hostname } from 'node:os'
import {
  EventCorrelator, LruCache, type CoreEvent, type CorrelatorOptions, type EventRecord
} from './event-correlator.js'
import {
  imageList, type EffectEvents, type EffectOutcome, type EventListener, type EventResult, type ObjectRef,
  type Permission
} from './types.js'

export type { EventListener, EventResult }
export type { CoreEvent, Correlated, CorrelatorOptions, EventRecord } from './event-correlator.js'
export { DEFAULT_CORRELATOR, EVENT_COMPONENT, EventCorrelator, LruCache } from './event-correlator.js'

/** What recording Events needs from the API server: `create` and `patch` on core `events`. */
export const EVENT_PERMISSIONS: readonly Permission[] = [
  { apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }
]

/** The reasons of the Events this service records. */
export const EVENT_REASONS = {
  InjectedContainers: 'InjectedContainers',
  EvictedPod: 'EvictedPod',
  EvictionRefused: 'EvictionRefused',
  LabelledPod: 'LabelledPod',
  SetPodCondition: 'SetPodCondition',
  TTLExpired: 'TTLExpired',
  StoppedRun: 'StoppedRun',
  UpdatedPodInPlace: 'UpdatedPodInPlace',
  ResizedPod: 'ResizedPod',
  ReleasedClaim: 'ReleasedClaim'
} as const

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
  return appliedEvent(effect)
}

/** The Event an applied effect earns. */
function appliedEvent (effect: EffectOutcome['effect']): EventRecord {
  const pod = `${effect.target.kind} ${effect.target.name}`
  const related = effect.target
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
    case 'StopJobFlow': {
      const by = Object.values(effect.annotations).join(', ')
      const message = `Stopped ${pod}: replaced by ${by} (concurrencyPolicy Replace)`
      return { type: 'Normal', reason: EVENT_REASONS.StoppedRun, action: 'Stop', related, message }
    }
    case 'UpdatePodInPlace': {
      const message = `Updated ${pod} in place: ${imageList(effect.images)}`
      return { type: 'Normal', reason: EVENT_REASONS.UpdatedPodInPlace, action: 'Update', related, message }
    }
    case 'ResizePod': {
      const message = `Resized ${pod} in place: ${effect.containers.map(c => c.name).join(', ')}`
      return { type: 'Normal', reason: EVENT_REASONS.ResizedPod, action: 'Resize', related, message }
    }
    case 'ReleaseClaim': {
      const message = `Released ${pod}: kept after the CollaSet goes (whenDeleted: Retain)`
      return { type: 'Normal', reason: EVENT_REASONS.ReleasedClaim, action: 'Release', related, message }
    }
    default: {
      // A new effect type decides here what Event it earns.
      const unknown: never = effect
      return unknown
    }
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
