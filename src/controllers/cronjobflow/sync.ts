// The CronJobFlow sync hook: from the observed CronJobFlow and its runs (JobFlows) to the runs that
// should exist and the status. Kubernetes' CronJob controller (pkg/controller/cronjob) is the
// reference: the most recent missed time starts (at most one catch-up), none past
// startingDeadlineSeconds, Forbid skips while a run goes, Replace stops it, and the oldest finished
// runs past the history limits are deleted (left out of the answer). Time is a resync (law 4): the
// answer asks to be called again at the next schedule time.
import type { HookContext, SyncAnswer, SyncRequest } from '../../protocol/hooks.js'
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { keepAllObserved, keepAsObserved } from '../../k8s/objects.js'
import { refTo, type Effect } from '../../effects/types.js'
import { setCondition } from '../../k8s/conditions.js'
import { timestamp } from '../../k8s/time.js'
import { invalidSpecAnswer, validityConditions } from '../common/validity.js'
import { dueSchedule } from '../common/cron-missed.js'
import { parseCronJobFlowSpec, type CronJobFlowSpec } from './spec.js'
import {
  REPLACED_BY_ANNOTATION, newRun, observedRuns, runName, runReference, type Run
} from './runs.js'

/**
 * The most runs that may go at once, whatever the policy: under Allow, runs that never end would
 * otherwise pile up one per schedule time, each carried whole in every request and answer.
 */
export const MAX_ACTIVE_RUNS = 100

/** The condition that says what the last sync decided about a schedule time. */
export const SCHEDULED = 'Scheduled'

/** One sync's decision: the run to start, the runs Replace stops, and what to report. */
export interface Decision {
  start?: { scheduledMs: number, name: string }
  stop: Run[]
  /** The run that replaces those stopped: the one started now, or the newest. */
  replacedBy?: string
  condition?: Condition
  /** The next schedule time, for the resync and the status. */
  nextMs?: number
}

export function syncCronJobFlow (request: SyncRequest, context: HookContext): SyncAnswer {
  const { parent } = request
  const { now } = context
  const previous = isRecord(parent.status) ? parent.status : {}
  const runs = observedRuns(request.children, parent.metadata.name)
  const parsed = parseCronJobFlowSpec(parent, request.related)
  if (!parsed.ok) {
    const status: Record<string, unknown> = { ...previous, ...runsStatus(runs, previous, []), phase: 'Invalid' }
    delete status.nextScheduleTime
    const children = keepAllObserved(request.children)
    return invalidSpecAnswer(previous, { status, children, problems: parsed.problems }, now)
  }
  const spec = parsed.value
  const decision = withLeftOverStops(decide(parent, spec, runs, previous, now), spec, runs)
  const started = decision.start !== undefined ? newRun(parent, spec.run, decision.start.scheduledMs) : undefined
  // Under OnDelete a run that exists is never updated: its identity keeps it, and the answer stays
  // a few dozen bytes a run however large the runs are.
  const children = [
    ...keptRuns(runs, spec).map(run => keepAsObserved(run.object)),
    ...(started !== undefined ? [started] : [])
  ]
  const status = renderStatus(parent, previous, runs, spec, decision, started, now)
  const response: SyncAnswer['response'] = { status, children }
  if (decision.nextMs !== undefined) {
    response.resyncAfterSeconds = Math.max(1, Math.ceil((decision.nextMs - now.getTime()) / 1000))
  }
  return { response, effects: stopEffects(decision, now) }
}

