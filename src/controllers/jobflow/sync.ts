// The JobFlow sync hook: from the observed JobFlow, its Jobs and its JobTemplates to the Jobs
// and ConfigMaps that should exist and the status that describes them. Pure: no I/O, and the
// clock only stamps times that are then carried forward.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { childName, fitName } from '../../k8s/names.js'
import { keepAllObserved, keepAsObserved, objectsByName } from '../../k8s/objects.js'
import { resolveScripts, scriptsConfigMap } from '../../scripts/configmap.js'
import { scriptsConfigMapChildren } from '../common/job-spec.js'
import { validityConditions } from '../common/validity.js'
import { outcomeCondition, runTimes } from '../common/completion.js'
import { earliestWake, jobTtlDecision, type JobTtlDecision } from '../common/job-ttl.js'
import { jobOutcome } from '../../k8s/jobs.js'
import { JOBTEMPLATE_API_VERSION, jobSpecProblems, parseJobFlowSpec, type FlowSpec, type JobFlowSpec } from './spec.js'
import { buildFlowJob, FLOW_LABEL, JOBFLOW_LABEL, type JobIdentity } from './job.js'
import { compact, isSettled, jobsSucceeded, readRecords, recordFromJob, type JobRecord } from './records.js'
import { orderByDependencies } from './dag.js'
import { evaluateWhen } from './when.js'
import { mergePatch } from '../../k8s/merge-patch.js'
import { parentTtl } from '../common/parent-ttl.js'

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
  const memory = readRecords(previous.jobs)
  const observedJobs = objectsByName(request.children, 'Job', 'batch/v1')

  const parsed = parseJobFlowSpec(parent)
  if (!parsed.ok) return { response: keepEverything(request, previous, memory, observedJobs, parsed.problems, context.now), effects: [] }
  const spec = parsed.value
  const { records, ids } = observeJobs(parent, spec, memory, observedJobs, context.now)

  // Only flows that still have to start need their JobTemplate and script: a template deleted
  // after its Job ran stops nothing.
  const finished = typeof previous.completionTime === 'string'
  const unstarted = finished ? [] : spec.flows.filter(f => !records.has(f.name))
  const plan = resolvePlan(parent, spec, unstarted, request, context)
  if (!plan.ok) {
    const response = keepEverything(request, previous, memory, observedJobs, plan.problems, context.now)
    // Metacontroller forgets which JobTemplates we asked for after 20 minutes; until then a new
    // one wakes us at once, after that this resync does.
    if (plan.missingTemplate) response.resyncAfterSeconds = TEMPLATE_RECHECK_SECONDS
    return { response, effects: [] }
  }

  const toCreate = startFlows(spec, records, ids, memory, finished)
  const desired = desiredChildren(plan.value, spec, ids, memory, observedJobs, toCreate, request, context.now)
  if (typeof desired === 'string') return { response: keepEverything(request, previous, memory, observedJobs, [desired], context.now), effects: [] }
  const jobs = spec.flows.map(f => records.get(f.name)).filter((r): r is JobRecord => r !== undefined)
  const status = renderStatus(previous, jobs, finished, toCreate.size > 0, context.now)
  const self = parentTtl(parent, stringOrUndefined(status.completionTime), spec.ttlSecondsAfterFinished, context.now)
  // The service deletes the JobFlow before Metacontroller applies this answer, and the garbage
  // collector may take a Job before Metacontroller's cache sees it go: had the answer kept the
  // Jobs, Metacontroller would create such a one again. So the answer lets every child go too.
  if (self.effects.length > 0) return { response: { status, children: [] }, effects: self.effects }
  const response: SyncResponse = { status, children: desired.children }
  const wakes = [desired.ttlWake, self.wakeSeconds].filter((s): s is number => s !== undefined)
  if (wakes.length > 0) response.resyncAfterSeconds = Math.min(...wakes)
  return { response, effects: [] }
}

