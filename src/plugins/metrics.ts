// Prometheus metrics of the service: hook calls and their durations by kind, hook and outcome
// (`shed`: answered 429 to keep the bytes in flight under budget); effects by type and result;
// the Events recorded on the parents by reason and result;
// the bytes of requests in flight and their budget; the memo of built objects (its bytes, objects
// and lookups); and which build answers (jobhooks_build_info). The plugin at the end puts them on
// the app and serves them.
import fp from 'fastify-plugin'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { EffectOutcome } from '../effects/types.js'
import type { Outcome } from '../protocol/hooks.js'
import { packageVersion } from '../scripts/package-files.js'

export type { Outcome } from '../protocol/hooks.js'

export interface Metrics {
  registry: Registry
  observeHook: (kind: string, hook: string, outcome: Outcome, seconds: number) => void
  /** Counts what became of each effect of a hook call. */
  observeEffects: (outcomes: readonly EffectOutcome[]) => void
  /** Counts what became of an Event's occurrence (src/effects/events.ts). */
  observeEvent: (reason: string, result: string) => void
  /** Counts a hook call refused for its credentials. */
  observeRefusal: (reason: string) => void
  /** Reports the bytes of hook requests in flight (read at each scrape) and their budget. */
  watchInflight: (inflight: () => number, budget: number) => void
  /** Reports the memo of built objects (src/protocol/object-memo.ts), read at each scrape. */
  watchMemo: (memo: MemoFigures) => void
}

/** What the metrics read of the memo of built objects. */
export interface MemoFigures {
  readonly size: number
  readonly count: number
  readonly limit: number
  readonly hits: number
  readonly misses: number
}

/** A registry of its own per app, so that apps built side by side (tests) do not share counts. */
export function createMetrics (): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  // Always 1: the labels say which version runs, on which Node, as a dashboard joins on them.
  new Gauge({
    name: 'jobhooks_build_info',
    help: 'The version of jobhooks and of Node.js that answer (always 1)',
    labelNames: ['version', 'node'] as const,
    registers
  }).set({ version: packageVersion(), node: process.versions.node }, 1)
  return { registry, ...hookMetrics(registers), ...inflightMetrics(registers), ...memoMetrics(registers) }
}

/** A gauge that reads its value at each scrape. */
function gaugeReading (registers: Registry[], name: string, help: string, read: () => number): Gauge {
  return new Gauge({ name, help, registers, collect () { this.set(read()) } })
}

type HookObservers = Pick<Metrics, 'observeHook' | 'observeEffects' | 'observeEvent' | 'observeRefusal'>

/** Hook calls, their durations and refusals; the effects and Events they led to. */
function hookMetrics (registers: Registry[]): HookObservers {
  const labelNames = ['kind', 'hook', 'outcome'] as const
  const calls = new Counter({
    name: 'jobhooks_hook_calls_total',
    help: 'Hook calls by kind, hook and outcome',
    labelNames,
    registers
  })
  const duration = new Histogram({
    name: 'jobhooks_hook_duration_seconds',
    help: 'Time to answer a hook call, from request to response',
    labelNames,
    // Metacontroller gives up after 10 s by default.
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers
  })
  const effects = new Counter({
    name: 'jobhooks_effects_total',
    help: 'Effects by type and result (applied, gone, failed, refused, dry_run)',
    labelNames: ['type', 'result'] as const,
    registers
  })
  const events = new Counter({
    name: 'jobhooks_events_total',
    help: 'Events recorded on the parents, by reason and result ' +
      '(created, patched, merged, suppressed, dropped, failed, dry_run)',
    labelNames: ['reason', 'result'] as const,
    registers
  })
  const refusals = new Counter({
    name: 'jobhooks_hook_refusals_total',
    help: 'Hook calls refused (401) for their credentials, by reason',
    labelNames: ['reason'] as const,
    registers
  })
  return {
    observeRefusal (reason) {
      refusals.inc({ reason })
    },
    observeEffects (outcomes) {
      for (const { effect, result } of outcomes) effects.inc({ type: effect.type, result })
    },
    observeEvent (reason, result) {
      events.inc({ reason, result })
    },
    observeHook (kind, hook, outcome, seconds) {
      calls.inc({ kind, hook, outcome })
      duration.observe({ kind, hook, outcome }, seconds)
    }
  }
}

/** The bytes of requests in flight, read at each scrape, and their budget. */
function inflightMetrics (registers: Registry[]): Pick<Metrics, 'watchInflight'> {
  let readInflight = (): number => 0
  gaugeReading(registers, 'jobhooks_inflight_request_bytes', 'Bytes of sync and finalize requests being answered',
    () => readInflight())
  const budgetGauge = new Gauge({
    name: 'jobhooks_inflight_budget_bytes',
    help: 'Bytes of requests in flight beyond which calls are shed with 429 (outcome="shed")',
    registers
  })
  return {
    watchInflight (inflight, budget) {
      readInflight = inflight
      budgetGauge.set(budget)
    }
  }
}

/** The memo of built objects: its bytes, objects and lookups. */
function memoMetrics (registers: Registry[]): Pick<Metrics, 'watchMemo'> {
  let memo: MemoFigures = { size: 0, count: 0, limit: 0, hits: 0, misses: 0 }
  gaugeReading(registers, 'jobhooks_object_memo_bytes',
    'Bytes the memo of built child and related objects holds (their JSON and what was built of it)', () => memo.size)
  gaugeReading(registers, 'jobhooks_object_memo_limit_bytes', 'Bytes the memo of built objects may hold',
    () => memo.limit)
  gaugeReading(registers, 'jobhooks_object_memo_objects', 'Objects in the memo of built objects', () => memo.count)
  // The memo counts since the process started; each scrape adds what it counted since the last.
  let counted = { hits: 0, misses: 0 }
  // eslint-disable-next-line no-new -- prom-client registers a metric as it builds it
  new Counter({
    name: 'jobhooks_object_memo_lookups_total',
    help: 'Child and related objects looked up in the memo: hit (built before, the same bytes) or miss (built now)',
    labelNames: ['result'] as const,
    registers,
    collect () {
      this.inc({ result: 'hit' }, Math.max(0, memo.hits - counted.hits))
      this.inc({ result: 'miss' }, Math.max(0, memo.misses - counted.misses))
      counted = { hits: memo.hits, misses: memo.misses }
    }
  })
  return {
    watchMemo (figures) {
      memo = figures
      counted = { hits: figures.hits, misses: figures.misses }
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics
  }
}

/**
 * The metrics plugin: a registry of the app's own, on the app as `metrics`, and `/metrics` (open
 * to Prometheus: counts, no object names; docs/security.md). What a call counts is written by
 * src/plugins/calls.ts once the call is answered.
 */
export const metricsPlugin = fp(async app => {
  const metrics = createMetrics()
  app.decorate('metrics', metrics)
  metrics.watchMemo(app.wire.memo)
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return await metrics.registry.metrics()
  })
}, { name: 'metrics', decorators: { fastify: ['wire'] } })