/** Whether a schedule time is due now, and what it does given the runs (syncCronJob's order). */
export function decide (
  parent: KubeObject, spec: CronJobFlowSpec, runs: readonly Run[], previous: Record<string, unknown>, now: Date
): Decision {
  if (parent.metadata.deletionTimestamp !== undefined) return { stop: [] }
  if (spec.suspend) {
    const message = 'spec.suspend is true'
    return { stop: [], condition: { type: SCHEDULED, status: 'False', reason: 'Suspended', message } }
  }
  const earliestMs = earliestTime(parent, runs, previous)
  const input = { schedule: spec.schedule, zone: spec.zone, earliestMs, nowMs: now.getTime() }
  const deadline = spec.startingDeadlineSeconds
  const due = dueSchedule({ ...input, ...(deadline !== undefined ? { startingDeadlineSeconds: deadline } : {}) })
  const decision: Decision = { stop: [], ...(due.nextMs !== undefined ? { nextMs: due.nextMs } : {}) }
  if (due.tooLate === true) {
    // The time dropped: the most recent one the deadline did not allow.
    const missedMs = dueSchedule(input).scheduledMs
    const at = missedMs !== undefined ? timestamp(new Date(missedMs)) : 'its time'
    const message = `missed the run due at ${at}: it could not start within startingDeadlineSeconds ` +
      `(${deadline ?? 0} s)`
    return { ...decision, condition: { type: SCHEDULED, status: 'False', reason: 'MissedStartingWindow', message } }
  }
  if (due.scheduledMs === undefined) return decision
  const at = timestamp(new Date(due.scheduledMs))
  const name = runName(parent.metadata.name, due.scheduledMs)
  if (runs.some(run => run.name === name)) return decision
  const active = runs.filter(run => run.state === 'Active')
  if (spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
    const message = `skipped the run due at ${at}: ${active.map(r => r.name).join(', ')} still running ` +
      '(concurrencyPolicy Forbid)'
    return { ...decision, condition: { type: SCHEDULED, status: 'False', reason: 'AlreadyActive', message } }
  }
  if (spec.concurrencyPolicy === 'Allow' && active.length >= MAX_ACTIVE_RUNS) {
    const message = `skipped the run due at ${at}: ${active.length} runs are still running, ` +
      `${MAX_ACTIVE_RUNS} at most (concurrencyPolicy Allow)`
    return { ...decision, condition: { type: SCHEDULED, status: 'False', reason: 'TooManyActive', message } }
  }
  const stop = spec.concurrencyPolicy === 'Replace' ? active.filter(run => !run.replaced) : []
  const many = due.missed === 'many'
  const stopping = stop.length > 0 ? `, stopping ${stop.map(r => r.name).join(', ')}` : ''
  const tooMany = many
    ? '; more than 100 start times were missed: set or decrease spec.startingDeadlineSeconds, or check clock skew'
    : ''
  const condition: Condition = {
    type: SCHEDULED,
    status: 'True',
    reason: many ? 'TooManyMissedTimes' : 'Started',
    message: `started ${name} for ${at}${stopping}${tooMany}`
  }
  return { ...decision, start: { scheduledMs: due.scheduledMs, name }, stop, replacedBy: name, condition }
}

/**
 * Under Replace, a run older than the newest one that still runs and was never stopped: the sync
 * that started the newest stopped it, unless Metacontroller applied the new run and not the stop.
 * Stopping it now makes the answer whatever sync it comes from.
 */
function withLeftOverStops (decision: Decision, spec: CronJobFlowSpec, runs: readonly Run[]): Decision {
  if (spec.concurrencyPolicy !== 'Replace' || decision.start !== undefined) return decision
  const newest = runs.at(-1)
  if (newest === undefined) return decision
  const stop = runs.filter(run =>
    run !== newest && run.state === 'Active' && !run.replaced && run.sinceMs < newest.sinceMs)
  return stop.length === 0 ? decision : { ...decision, stop, replacedBy: newest.name }
}

/**
 * The newest schedule time a run was started for: the status's, or a run's that is newer (the
 * status read may be older than the runs); -Infinity when there is none.
 */
function lastScheduledMs (previous: Record<string, unknown>, runs: readonly Run[]): number {
  const times = [Date.parse(stringOrUndefined(previous.lastScheduleTime) ?? '')]
  for (const run of runs) if (run.scheduledMs !== undefined) times.push(run.scheduledMs)
  return Math.max(...times.filter(Number.isFinite))
}

/** Where missed times are counted from: the last schedule time, else the CronJobFlow's creation. */
function earliestTime (parent: KubeObject, runs: readonly Run[], previous: Record<string, unknown>): number {
  const last = lastScheduledMs(previous, runs)
  return Number.isFinite(last) ? last : Date.parse(parent.metadata.creationTimestamp ?? '') || 0
}