/**
 * A finished Job under its TTL (common/job-ttl.ts): the outcome that counts is the one the
 * observed status holds for this very Job, not the one this sync is about to write.
 */
function ttlDecision (job: KubeObject, remembered: JobRecord | undefined, now: Date): JobTtlDecision {
  const outcome = jobOutcome(job)
  const recorded = outcome !== undefined && remembered?.jobName === job.metadata.name && remembered.phase === outcome
  return jobTtlDecision(job, recorded ? remembered.completionTime : undefined, now)
}

/** What each flow's Job says, or what we remember of a Job that is gone; and each flow's Job identity. */
function observeJobs (parent: KubeObject, spec: JobFlowSpec, memory: Map<string, JobRecord>, observedJobs: Map<string, KubeObject>, now: Date): { records: Map<string, JobRecord>, ids: Map<string, JobIdentity> } {
  const records = new Map<string, JobRecord>()
  const ids = new Map<string, JobIdentity>()
  for (const flow of spec.flows) {
    const id = jobIdentity(parent, flow)
    ids.set(flow.name, id)
    const remembered = memory.get(flow.name)
    const mine = remembered?.jobName === id.name ? remembered : undefined
    const job = observedJobs.get(id.name)
    if (job !== undefined) records.set(flow.name, recordFromJob(flow.name, job, mine, now))
    else if (isSettled(mine)) records.set(flow.name, mine)
  }
  return { records, ids }
}

/**
 * Flows without a Job start once every dependency succeeded, unless the flow as a whole has
 * already finished, or something failed: under FailFast no new Job starts after a failure; under
 * Continue only the flows that depend on a failed (or so skipped) flow are skipped. A flow with
 * a `when` decides for itself, once every dependency has finished, whatever the policy: that is
 * how a branch runs because something failed. Walks the flows in dependency order, so a
 * dependency's record is there before its dependants'. Adds a record for each to `records`;
 * returns the flows whose Job is created now.
 */
