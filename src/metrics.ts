// Prometheus metrics of the service: hook calls and their durations by kind, hook and outcome;
// effects by type and result.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { EffectOutcome } from './effects/types.js'
import type { Outcome } from './protocol/hooks.js'

export type { Outcome } from './protocol/hooks.js'

export interface Metrics {
  registry: Registry
  observeHook: (kind: string, hook: string, outcome: Outcome, seconds: number) => void
  /** Counts what became of each effect of a hook call. */
  observeEffects: (outcomes: readonly EffectOutcome[]) => void
  /** Counts a hook call refused for its credentials. */
  observeRefusal: (reason: string) => void
}

/** A registry of its own per app, so that apps built side by side (tests) do not share counts. */
export function createMetrics (): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const labelNames = ['kind', 'hook', 'outcome'] as const
  const calls = new Counter({ name: 'jobhooks_hook_calls_total', help: 'Hook calls by kind, hook and outcome', labelNames, registers: [registry] })
  const duration = new Histogram({
    name: 'jobhooks_hook_duration_seconds',
    help: 'Time to answer a hook call, from request to response',
    labelNames,
    // Metacontroller gives up after 10 s by default.
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })
  const effects = new Counter({ name: 'jobhooks_effects_total', help: 'Effects by type and result (applied, gone, failed, refused, dry_run)', labelNames: ['type', 'result'] as const, registers: [registry] })
  const refusals = new Counter({ name: 'jobhooks_hook_refusals_total', help: 'Hook calls refused (401) for their credentials, by reason', labelNames: ['reason'] as const, registers: [registry] })
  return {
    registry,
    observeRefusal (reason) {
      refusals.inc({ reason })
    },
    observeEffects (outcomes) {
      for (const { effect, result } of outcomes) effects.inc({ type: effect.type, result })
    },
    observeHook (kind, hook, outcome, seconds) {
      calls.inc({ kind, hook, outcome })
      duration.observe({ kind, hook, outcome }, seconds)
    }
  }
}
