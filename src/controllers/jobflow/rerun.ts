// Rerun: `kubectl annotate jobflow <name> jobhooks.io/rerun=<value>` on a finished JobFlow gives
// each of its failed and skipped flows a new attempt and keeps what succeeded; with
// `jobhooks.io/rerun-steps=<step>,…` beside it (`kubectl jobhooks rerun jf <name> --step S`), the
// steps named and every step after them instead, however they ended. The value that acted is kept
// in `status.rerun` (with the steps it named), so each value acts once however often the JobFlow
// is synced. A step no target needs (targets.ts) is never rerun: it would only be skipped again.
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { setCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'
import { namesWithRanges, stepOfFlowName } from '../../formats/jobflow-status.js'
import type { JobRecord } from './records.js'
import type { FlowSpec } from './spec.js'
import type { PlannedFlow } from './fanout.js'
import type { Targets } from './targets.js'
import { reachable } from './dag.js'

export const RERUN_ANNOTATION = 'jobhooks.io/rerun'
/** The steps a rerun starts from, comma separated: read only with a new RERUN_ANNOTATION value. */
export const RERUN_STEPS_ANNOTATION = 'jobhooks.io/rerun-steps'

/** `status.rerun`: the value, when it was seen, what it did, and the steps it named. */
export interface RerunStatus { value: string, time: string, message: string, steps?: string[] }

export interface RerunRequest {
  value: string
  /** Whether this value reruns flows now; a value that cannot (the JobFlow still runs) is only recorded. */
  act: boolean
  status: RerunStatus
  /** With RERUN_STEPS_ANNOTATION: the steps named and every step after them, rerun however they ended. */
  steps?: ReadonlySet<string>
  /** `spec.targets`: the steps outside it stay as they are. */
  targets?: Targets
}

/** What a rerun reads of the sync. */
export interface RerunSource {
  parent: KubeObject
  previous: Record<string, unknown>
  now: Date
  /** Every step of the spec, exit steps included. */
  steps: readonly FlowSpec[]
  spec: { targets?: Targets }
}

/**
 * A rerun value not seen before, and what it does: on a finished JobFlow, rerun the flows that
 * failed or were skipped (or those of the steps named and after them); on one that has not
 * finished, nothing (it is used up all the same, so that it does not act by surprise when the run
 * ends). `currents`: each flow's last record.
 */
export function rerunRequest (
  sync: RerunSource,
  finished: boolean,
  currents: readonly JobRecord[]
): RerunRequest | undefined {
  const { parent, previous, spec } = sync
  const value = parent.metadata.annotations?.[RERUN_ANNOTATION]
  if (typeof value !== 'string' || value === '') return undefined
  if (isRecord(previous.rerun) && previous.rerun.value === value) return undefined
  const named = namedSteps(parent)
  const status = (message: string): RerunStatus =>
    ({ value, time: timestamp(sync.now), message, ...(named !== undefined ? { steps: named } : {}) })
  const idle = (message: string): RerunRequest => ({ value, act: false, status: status(message) })
  if (!finished) return idle('ignored: the JobFlow had not finished; annotate it again once it has')
  const known = new Set(sync.steps.map(step => step.name))
  const unknown = (named ?? []).filter(name => !known.has(name))
  if (unknown.length > 0) {
    return idle(`nothing rerun: ${RERUN_STEPS_ANNOTATION} names no step of the JobFlow: ${unknown.join(', ')}`)
  }
  const request: RerunRequest = {
    value,
    act: true,
    status: status(''),
    ...(named !== undefined ? { steps: stepsAfter(named, sync.steps) } : {}),
    ...(spec.targets !== undefined ? { targets: spec.targets } : {})
  }
  const exits = new Set(sync.steps.filter(step => step.exit === true).map(step => step.name))
  const flows = currents.filter(r => rerunsStep(request, stepOfFlowName(r.name), exits.has(stepOfFlowName(r.name)), r))
  if (flows.length === 0) {
    return idle(named === undefined
      ? 'nothing to rerun: every flow succeeded'
      : `nothing to rerun: spec.targets needs none of ${named.join(', ')} and the steps after them`)
  }
  const from = named === undefined ? '' : ` (${named.join(', ')} and the steps after them)`
  return { ...request, status: status(`rerunning ${namesWithRanges(flows.map(r => r.name)).join(', ')}${from}`) }
}

/**
 * Whether a rerun gives a flow whose last record is `from` a new attempt. An exit step runs again
 * after every rerun, however it ended: it reports the new outcome.
 */
export function reruns (rerun: RerunRequest, flow: PlannedFlow, from: JobRecord): boolean {
  return flow.exit === true || rerunsStep(rerun, flow.item?.step ?? flow.name, false, from)
}

/** Whether a rerun runs a step's flow again, by its step and its last record. */
function rerunsStep (rerun: RerunRequest, step: string, exit: boolean, from: JobRecord): boolean {
  if (!exit && rerun.targets !== undefined && !rerun.targets.needed.has(step)) return false
  return rerun.steps !== undefined ? rerun.steps.has(step) : from.phase === 'Failed' || from.phase === 'Skipped'
}

/** The step names of RERUN_STEPS_ANNOTATION, each once; undefined without any. */
function namedSteps (parent: KubeObject): string[] | undefined {
  const raw = parent.metadata.annotations?.[RERUN_STEPS_ANNOTATION]
  const names = [...new Set((raw ?? '').split(',').map(name => name.trim()).filter(name => name !== ''))]
  return names.length > 0 ? names : undefined
}

/**
 * The steps named and, transitively, every step that depends on one of them. A template group
 * named reruns every step inside it; a step inside a group reruns its group too (the group ends
 * again once it has), and so what depends on the group.
 */
function stepsAfter (named: readonly string[], steps: readonly FlowSpec[]): Set<string> {
  const dependants = new Map<string, string[]>()
  for (const step of steps) {
    for (const dependency of new Set(step.dependencies)) {
      const list = dependants.get(dependency)
      if (list === undefined) dependants.set(dependency, [step.name])
      else list.push(step.name)
    }
  }
  const byName = new Map(steps.map(step => [step.name, step]))
  // A step reruns whole (a group with every step inside it) when named or after one that reruns;
  // a group only ends again when a step inside it reruns.
  const after = (name: string): string[] => [...byName.get(name)?.group?.members ?? [], ...dependants.get(name) ?? []]
  const whole = reachable(named, after)
  const rerun = new Set(whole)
  for (const name of whole) {
    const scopeOf = (step: string): string | undefined => byName.get(step)?.scope
    for (let group = scopeOf(name); group !== undefined && !whole.has(group); group = scopeOf(group)) {
      rerun.add(group)
      for (const next of stepsAfter(dependants.get(group) ?? [], steps)) rerun.add(next)
    }
  }
  return rerun
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
