// The JobFlow sync hook: from the observed JobFlow, its Jobs and its JobTemplates to the Jobs
// and ConfigMaps that should exist and the status that describes them. Pure: no I/O, and the
// clock only stamps times that are then carried forward.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { childName, fitName } from '../../k8s/names.js'
import { keepAllObserved, objectsByName } from '../../k8s/objects.js'
import { resolveScripts, scriptsConfigMap } from '../../scripts/configmap.js'
import { scriptsConfigMapChildren } from '../common/job-spec.js'
import { validityConditions } from '../common/validity.js'
import { outcomeCondition, runTimes } from '../common/completion.js'
import { earliestWake, jobTtlDecision, type JobTtlDecision } from '../common/job-ttl.js'
import { jobOutcome } from '../../k8s/jobs.js'
import { JOBTEMPLATE_API_VERSION, jobSpecProblems, parseJobFlowSpec, type FlowSpec, type JobFlowSpec } from './spec.js'
import { buildFlowJob, FLOW_LABEL, JOBFLOW_LABEL, type JobIdentity } from './job.js'
import { compact, isSettled, jobsSucceeded, readHistories, recordFromJob, type JobRecord } from './records.js'
import { attemptJobName, attemptOf, observedAttempt, retriesUsed, retryDueAt, type RetryPolicy } from './attempts.js'
import { rerunRequest, rerunConditions, type RerunRequest } from './rerun.js'
import { keptJob, suspendedCondition } from './suspend.js'
import { orderByDependencies } from './dag.js'
import { evaluateWhen } from './when.js'
import { mergePatch } from '../../k8s/merge-patch.js'
import { parentTtl } from '../common/parent-ttl.js'
import { timestamp } from '../../k8s/time.js'

export type JobFlowPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Invalid'

/** What the spec resolves to once its JobTemplates and scripts are known. */
interface Plan {
  spec: JobFlowSpec
  templates: Map<string, JobSpec>
  scripts?: KubeObject
}

/** The answer alone (the tests' and the benches' view of a sync). */
export function syncJobFlow (request: SyncRequest, context: HookContext): SyncResponse {
  return answerJobFlow(request, context).response
}

/**
 * observe the Jobs → resolve what is still to start → start flows → render. Its one effect: a
 * finished JobFlow deletes itself `ttlSecondsAfterFinished` after it finished (its Jobs go with
 * it, by the garbage collector); only a valid spec gets this far, so doubt deletes nothing.
 */
