import type { Effect, EffectExecutor, EffectOutcome, ObjectRef } from './types.js'
import { EventRecorder, MemoryEvents } from './events.js'
import { withinReach } from './scope.js'

/**
 * The executor without cluster credentials (local runs, tests): it writes nothing, records every
 * effect within its parent's reach and reports it `dry_run`, so the answer says that nothing was
 * applied. The Events the effects would earn, were they applied, go to memory (`memory`), bounded,
 * counted `dry_run`.
 */
export class RecordingExecutor implements EffectExecutor {
  readonly mode = 'dry-run' as const
  readonly recorded: Effect[] = []
  readonly memory = new MemoryEvents()
  readonly events: EventRecorder

  constructor (options: { clock?: () => Date } = {}) {
    this.events = new EventRecorder({
      send: this.memory.send,
      dryRun: true,
      ...(options.clock !== undefined ? { clock: options.clock } : {})
    })
  }

  async apply (parent: ObjectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    const { inReach, refused } = withinReach(parent, effects)
    this.recorded.push(...inReach)
    if (parent !== undefined) this.events.record(parent, inReach.map(effect => ({ effect, result: 'applied' })))
    return effects.map(effect => refused.get(effect) ?? { effect, result: 'dry_run' })
  }
}
