// Rerun: `kubectl annotate jobflow <name> jobhooks.io/rerun=<value>` on a finished JobFlow gives
// each of its failed and skipped flows a new attempt and keeps what succeeded. The value that
// acted is kept in `status.rerun`, so each value acts once however often the JobFlow is synced.
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'
import type { JobRecord } from './records.js'

export const RERUN_ANNOTATION = 'jobhooks.io/rerun'

export interface RerunRequest {
  value: string
  /** Whether this value reruns flows now; a value that cannot (the JobFlow still runs) is only recorded. */
  act: boolean
  /** `status.rerun`: the value, when it was seen, and what it did. */
  status: { value: string, time: string, message: string }
}

/**
 * A rerun value not seen before, and what it does: on a finished JobFlow, rerun the flows that
 * failed or were skipped; on one that has not finished, nothing (it is used up all the same, so
 * that it does not act by surprise when the run ends).
 */
export function rerunRequest (
  parent: KubeObject,
  previous: Record<string, unknown>,
  finished: boolean,
  currents: readonly JobRecord[],
  now: Date
): RerunRequest | undefined {
  const value = parent.metadata.annotations?.[RERUN_ANNOTATION]
  if (typeof value !== 'string' || value === '') return undefined
  if (isRecord(previous.rerun) && previous.rerun.value === value) return undefined
  const time = timestamp(now)
  if (!finished) {
    return {
      value,
      act: false,
      status: { value, time, message: 'ignored: the JobFlow had not finished; annotate it again once it has' }
    }
  }
  const flows = currents.filter(r => r.phase === 'Failed' || r.phase === 'Skipped').map(r => r.name)
  if (flows.length === 0) {
    return {
      value,
      act: false,
      status: { value, time, message: 'nothing to rerun: every flow succeeded' }
    }
  }
  return { value, act: true, status: { value, time, message: `rerunning ${flows.join(', ')}` } }
}

/** The outcome condition a rerun makes untrue (`kubectl wait --for=condition=Complete` waits again). */
export function rerunConditions (conditions: unknown, rerun: RerunRequest, now: Date): Condition[] {
  let updated = Array.isArray(conditions)
    ? conditions.filter(
      (c): c is Condition => isRecord(c) && typeof c.type === 'string'
    )
    : []
  for (const type of ['Complete', 'Failed']) {
    if (updated.some(c => c.type === type && c.status === 'True')) {
      updated = setCondition(
        updated,
        {
          type,
          status: 'False',
          reason: 'Rerun',
          message: `${RERUN_ANNOTATION}=${rerun.value}: ${rerun.status.message}`
        },
        now
      )
    }
  }
  return updated
}
