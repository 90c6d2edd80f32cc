import type { Effect, EffectExecutor, EffectOutcome } from './types.js'

/**
 * The executor without cluster credentials (local runs, tests): it writes nothing, records every
 * effect it was given and reports it applied, so hooks behave as they would in a cluster.
 */
export class RecordingExecutor implements EffectExecutor {
  readonly mode = 'dry-run' as const
  readonly recorded: Effect[] = []

  async apply (effects: Effect[]): Promise<EffectOutcome[]> {
    this.recorded.push(...effects)
    return effects.map(effect => ({ effect, result: 'applied' }))
  }
}
