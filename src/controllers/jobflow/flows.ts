// Where each flow of a JobFlow stands in one sync: observed from its Jobs and its records, and
// given a new attempt by a retry or a rerun (start.ts decides what starts). Every step returns
// new states; none changes the one it was given.
import type { HookContext, SyncRequest } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import type { FlowSpec } from './spec.js'
import type { JobFlowPlan, PlannedFlow } from './fanout.js'
import { FLOW_LABEL, JOBFLOW_LABEL, type JobIdentity } from './job.js'
import { isFinalRecord, isSettled, recordFromJob, type JobRecord } from './records.js'
import { attemptJobName, attemptOf, observedAttempt, retriesUsed, type RetryPolicy } from './attempts.js'
import { isWhenOverLimit } from './when-decide.js'
import { observedOutput, outputContainer, outputWaitOf } from './outputs.js'
import { ITEM_INDEX_LABEL, jobPartOf, stepOf } from './fanout.js'
import type { FlowDeadline } from './deadline.js'
import { WHEN_FALSE, type ItemGroups } from './branches.js'
import { reruns, type RerunRequest } from './rerun.js'
import { retargeted } from './targets.js'

export { WHEN_FALSE }

/** What a sync observed before it reads the spec: enough to keep everything on an invalid one. */
export interface Observed {
  request: SyncRequest
  parent: KubeObject
  now: Date
  previous: Record<string, unknown>
  /** `status.jobs` read back: each flow's records, earlier attempts first. */
  memory: Map<string, JobRecord[]>
  observedJobs: Map<string, KubeObject>
  /**
   * The succeeded pods Metacontroller sent, by the name of their Job: where outputs come from.
   * Undefined when it sent no Pods at all (customize not registered): then no output is waited for.
   */
  succeededPods: Map<string, KubeObject[]> | undefined
}

/**
 * What one sync of a valid spec works from, built once (as the Kubernetes Job controller's
 * syncJobCtx): the helpers read it and never change it.
 */
export interface FlowSync extends Observed {
  spec: JobFlowPlan
  scripts: HookContext['scripts']
  /** The JobFlow had finished before this sync. */
  wasFinished: boolean
  /** The steps as the spec has them (a fan-out step one step), in dependency order. */
  steps: readonly FlowSpec[]
  /** The item flows of each fan-out step whose items are known. */
  groups: ItemGroups
  /** The spec's arguments as a `when` reads them (`args.name`). */
  args: Record<string, string>
  /** `spec.activeDeadlineSeconds` as an instant, when set (deadline.ts). */
  deadline?: FlowDeadline
}

/**
 * Where one flow stands in this sync: its earlier attempts (settled records), and its current
 * attempt — its record once its Job exists or it settled, none while it is still to start.
 */
export interface FlowState {
  readonly flow: PlannedFlow
  readonly earlier: readonly JobRecord[]
  readonly attempt: number
  readonly id: JobIdentity
  readonly current?: JobRecord
  /** The record this sync read for the current attempt while it had no Job: its times and rerun carry on. */
  readonly pending?: JobRecord
  /** The failed attempt the current one retries: its end starts the backoff. */
  readonly retryOf?: JobRecord
  /** The rerun the current attempt is the first of. */
  readonly rerun?: string
  /** The last attempt the previous status names, as its Job now says. */
  readonly remembered?: JobRecord
  /**
   * Its Job succeeded but no pod of it was seen yet, so its output is unknown: dependants wait
   * this many seconds more for it, then start without it.
   */
  readonly outputWait?: number
}

export type Flows = ReadonlyMap<string, FlowState>

/** The flow's records, earlier attempts first: what status.jobs holds of it. */
export function historyOf (state: FlowState): JobRecord[] {
  return state.current === undefined ? [...state.earlier] : [...state.earlier, state.current]
}

export function jobIdentity (parent: KubeObject, flow: PlannedFlow, attempt: number): JobIdentity {
  return {
    name: attemptJobName(parent.metadata.name, jobPartOf(flow), attempt),
    namespace: parent.metadata.namespace,
    labels: {
      [JOBFLOW_LABEL]: fitName(parent.metadata.name),
      [FLOW_LABEL]: stepOf(flow),
      ...(flow.item !== undefined ? { [ITEM_INDEX_LABEL]: String(flow.item.index) } : {})
    }
  }
}

/**
 * What each flow's Jobs say, or what we remember of Jobs that are gone. A flow's current attempt
 * is the last one its records name, or a later one whose Job exists (the status that named it
 * was lost). A failure with retries left ends the attempt, not the flow: the next one is current.
 */
export function observeFlows (sync: FlowSync): Flows {
  return new Map(sync.spec.flows.map(flow => [flow.name, observeFlow(sync, flow)]))
}

