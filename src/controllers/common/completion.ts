// What every run-to-completion kind (JobFlow, DaemonJob, EphemeralJob) reports the same way: when
// it started and finished, and the Job-like condition that says how it ended.
import type { Condition } from '../../k8s/types.js'
import { stringOrUndefined, withoutUndefined } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'

/**
 * `startTime` and `completionTime`: carried forward once set (law 3), stamped now on the sync
 * where the run starts or finishes, absent before.
 */
export function runTimes (
  previous: Record<string, unknown>,
  started: boolean,
  finished: boolean,
  now: Date
): { startTime?: string, completionTime?: string } {
  return withoutUndefined({
    startTime: stringOrUndefined(previous.startTime) ?? (started ? timestamp(now) : undefined),
    completionTime: stringOrUndefined(previous.completionTime) ?? (finished ? timestamp(now) : undefined)
  })
}

/**
 * `Complete` once the run succeeded, `Failed` once it failed, as a Job reports it, so that
 * `kubectl wait --for=condition=Complete` works; unchanged while it runs. `describe` says why.
 */
export function outcomeCondition (
  conditions: Condition[],
  phase: string,
  describe: (succeeded: boolean) => { reason: string, message: string },
  now: Date
): Condition[] {
  if (phase !== 'Succeeded' && phase !== 'Failed') return conditions
  const succeeded = phase === 'Succeeded'
  return setCondition(
    conditions,
    { type: succeeded ? 'Complete' : 'Failed', status: 'True', ...describe(succeeded) },
    now
  )
}