/** The runs kept: every active one and the newest finished ones of each outcome, up to its limit. */
export function keptRuns (runs: readonly Run[], spec: Pick<CronJobFlowSpec, 'successfulLimit' | 'failedLimit'>): Run[] {
  const newest = (state: Run['state'], limit: number): Run[] =>
    limit === 0 ? [] : runs.filter(run => run.state === state).slice(-limit)
  const kept = new Set([...newest('Succeeded', spec.successfulLimit), ...newest('Failed', spec.failedLimit)])
  return runs.filter(run => run.state === 'Active' || kept.has(run))
}

/**
 * The runs Replace stops, each by its own deadline: no step starts, unfinished Jobs are deleted
 * after its grace, and every record stays (src/controllers/jobflow/deadline.ts). Asked again at
 * each sync until the run shows the annotation (a stop that failed is retried so).
 */
function stopEffects (decision: Decision, now: Date): Effect[] {
  const replacedBy = decision.replacedBy
  if (replacedBy === undefined) return []
  return decision.stop.flatMap(run => {
    const target = refTo(run.object)
    if (target === undefined) return []
    return [{
      type: 'StopJobFlow' as const,
      target,
      activeDeadlineSeconds: secondsRun(run.object, now),
      annotations: { [REPLACED_BY_ANNOTATION]: replacedBy }
    }]
  })
}

/** Whole seconds a JobFlow has run (since its start or last rerun), at least 1: a deadline already past. */
function secondsRun (flow: KubeObject, now: Date): number {
  const status = isRecord(flow.status) ? flow.status : {}
  const rerun = isRecord(status.rerun) ? stringOrUndefined(status.rerun.time) : undefined
  const from = [stringOrUndefined(status.startTime), rerun, flow.metadata.creationTimestamp]
    .map(t => Date.parse(t ?? '')).filter(Number.isFinite)
  const since = from.length > 0 ? Math.max(...from) : now.getTime()
  return Math.max(1, Math.floor((now.getTime() - since) / 1000))
}

/** What the runs say of the status: the last success, and the active runs. */
function runsStatus (
  runs: readonly Run[], previous: Record<string, unknown>, started: readonly KubeObject[]
): Record<string, unknown> {
  const successes = [stringOrUndefined(previous.lastSuccessfulTime),
    ...runs.filter(run => run.state === 'Succeeded').map(run => run.completionTime)]
    .filter((t): t is string => t !== undefined && Number.isFinite(Date.parse(t)))
    .sort((a, b) => Date.parse(a) - Date.parse(b))
  const active = [...runs.filter(run => run.state === 'Active'), ...started.map(object => ({ object }))]
    .map(runReference)
  return {
    ...(successes.length > 0 ? { lastSuccessfulTime: successes[successes.length - 1] } : {}),
    active,
    activeCount: active.length
  }
}

function renderStatus (
  parent: KubeObject,
  previous: Record<string, unknown>,
  runs: readonly Run[],
  spec: CronJobFlowSpec,
  decision: Decision,
  started: KubeObject | undefined,
  now: Date
): Record<string, unknown> {
  const seen = runsStatus(runs, previous, started !== undefined ? [started] : [])
  const last = lastScheduleTime(previous, runs, decision)
  let conditions = validityConditions(previous.conditions, [], now)
  if (decision.condition !== undefined) conditions = setCondition(conditions, decision.condition, now)
  else if (!spec.suspend) conditions = conditions.filter(c => !(c.type === SCHEDULED && c.reason === 'Suspended'))
  const phase = spec.suspend ? 'Suspended' : (seen.activeCount as number) > 0 ? 'Active' : 'Scheduled'
  return {
    phase,
    ...(last !== undefined ? { lastScheduleTime: last } : {}),
    ...seen,
    ...(decision.nextMs !== undefined && !spec.suspend && parent.metadata.deletionTimestamp === undefined
      ? { nextScheduleTime: timestamp(new Date(decision.nextMs)) }
      : {}),
    conditions
  }
}

/** The newest schedule time a run was started for: this sync's, a run's, or the status's. */
function lastScheduleTime (
  previous: Record<string, unknown>, runs: readonly Run[], decision: Decision
): string | undefined {
  const latest = Math.max(lastScheduledMs(previous, runs), decision.start?.scheduledMs ?? -Infinity)
  return Number.isFinite(latest) ? timestamp(new Date(latest)) : undefined
}