function observeFlow (sync: FlowSync, flow: PlannedFlow): FlowState {
  const { parent, now } = sync
  const history = sync.memory.get(flow.name) ?? []
  const jobOf = (jobName: string): KubeObject | undefined => observedAttempt(
    sync.observedJobs,
    jobName,
    stepOf(flow),
    FLOW_LABEL
  )
  let attempt = history.length > 0 ? attemptOf(history[history.length - 1] as JobRecord) : 1
  while (jobOf(attemptJobName(parent.metadata.name, jobPartOf(flow), attempt + 1)) !== undefined) attempt++
  const fromJob = (job: KubeObject, memory: JobRecord | undefined, number: number): JobRecord =>
    withOutput(sync, flow, job, recordFromJob(flow.name, job, memory, now, number))
  const earlier = history.filter(r => attemptOf(r) < attempt).map(r => {
    const job = jobOf(r.jobName)
    return job === undefined ? r : fromJob(job, r, attemptOf(r))
  })
  const mine = history.find(r => attemptOf(r) === attempt)
  const id = jobIdentity(parent, flow, attempt)
  const job = jobOf(id.name)
  const settled = isSettled(mine) && !retargeted(sync, flow, mine) ? mine : undefined
  const current = job !== undefined ? fromJob(job, mine, attempt) : settled
  const pending = job === undefined && !isSettled(mine) ? mine : undefined
  const last = history[history.length - 1]
  const remembered = last === undefined
    ? undefined
    : attemptOf(last) < attempt
      ? earlier[
        earlier.length - 1
      ]
      : current ?? mine
  // An item's output is read by no one (customize does not even ask for its pods): nothing waits for it.
  const outputWait = job !== undefined && current !== undefined && sync.succeededPods !== undefined &&
    flow.item === undefined
    ? outputWaitOf(current, now)
    : undefined
  const base: FlowState = { flow, earlier, attempt, id, current, pending, remembered, rerun: mine?.rerun }
  const state: FlowState = outputWait === undefined ? base : { ...base, outputWait }
  if (!sync.wasFinished && current?.phase === 'Failed' && retryAllowed(flow.retry, historyOf(state))) {
    return nextAttempt(parent, state, { retryOf: current })
  }
  const lastEarlier = earlier[earlier.length - 1]
  if (current !== undefined || state.rerun !== undefined || lastEarlier?.phase !== 'Failed') return state
  // A retry decided on an earlier sync, its Job not created yet: it goes on while the spec allows it.
  return retryAllowed(flow.retry, earlier) ? { ...state, retryOf: lastEarlier } : backToFailure(state)
}

/** A succeeded Job's record with its output, once a succeeded pod of it was seen. */
function withOutput (sync: Observed, flow: PlannedFlow, job: KubeObject, record: JobRecord): JobRecord {
  if (record.phase !== 'Succeeded' || record.output !== undefined) return record
  const output = observedOutput(sync.succeededPods?.get(job.metadata.name), outputContainer(job, flow.outputFrom))
  return output === undefined ? record : { ...record, output }
}

/**
 * Whether a run whose attempts so far are `run` (its last failed) may try once more: not after a
 * failure the Job's podFailurePolicy made final.
 */
function retryAllowed (retry: RetryPolicy | undefined, run: readonly JobRecord[]): boolean {
  const last = run[run.length - 1]
  if (last !== undefined && (isFinalRecord(last) || isWhenOverLimit(last))) return false
  return retry !== undefined && retriesUsed(run) < retry.limit
}

/**
 * The current attempt becomes history and the next one, still to start, is current: a retry of a
 * failure (`retryOf`) or the first attempt of a rerun (`rerun`).
 */
function nextAttempt (
  parent: KubeObject,
  state: FlowState,
  why: { retryOf: JobRecord } | { rerun: string }
): FlowState {
  const ended = state.current as JobRecord
  const attempt = attemptOf(ended) + 1
  const { flow, remembered } = state
  return {
    flow,
    earlier: [...state.earlier, ended],
    attempt,
    id: jobIdentity(parent, flow, attempt),
    remembered,
    ...why
  }
}

/** A retry that will not run after all (the spec's retry was lowered, or FailFast): the failure stands. */
export function backToFailure (state: FlowState): FlowState {
  const failed = state.earlier[state.earlier.length - 1] as JobRecord
  const { flow, remembered } = state
  const id = { ...state.id, name: failed.jobName }
  return { flow, earlier: state.earlier.slice(0, -1), attempt: attemptOf(failed), id, current: failed, remembered }
}

/** A rerun: the record of each flow it reruns (rerun.ts) becomes history, and a new attempt is to start. */
export function rerunFlows (sync: FlowSync, flows: Flows, rerun: RerunRequest): Flows {
  return new Map([...flows].map(([name, state]) => [name, rerunFlow(sync.parent, state, rerun)]))
}

function rerunFlow (parent: KubeObject, state: FlowState, rerun: RerunRequest): FlowState {
  const { value } = rerun
  const from = state.remembered ?? state.current
  if (from === undefined || !reruns(rerun, state.flow, from)) return state
  if (state.attempt > attemptOf(from)) {
    // The rerun's attempt exists already: this sync was handed the JobFlow from before the status
    // that named it. It is marked as the rerun's, as that status had it.
    const current = state.current === undefined ? undefined : { ...state.current, rerun: value }
    return { ...state, rerun: value, current }
  }
  return state.current === undefined ? state : nextAttempt(parent, state, { rerun: value })
}