export function answerJobFlow (request: SyncRequest, context: HookContext): SyncAnswer {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const memory = readHistories(previous.jobs)
  const observedJobs = objectsByName(request.children, 'Job', 'batch/v1')

  const parsed = parseJobFlowSpec(parent)
  if (!parsed.ok) return { response: keepEverything(request, previous, memory, observedJobs, parsed.problems, context.now), effects: [] }
  const spec = parsed.value
  const wasFinished = typeof previous.completionTime === 'string'
  const flows = observeFlows(parent, spec, memory, observedJobs, wasFinished, context.now)
  // A rerun asked for on a finished JobFlow gives each failed and skipped flow a new attempt.
  // Decided on what the status remembers, so that a sync handed a copy from before the rerun's own
  // status write (its new Jobs already there) decides the same and only marks them.
  const rerun = rerunRequest(parent, previous, wasFinished, [...flows.values()].map(f => f.remembered ?? f.current).filter((r): r is JobRecord => r !== undefined), context.now)
  if (rerun?.act === true) for (const state of flows.values()) startRerun(parent, state, rerun.value)
  const finished = wasFinished && rerun?.act !== true
  const base = rerun?.act === true ? restarted(previous, rerun, context.now) : previous

  // Only flows that still have to start need their JobTemplate and script: a template deleted
  // after its Job ran stops nothing.
  const unstarted = finished ? [] : spec.flows.filter(f => flows.get(f.name)?.current === undefined)
  const plan = resolvePlan(parent, spec, unstarted, request, context)
  if (!plan.ok) {
    const response = keepEverything(request, previous, memory, observedJobs, plan.problems, context.now)
    // Metacontroller forgets which JobTemplates we asked for after 20 minutes; until then a new
    // one wakes us at once, after that this resync does.
    if (plan.missingTemplate) response.resyncAfterSeconds = TEMPLATE_RECHECK_SECONDS
    return { response, effects: [] }
  }

  const started = startFlows(spec, flows, finished, context.now)
  const desired = desiredChildren(plan.value, spec, flows, memory, observedJobs, started.toCreate, spec.suspend && !finished, request, context.now)
  if (typeof desired === 'string') return { response: keepEverything(request, previous, memory, observedJobs, [desired], context.now), effects: [] }
  const status = renderStatus(base, flows, finished, started.toCreate.size > 0, context.now)
  status.conditions = suspendedCondition(status.conditions as Condition[], spec.suspend && !finished, desired.suspendedJobs, context.now)
  if (rerun !== undefined) status.rerun = rerun.status
  else if (isRecord(previous.rerun)) status.rerun = previous.rerun
  const self = parentTtl(parent, stringOrUndefined(status.completionTime), spec.ttlSecondsAfterFinished, context.now)
  // The service deletes the JobFlow before Metacontroller applies this answer, and the garbage
  // collector may take a Job before Metacontroller's cache sees it go: had the answer kept the
  // Jobs, Metacontroller would create such a one again. So the answer lets every child go too.
  if (self.effects.length > 0) return { response: { status, children: [] }, effects: self.effects }
  const response: SyncResponse = { status, children: desired.children }
  const wakes = [desired.ttlWake, self.wakeSeconds, started.retryWake].filter((s): s is number => s !== undefined)
  if (wakes.length > 0) response.resyncAfterSeconds = Math.min(...wakes)
  return { response, effects: [] }
}

/**
 * Where one flow stands in this sync: its earlier attempts (settled records), and its current
 * attempt — its record once its Job exists or it settled, none while it is still to start.
 */
interface FlowState {
  flow: FlowSpec
  earlier: JobRecord[]
  attempt: number
  id: JobIdentity
  current?: JobRecord
  /** The record this sync read for the current attempt while it had no Job: its times and rerun carry on. */
  pending?: JobRecord
  /** The failed attempt the current one retries: its end starts the backoff. */
  retryOf?: JobRecord
  /** The rerun the current attempt is the first of. */
  rerun?: string
  /** The last attempt the previous status names, as its Job now says. */
  remembered?: JobRecord
}

/** The flow's records, earlier attempts first: what status.jobs holds of it. */
function historyOf (state: FlowState): JobRecord[] {
  return state.current === undefined ? state.earlier : [...state.earlier, state.current]
}

/**
 * A finished Job under its TTL (common/job-ttl.ts): the outcome that counts is the one the
 * observed status holds for this very Job, not the one this sync is about to write.
 */
function ttlDecision (job: KubeObject, remembered: JobRecord | undefined, now: Date): JobTtlDecision {
  return jobTtlDecision(job, remembered, now)
}

/**
 * What each flow's Jobs say, or what we remember of Jobs that are gone. A flow's current attempt
 * is the last one its records name, or a later one whose Job exists (the status that named it
 * was lost). A failure with retries left ends the attempt, not the flow: the next one is current.
 */