function startFlows (spec: JobFlowSpec, records: Map<string, JobRecord>, ids: Map<string, JobIdentity>, memory: Map<string, JobRecord>, finished: boolean): Set<string> {
  const failed = [...records.values()].filter(r => r.phase === 'Failed').map(r => r.name)
  const toCreate = new Set<string>()
  for (const flow of orderByDependencies(spec.flows).order) {
    if (records.has(flow.name)) continue
    const jobName = ids.get(flow.name)?.name ?? ''
    const startTime = memory.get(flow.name)?.startTime
    const blockedBy = flow.dependencies.filter(d => records.get(d)?.phase === 'Failed' || records.get(d)?.phase === 'Skipped')
    if (finished) {
      records.set(flow.name, { name: flow.name, jobName, phase: 'Skipped', message: 'added after the JobFlow finished' })
    } else if (flow.when !== undefined) {
      const decided = decideWhen(flow, flow.when, records)
      if (decided === true) toCreate.add(flow.name)
      records.set(flow.name, compact({ name: flow.name, jobName, phase: typeof decided === 'string' ? 'Skipped' : 'Pending', startTime, message: typeof decided === 'string' ? decided : decided === true ? 'creating the Job' : `waiting for ${unfinished(flow, records).join(', ')}` }))
    } else if (spec.failurePolicy === 'FailFast' && failed.length > 0) {
      records.set(flow.name, { name: flow.name, jobName, phase: 'Skipped', message: `not started: ${failed.join(', ')} failed` })
    } else if (blockedBy.length > 0) {
      const message = `not started: depends on ${[...new Set(blockedBy)].map(d => `${d} (${records.get(d)?.phase === 'Failed' ? 'failed' : 'skipped'})`).join(', ')}`
      records.set(flow.name, { name: flow.name, jobName, phase: 'Skipped', message })
    } else {
      const waiting = flow.dependencies.filter(d => records.get(d)?.phase !== 'Succeeded')
      if (waiting.length === 0) toCreate.add(flow.name)
      records.set(flow.name, compact({
        name: flow.name,
        jobName,
        phase: 'Pending',
        startTime,
        message: waiting.length === 0 ? 'creating the Job' : `waiting for ${[...new Set(waiting)].join(', ')}`
      }))
    }
  }
  return toCreate
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

function renderStatus (previous: Record<string, unknown>, jobs: JobRecord[], finished: boolean, creating: boolean, now: Date): Record<string, unknown> {
  const phase = flowPhase(jobs, finished, creating)
  const started = jobs.some(j => j.phase !== 'Pending' && j.phase !== 'Skipped') || creating
  return {
    phase,
    jobsSucceeded: jobsSucceeded(jobs),
    ...runTimes(previous, started, phase === 'Succeeded' || phase === 'Failed', now),
    jobs,
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

function jobIdentity (parent: KubeObject, flow: FlowSpec): JobIdentity {
  return {
    name: childName(parent.metadata.name, flow.name),
    namespace: parent.metadata.namespace,
    labels: { [JOBFLOW_LABEL]: fitName(parent.metadata.name), [FLOW_LABEL]: flow.name }
  }
}

/**
 * Every Job that exists is returned as observed: a started Job is a record of a run and is never
 * rebuilt from an edited spec. New Jobs are built from the spec. A finished Job is left out (and
 * so deleted) once its TTL has passed and the observed status holds its outcome; `ttlWake` is
 * when the next one is due. Scripts ConfigMaps stay while a Job mounts them; the current one is
 * always there for the Jobs still to come.
 */
function desiredChildren (plan: Plan, spec: JobFlowSpec, ids: Map<string, JobIdentity>, memory: Map<string, JobRecord>, observedJobs: Map<string, KubeObject>, toCreate: Set<string>, request: SyncRequest, now: Date): { children: KubeObject[], ttlWake?: number } | string {
  const children: KubeObject[] = []
  const kept: KubeObject[] = []
  const decisions: JobTtlDecision[] = []
  for (const flow of spec.flows) {
    const id = ids.get(flow.name) as JobIdentity
    const observed = observedJobs.get(id.name)
    if (observed !== undefined) {
      const decision = ttlDecision(observed, memory.get(flow.name), now)
      decisions.push(decision)
      if (decision.drop) continue
      children.push(keepAsObserved(observed))
      kept.push(observed)
    } else if (toCreate.has(flow.name)) {
      const job = buildFlowJob(id, flow, plan.templates.get(flow.name) as JobSpec, spec, plan.scripts?.metadata.name)
      if (typeof job === 'string') return job
      children.push(job)
    }
  }
  children.push(...scriptsConfigMapChildren(kept, plan.scripts, request.children))
  const ttlWake = earliestWake(decisions)
  return ttlWake === undefined ? { children } : { children, ttlWake }
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
function keepEverything (request: SyncRequest, previous: Record<string, unknown>, memory: Map<string, JobRecord>, observedJobs: Map<string, KubeObject>, problems: string[], now: Date): SyncResponse {
  const jobs: JobRecord[] = []
  const seen = new Set<string>()
  for (const record of memory.values()) {
    const job = observedJobs.get(record.jobName)
    jobs.push(job === undefined ? record : recordFromJob(record.name, job, record, now))
    seen.add(record.jobName)
  }
  for (const job of observedJobs.values()) {
    if (seen.has(job.metadata.name)) continue
    jobs.push(recordFromJob(job.metadata.labels?.[FLOW_LABEL] ?? job.metadata.name, job, undefined, now))
  }
  // A JobFlow that finished stays finished: the problem shows in `Valid` only.
  const finished = typeof previous.completionTime === 'string'
  const phase: JobFlowPhase = finished ? (jobs.some(j => j.phase === 'Failed') ? 'Failed' : 'Succeeded') : 'Invalid'
  return {
    status: { ...previous, phase, jobsSucceeded: jobsSucceeded(jobs), jobs, conditions: validityConditions(previous.conditions, problems, now) },
    children: keepAllObserved(request.children)
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
