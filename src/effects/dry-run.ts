import type { Effect, EffectExecutor, EffectOutcome, ObjectRef } from './types.js'
import { withinReach } from './scope.js'

/**
 * The executor without cluster credentials (local runs, tests): it writes nothing, records every
 * effect within its parent's reach and reports it `dry_run`, so the answer says that nothing was
 * applied.
 */
export class RecordingExecutor implements EffectExecutor {
  readonly mode = 'dry-run' as const
  readonly recorded: Effect[] = []

  async apply (parent: ObjectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    const { inReach, refused } = withinReach(parent, effects)
    this.recorded.push(...inReach)
    return effects.map(effect => refused.get(effect) ?? { effect, result: 'dry_run' })
  }
}