function observeFlows (parent: KubeObject, spec: JobFlowSpec, memory: Map<string, JobRecord[]>, observedJobs: Map<string, KubeObject>, finished: boolean, now: Date): Map<string, FlowState> {
  const flows = new Map<string, FlowState>()
  for (const flow of spec.flows) {
    const history = memory.get(flow.name) ?? []
    const jobOf = (jobName: string): KubeObject | undefined => observedAttempt(observedJobs, jobName, flow.name, FLOW_LABEL)
    let attempt = history.length > 0 ? attemptOf(history[history.length - 1] as JobRecord) : 1
    while (jobOf(attemptJobName(parent.metadata.name, flow.name, attempt + 1)) !== undefined) attempt++
    const earlier = history.filter(r => attemptOf(r) < attempt).map(r => {
      const job = jobOf(r.jobName)
      return job === undefined ? r : recordFromJob(flow.name, job, r, now, attemptOf(r))
    })
    const mine = history.find(r => attemptOf(r) === attempt)
    const state: FlowState = { flow, earlier, attempt, id: jobIdentity(parent, flow, attempt) }
    const job = jobOf(state.id.name)
    if (job !== undefined) state.current = recordFromJob(flow.name, job, mine, now, attempt)
    else if (isSettled(mine)) state.current = mine
    else if (mine !== undefined) state.pending = mine
    const last = history[history.length - 1]
    if (last !== undefined) state.remembered = attemptOf(last) < attempt ? earlier[earlier.length - 1] : state.current ?? mine
    const rerun = mine?.rerun
    if (rerun !== undefined) state.rerun = rerun
    if (!finished && state.current?.phase === 'Failed' && retryAllowed(flow.retry, historyOf(state))) nextAttempt(parent, state, { retryOf: state.current })
    else if (state.current === undefined && rerun === undefined && earlier[earlier.length - 1]?.phase === 'Failed') {
      // A retry decided on an earlier sync, its Job not created yet: it goes on while the spec allows it.
      if (retryAllowed(flow.retry, earlier)) state.retryOf = earlier[earlier.length - 1]
      else void backToFailure(state)
    }
    flows.set(flow.name, state)
  }
  return flows
}

/** Whether a run whose attempts so far are `run` (its last failed) may try once more. */
function retryAllowed (retry: RetryPolicy | undefined, run: readonly JobRecord[]): boolean {
  return retry !== undefined && retriesUsed(run) < retry.limit
}

/**
 * The current attempt becomes history and the next one, still to start, is current: a retry of a
 * failure (`retryOf`) or the first attempt of a rerun (`rerun`).
 */
function nextAttempt (parent: KubeObject, state: FlowState, why: { retryOf: JobRecord } | { rerun: string }): void {
  const ended = state.current as JobRecord
  state.earlier = [...state.earlier, ended]
  state.attempt = attemptOf(ended) + 1
  state.id = jobIdentity(parent, state.flow, state.attempt)
  delete state.current
  delete state.pending
  delete state.retryOf
  delete state.rerun
  Object.assign(state, why)
}

/** A retry that will not run after all (the spec's retry was lowered, or FailFast): the failure stands. */
function backToFailure (state: FlowState): JobRecord {
  const failed = state.earlier[state.earlier.length - 1] as JobRecord
  state.earlier = state.earlier.slice(0, -1)
  state.current = failed
  state.attempt = attemptOf(failed)
  state.id = { ...state.id, name: failed.jobName }
  delete state.pending
  delete state.retryOf
  delete state.rerun
  return failed
}

/** A rerun: a failed or skipped flow's record becomes history, and a new attempt is to start. */
function startRerun (parent: KubeObject, state: FlowState, value: string): void {
  const from = state.remembered ?? state.current
  if (from?.phase !== 'Failed' && from?.phase !== 'Skipped') return
  if (state.attempt > attemptOf(from)) {
    // The rerun's attempt exists already: this sync was handed the JobFlow from before the status
    // that named it. It is marked as the rerun's, as that status had it.
    state.rerun = value
    if (state.current !== undefined) state.current = { ...state.current, rerun: value }
    return
  }
  if (state.current !== undefined) nextAttempt(parent, state, { rerun: value })
}

/** The status a rerun starts from: no completion time, and the outcome condition no longer true. */
function restarted (previous: Record<string, unknown>, rerun: RerunRequest, now: Date): Record<string, unknown> {
  const { completionTime: _, ...rest } = previous
  return { ...rest, conditions: rerunConditions(previous.conditions, rerun, now) }
}

/**
 * Flows without a Job start once every dependency succeeded, unless the flow as a whole has
 * already finished, or something failed: under FailFast no new Job starts after a failure; under
 * Continue only the flows that depend on a failed (or so skipped) flow are skipped. A flow with
 * a `when` decides for itself, once every dependency has finished, whatever the policy: that is
 * how a branch runs because something failed. A retry starts once its backoff has passed (its
 * dependencies succeeded before its first attempt). Walks the flows in dependency order, so a
 * dependency's record is there before its dependants'. Sets each flow's current record; returns
 * the flows whose Job is created now, and when the next retry is due.
 */
function startFlows (spec: JobFlowSpec, flows: Map<string, FlowState>, finished: boolean, now: Date): { toCreate: Set<string>, retryWake?: number } {
  const records = new Map<string, JobRecord>()
  for (const [name, state] of flows) if (state.current !== undefined) records.set(name, state.current)
  const failed = [...records.values()].filter(r => r.phase === 'Failed').map(r => r.name)
  const toCreate = new Set<string>()
  let retryWake: number | undefined
  const suspended = spec.suspend && !finished
  for (const flow of orderByDependencies(spec.flows).order) {
    const state = flows.get(flow.name) as FlowState
    if (state.current !== undefined) continue
    if (state.retryOf !== undefined && spec.failurePolicy === 'FailFast' && failed.length > 0) {
      // After a failure no new Job starts, retries included: this flow's failure stands too.
      records.set(flow.name, backToFailure(state))
      continue
    }
    const record = (phase: JobRecord['phase'], message: string): JobRecord => compact({
      name: flow.name,
      jobName: state.id.name,
      phase,
      startTime: state.pending?.startTime,
      message,
      attempt: state.attempt >= 2 ? state.attempt : undefined,
      rerun: state.rerun
    })
    let current: JobRecord
    const blockedBy = flow.dependencies.filter(d => records.get(d)?.phase === 'Failed' || records.get(d)?.phase === 'Skipped')
    if (finished) {
      current = record('Skipped', 'added after the JobFlow finished')
    } else if (state.retryOf !== undefined) {
      const retry = flow.retry as RetryPolicy
      const number = retriesUsed(state.earlier) + 1
      const due = retryDueAt(retry, number, state.retryOf)
      const of = `retry ${number} of ${retry.limit}`
      if (due <= now.getTime()) {
        toCreate.add(flow.name)
        current = record('Pending', `creating the Job (${of})`)
      } else {
        retryWake = Math.min(retryWake ?? Infinity, Math.ceil((due - now.getTime()) / 1000))
        current = record('Pending', `${of} starts at ${timestamp(new Date(due))}, after the backoff`)
      }
    } else if (flow.when !== undefined) {
      const decided = decideWhen(flow, flow.when, records)
      if (decided === true) toCreate.add(flow.name)
      current = typeof decided === 'string' ? record('Skipped', decided) : record('Pending', decided === true ? 'creating the Job' : `waiting for ${unfinished(flow, records).join(', ')}`)
    } else if (spec.failurePolicy === 'FailFast' && failed.length > 0) {
      current = record('Skipped', `not started: ${failed.join(', ')} failed`)
    } else if (blockedBy.length > 0) {
      current = record('Skipped', `not started: depends on ${[...new Set(blockedBy)].map(d => `${d} (${records.get(d)?.phase === 'Failed' ? 'failed' : 'skipped'})`).join(', ')}`)
    } else {
      const waiting = flow.dependencies.filter(d => records.get(d)?.phase !== 'Succeeded')
      if (waiting.length === 0) toCreate.add(flow.name)
      current = record('Pending', waiting.length === 0 ? 'creating the Job' : `waiting for ${[...new Set(waiting)].join(', ')}`)
    }
    if (suspended && toCreate.delete(flow.name)) {
      // Due now, but nothing starts while the JobFlow is suspended; resumed, it starts at once.
      current = { ...current, message: `not started: the JobFlow is suspended (${current.message ?? ''})` }
    }
    state.current = current
    records.set(flow.name, current)
  }
  if (suspended) return { toCreate }
  return retryWake === undefined ? { toCreate } : { toCreate, retryWake }
}

/** The dependencies of `flow` that have not finished. */
function unfinished (flow: FlowSpec, records: Map<string, JobRecord>): string[] {
  return [...new Set(flow.dependencies.filter(d => !isSettled(records.get(d))))]
}

/**
 * A flow's `when`, once its dependencies have finished: true to start it, false to wait, or the
 * message it is skipped with (the expression was false, or gave no answer).
 */
function decideWhen (flow: FlowSpec, when: string, records: Map<string, JobRecord>): boolean | string {
  if (unfinished(flow, records).length > 0) return false
  const outcomes = new Map(flow.dependencies.map(d => [d, records.get(d) as JobRecord]))
  const value = evaluateWhen(when, outcomes)
  if (value === true) return true
  return value === false ? `${WHEN_FALSE}: ${when}` : `${WHEN_FALSE} (it gave no answer: ${value}): ${when}`
}

/** How a flow skipped by its own `when` is recorded: it did not run by design. */
const WHEN_FALSE = 'skipped: its when is false'

function renderStatus (previous: Record<string, unknown>, flows: Map<string, FlowState>, finished: boolean, creating: boolean, now: Date): Record<string, unknown> {
  const states = [...flows.values()]
  // Each flow stands where its current attempt does; status.jobs keeps every attempt.
  const jobs = states.flatMap(s => (s.current !== undefined ? [s.current] : []))
  const phase = flowPhase(jobs, finished, creating)
  const started = jobs.some(j => j.phase !== 'Pending' && j.phase !== 'Skipped') || creating
  return {
    phase,
    jobsSucceeded: jobsSucceeded(jobs),
    ...runTimes(previous, started, phase === 'Succeeded' || phase === 'Failed', now),
    jobs: states.flatMap(historyOf),
    conditions: outcomeCondition(validityConditions(previous.conditions, [], now), phase, succeeded => succeeded
      ? { reason: 'AllJobsSucceeded', message: successMessage(jobs) }
      : { reason: 'JobFailed', message: failureMessage(jobs) }, now)
  }
}

/** Less than Metacontroller's 20-minute cache of customize answers. */
export const TEMPLATE_RECHECK_SECONDS = 300

/**
 * Looks up the JobSpec and the script of every flow still to start; anything missing makes the
 * spec invalid. The scripts ConfigMap holds the scripts of every flow that can still be found.
 */
function resolvePlan (parent: KubeObject, spec: JobFlowSpec, unstarted: FlowSpec[], request: SyncRequest, context: HookContext): { ok: true, value: Plan } | { ok: false, problems: string[], missingTemplate: boolean } {
  const problems: string[] = []
  let missingTemplate = false
  const jobTemplates = objectsByName(request.related, 'JobTemplate', JOBTEMPLATE_API_VERSION)
  const templates = new Map<string, JobSpec>()
  for (const flow of unstarted) {
    const at = `flow ${JSON.stringify(flow.name)}`
    let template = flow.jobTemplate
    if (flow.jobTemplateRef !== undefined) {
      const ref = jobTemplates.get(flow.jobTemplateRef)
      const refSpec = isRecord(ref?.spec) ? ref.spec.jobTemplate : undefined
      if (ref === undefined) {
        missingTemplate = true
        problems.push(`${at}: JobTemplate ${JSON.stringify(flow.jobTemplateRef)} not found in namespace ${parent.metadata.namespace ?? ''}`)
      } else if (!isRecord(refSpec)) problems.push(`${at}: JobTemplate ${JSON.stringify(flow.jobTemplateRef)} has no spec.jobTemplate`)
      else template = refSpec as unknown as JobSpec
    }
    if (template === undefined) continue
    // The patch comes before the globals, so that one template serves many flows.
    if (flow.patch !== undefined) template = mergePatch(template, flow.patch) as JobSpec
    const templateProblems = jobSpecProblems(template, flow.patch !== undefined ? `${at} (its Job spec patched)` : at)
    problems.push(...templateProblems)
    if (templateProblems.length === 0) templates.set(flow.name, template)
  }
  const needed = new Set(unstarted.flatMap(f => (f.script !== undefined ? [f.script.name] : [])))
  const available = (name: string): boolean => Object.hasOwn(spec.scripts, name) || context.scripts.has(name)
  const scriptNames = spec.flows.flatMap(f => (f.script !== undefined ? [f.script.name] : [])).filter(n => needed.has(n) || available(n))
  const { scripts, problems: scriptProblems } = resolveScripts(scriptNames, spec.scripts, context.scripts)
  problems.push(...scriptProblems)
  if (problems.length > 0) return { ok: false, problems, missingTemplate }
  const plan: Plan = { spec, templates }
  if (scriptNames.length > 0) {
    plan.scripts = scriptsConfigMap(parent.metadata.name, parent.metadata.namespace, { [JOBFLOW_LABEL]: fitName(parent.metadata.name) }, scripts)
  }
  return { ok: true, value: plan }
}

function jobIdentity (parent: KubeObject, flow: FlowSpec, attempt: number): JobIdentity {
  return {
    name: attemptJobName(parent.metadata.name, flow.name, attempt),
    namespace: parent.metadata.namespace,
    labels: { [JOBFLOW_LABEL]: fitName(parent.metadata.name), [FLOW_LABEL]: flow.name }
  }
}

/**
 * Every Job that exists is returned as observed, every attempt's: a started Job is a record of a
 * run and is never rebuilt from an edited spec. New Jobs are built from the spec. A finished Job
 * is left out (and so deleted) once its TTL has passed and the observed status holds its outcome;
 * `ttlWake` is when the next one is due. Scripts ConfigMaps stay while a Job mounts them; the
 * current one is always there for the Jobs still to come.
 */
function desiredChildren (plan: Plan, spec: JobFlowSpec, flows: Map<string, FlowState>, memory: Map<string, JobRecord[]>, observedJobs: Map<string, KubeObject>, toCreate: Set<string>, suspend: boolean, request: SyncRequest, now: Date): { children: KubeObject[], suspendedJobs: number, ttlWake?: number } | string {
  const children: KubeObject[] = []
  let suspendedJobs = 0
  const kept: KubeObject[] = []
  const decisions: JobTtlDecision[] = []
  for (const flow of spec.flows) {
    const state = flows.get(flow.name) as FlowState
    const remembered = new Map((memory.get(flow.name) ?? []).map(r => [r.jobName, r]))
    const jobNames = [...new Set([...state.earlier.map(r => r.jobName), state.id.name])]
    for (const jobName of jobNames) {
      const observed = observedAttempt(observedJobs, jobName, flow.name, FLOW_LABEL)
      if (observed === undefined) continue
      const decision = ttlDecision(observed, remembered.get(jobName), now)
      decisions.push(decision)
      if (decision.drop) continue
      const answer = keptJob(observed, suspend)
      if (answer.suspended) suspendedJobs++
      children.push(answer.job)
      kept.push(observed)
    }
    if (toCreate.has(flow.name) && observedJobs.get(state.id.name) === undefined) {
      const job = buildFlowJob(state.id, flow, plan.templates.get(flow.name) as JobSpec, spec, plan.scripts?.metadata.name)
      if (typeof job === 'string') return job
      children.push(job)
    }
  }
  children.push(...scriptsConfigMapChildren(kept, plan.scripts, request.children))
  const ttlWake = earliestWake(decisions)
  return ttlWake === undefined ? { children, suspendedJobs } : { children, suspendedJobs, ttlWake }
}

function flowPhase (jobs: JobRecord[], finished: boolean, creating: boolean): JobFlowPhase {
  const anyFailed = jobs.some(j => j.phase === 'Failed')
  if (finished) return anyFailed ? 'Failed' : 'Succeeded'
  const running = creating || jobs.some(j => j.phase === 'Running')
  // Every flow ran or was skipped (a `when` branch that was not needed): the outcome is the failures'.
  if (!running && jobs.every(j => isSettled(j))) return anyFailed ? 'Failed' : 'Succeeded'
  if (anyFailed && !running) return 'Failed'
  if (jobs.some(j => j.phase === 'Running' || j.phase === 'Succeeded' || j.phase === 'Failed')) return 'Running'
  return 'Pending'
}

/**
 * The answer to a spec we cannot act on: every observed child exactly as it is, the previous
 * status with the problems in `Valid` and phase `Invalid`, and the memory of finished Jobs brought
 * up to date with what we observe (a Job may finish while the spec is being fixed).
 */
function keepEverything (request: SyncRequest, previous: Record<string, unknown>, memory: Map<string, JobRecord[]>, observedJobs: Map<string, KubeObject>, problems: string[], now: Date): SyncResponse {
  const histories = new Map<string, JobRecord[]>()
  const seen = new Set<string>()
  for (const [name, history] of memory) {
    histories.set(name, history.map(record => {
      seen.add(record.jobName)
      const job = observedJobs.get(record.jobName)
      return job === undefined ? record : recordFromJob(name, job, record, now, attemptOf(record))
    }))
  }
  for (const job of observedJobs.values()) {
    if (seen.has(job.metadata.name)) continue
    // A Job whose record was lost: the next attempt of its flow.
    const name = job.metadata.labels?.[FLOW_LABEL] ?? job.metadata.name
    const history = histories.get(name) ?? []
    const last = history[history.length - 1]
    histories.set(name, [...history, recordFromJob(name, job, undefined, now, last === undefined ? 1 : attemptOf(last) + 1)])
  }
  const jobs = [...histories.values()].flat()
  const currents = [...histories.values()].map(h => h[h.length - 1] as JobRecord)
  // A JobFlow that finished stays finished: the problem shows in `Valid` only.
  const finished = typeof previous.completionTime === 'string'
  const phase: JobFlowPhase = finished ? (currents.some(j => j.phase === 'Failed') ? 'Failed' : 'Succeeded') : 'Invalid'
  return {
    status: { ...previous, phase, jobsSucceeded: jobsSucceeded(currents), jobs, conditions: validityConditions(previous.conditions, problems, now) },
    // Jobs as last applied: under InPlace, their identity alone would strip them (suspend.ts).
    children: keepAllObserved(request.children, ['Job.batch/v1'])
  }
}

/** How many flows ran and succeeded, and how many their own `when` skipped. */
function successMessage (jobs: JobRecord[]): string {
  const succeeded = jobs.filter(j => j.phase === 'Succeeded').length
  const skipped = jobs.filter(j => j.phase === 'Skipped').length
  return `${succeeded} of ${jobs.length} jobs succeeded${skipped > 0 ? `, ${skipped} skipped by their when` : ''}`
}

/** Which flows failed, and which were skipped because of them (not those their own `when` skipped). */
function failureMessage (jobs: JobRecord[]): string {
  const failed = jobs.filter(j => j.phase === 'Failed').map(j => `${j.name}: ${j.message ?? 'failed'}`).join('; ')
  const skipped = jobs.filter(j => j.phase === 'Skipped' && j.message?.startsWith(WHEN_FALSE) !== true).map(j => j.name)
  return skipped.length > 0 ? `${failed}; skipped because of them: ${skipped.join(', ')}` : failed
}
