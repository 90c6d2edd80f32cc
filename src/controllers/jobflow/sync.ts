// The JobFlow sync hook: from the observed JobFlow, its Jobs and its JobTemplates to the Jobs
// and ConfigMaps that should exist and the status that describes them. Pure: no I/O, and the
// clock only stamps times that are then carried forward.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import { groupKey, objectsByName, objectsOf } from '../../k8s/objects.js'
import { resolveScripts, scriptsConfigMap } from '../../scripts/configmap.js'
import { scriptsConfigMapChildren } from '../common/job-spec.js'
import { validityConditions } from '../common/validity.js'
import { outcomeCondition, runTimes } from '../common/completion.js'
import { invalid, isOutcome, type JobFlowPhase } from './invalid.js'

export type { JobFlowPhase }
import { earliestWake, jobTtlDecision, type JobTtlDecision } from '../common/job-ttl.js'
import { parentTtl } from '../common/parent-ttl.js'
import { mergePatch } from '../../k8s/merge-patch.js'
import {
  allSteps, JOBTEMPLATE_API_VERSION, jobSpecProblems, parseJobFlowSpec, stepsInOrder, type JobFlowSpec
} from './spec.js'
import { buildFlowJob, FLOW_LABEL, JOBFLOW_LABEL } from './job.js'
import {
  isSettled, isUnderway, jobsQueued, jobsSucceeded, readRecords, type JobRecord
} from './records.js'
import { observedAttempt } from './attempts.js'
import { rerunRequest, rerunConditions, type RerunRequest } from './rerun.js'
import { keptJob, suspendedCondition, type SuspendedJobs } from './suspend.js'
import {
  historyOf, observeFlows, rerunFlows, WHEN_FALSE, type Flows, type FlowState, type FlowSync, type Observed
} from './flows.js'
import { startFlows, type Started } from './start.js'
import { shownOutputs, succeededPodsByJob } from './outputs.js'
import { itemGroups, outputStillRead } from './branches.js'
import { groupRecords } from './record-groups.js'
import { answerSizeProblems, type AnswerFigures } from '../common/answer-size.js'
import { jobFlowAnswerFigures } from './answer-size.js'
import { argumentValues } from './arguments.js'
import {
  deadlineWake, endedByDeadline, flowDeadline, isPast, jobDeadlineSeconds, type FlowDeadline
} from './deadline.js'
import { failuresJSON, FLOW_FAILURES_ENV } from './exit.js'
import { expandFanOut, stepOf, type JobFlowPlan, type LatestRecord, type PlannedFlow } from './fanout.js'
import { isNeeded, isUntargeted } from './targets.js'
import { localName } from './template-ref.js'
import { withFlowTemplates } from './flow-templates.js'

/**
 * An invalid spec's answer; a missing JobTemplate or JobFlowTemplate is looked for again:
 * Metacontroller forgets which ones we asked for after 20 minutes; until then a new one wakes us
 * at once, after that this resync does.
 */
function templatesInvalid (observed: Observed, parsed: { problems: string[], missingTemplate?: boolean }): SyncAnswer {
  const answer = invalid(observed, parsed.problems)
  if (parsed.missingTemplate === true) answer.response.resyncAfterSeconds = TEMPLATE_RECHECK_SECONDS
  return answer
}

/** What the spec resolves to once its JobTemplates and scripts are known. */
interface Plan {
  templates: Map<string, JobSpec>
  scripts?: KubeObject
}

/** Less than Metacontroller's 20-minute cache of customize answers. */
export const TEMPLATE_RECHECK_SECONDS = 300

function observe (request: SyncRequest, now: Date): Observed {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const observedJobs = objectsByName(request.children, 'Job', 'batch/v1')
  const podsSent = request.related?.[groupKey('Pod', 'v1')] !== undefined
  const succeededPods = podsSent ? succeededPodsByJob(objectsOf(request.related, 'Pod', 'v1')) : undefined
  const memory = readRecords(previous, parent.metadata.name)
  return { request, parent, now, previous, memory, observedJobs, succeededPods }
}

/**
 * observe the Jobs → rerun → resolve what is still to start → start flows → render. Its one
 * effect: a finished JobFlow deletes itself `ttlSecondsAfterFinished` after it finished (its Jobs
 * go with it, by the garbage collector); only a valid spec gets this far, so doubt deletes nothing.
 */
export function syncJobFlow (request: SyncRequest, context: HookContext): SyncAnswer {
  const observed = observe(request, context.now)
  const parsed = withFlowTemplates(request, parseJobFlowSpec(request.parent))
  if (!parsed.ok) return templatesInvalid(observed, parsed)
  const wasFinished = typeof observed.previous.completionTime === 'string'
  const { sync: seen, observedFlows } = observeRun({ ...observed, scripts: context.scripts, wasFinished }, parsed.value)
  let flows = observedFlows
  // A rerun asked for on a finished JobFlow gives each failed and skipped flow a new attempt.
  // Decided on what the status remembers, so that a sync handed a copy from before the rerun's own
  // status write (its new Jobs already there) decides the same and only marks them.
  const lastRecords = [...flows.values()].map(f => f.remembered ?? f.current).filter(r => r !== undefined)
  const rerun = rerunRequest(seen, wasFinished, lastRecords)
  if (rerun?.act === true) flows = rerunFlows(seen, flows, rerun)
  const finished = wasFinished && rerun?.act !== true
  // The deadline counts from the start, or from the rerun that starts the flow again.
  const since = rerun?.act === true ? { ...seen.previous, rerun: rerun.status } : seen.previous
  const deadline = flowDeadline(seen.spec.activeDeadlineSeconds, seen.parent, since)
  const sync: FlowSync = deadline === undefined ? seen : { ...seen, deadline }
  // Only flows that still have to start need their JobTemplate and script: a template deleted
  // after its Job ran stops nothing, nor one of a step no target needs.
  const unstarted = finished
    ? []
    : sync.spec.flows.filter(f => flows.get(f.name)?.current === undefined && isNeeded(sync.spec.targets, f))
  const plan = resolvePlan(sync, unstarted)
  if (!plan.ok) return templatesInvalid(sync, plan)
  const started = startFlows(sync, flows, finished)
  // Over the size budget nothing is built: the estimate comes from the spec alone.
  const oversize = answerSizeProblems(answerFigures(sync, plan.value, started))
  if (oversize.length > 0) return invalid(sync, oversize)
  const suspend = sync.spec.suspend && !finished
  const desired = desiredChildren(sync, plan.value, started, suspend)
  if (typeof desired === 'string') return invalid(sync, [desired])
  const status = renderStatus(sync, started, { finished, rerun, suspend, suspendedJobs: desired.suspendedJobs })
  if (parsed.pins !== undefined) desired.children.push(parsed.pins)
  const underway = [...started.flows.values()].some(f => f.current !== undefined && isUnderway(f.current))
  const deadlineDue = finished ? undefined : deadlineWake(sync.deadline, sync.now, underway)
  return answer(sync, status, desired.children, [desired.ttlWake, started.retryWake, deadlineDue])
}

/**
 * The flows as observed, each fan-out step as its items once they are known (fanout.ts). Observed
 * before expanded: a `forEachFrom` step's items are found from the records of this sync, so they
 * start in the sync that sees their source succeed (a chain of them, one pass each).
 */
function observeRun (
  base: Omit<FlowSync, 'spec' | 'steps' | 'groups' | 'args'>,
  spec: JobFlowSpec
): { sync: FlowSync, observedFlows: Flows } {
  const { memory, now } = base
  const remembered: LatestRecord = name => memory.get(name)?.at(-1)
  const steps = stepsInOrder(spec)
  const args = argumentValues(spec.arguments)
  const expanded = (plan: JobFlowPlan): FlowSync => ({ ...base, spec: plan, steps, groups: itemGroups(plan), args })
  let sync = expanded(expandFanOut(spec, remembered, now))
  let flows = observeFlows(sync)
  const withSteps = allSteps(spec)
  if (!withSteps.some(f => f.forEachFrom !== undefined)) return { sync, observedFlows: flows }
  for (let pass = 0; pass < withSteps.length; pass++) {
    const observed = flows
    const plan = expandFanOut(spec, name => observed.get(name)?.current ?? remembered(name), now)
    if (sameExpansion(plan, sync.spec)) break
    sync = expanded(plan)
    flows = observeFlows(sync)
  }
  return { sync, observedFlows: flows }
}

/** Two expansions of one spec with the same flows, placeholders saying the same. */
function sameExpansion (a: JobFlowPlan, b: JobFlowPlan): boolean {
  return a.flows.length === b.flows.length && a.flows.every((flow, i) => {
    const other = b.flows[i] as PlannedFlow
    return flow.name === other.name && flow.itemsPending === other.itemsPending &&
      flow.itemsProblem === other.itemsProblem
  })
}

/**
 * The answer with the JobFlow's own TTL: the Delete effect once it is due, else a resync at the
 * earliest of it and `wakes`.
 */
function answer (
  sync: FlowSync,
  status: Record<string, unknown>,
  children: KubeObject[],
  wakes: Array<number | undefined>
): SyncAnswer {
  const self = parentTtl(
    sync.parent,
    stringOrUndefined(status.completionTime),
    sync.spec.ttlSecondsAfterFinished,
    sync.now
  )
  // The service deletes the JobFlow before Metacontroller applies this answer, and the garbage
  // collector may take a Job before Metacontroller's cache sees it go: had the answer kept the
  // Jobs, Metacontroller would create such a one again. So the answer lets every child go too.
  if (self.effects.length > 0) return { response: { status, children: [] }, effects: self.effects }
  const response: SyncResponse = { status, children }
  const due = [...wakes, self.wakeSeconds].filter((s): s is number => s !== undefined)
  if (due.length > 0) response.resyncAfterSeconds = Math.min(...due)
  return { response, effects: [] }
}

/** How the run as a whole stands in this sync, beside its flows. */
interface RunState {
  finished: boolean
  rerun: RerunRequest | undefined
  suspend: boolean
  suspendedJobs: SuspendedJobs
}

function renderStatus (sync: FlowSync, started: Started, run: RunState): Record<string, unknown> {
  const { previous, now } = sync
  const { finished, rerun } = run
  // A rerun starts from no completion time, and the outcome condition no longer true.
  const base = rerun?.act === true ? restarted(previous, rerun, now) : previous
  const states = [...started.flows.values()]
  const creating = started.toCreate.size > 0
  // Each flow stands where its current attempt does; status.jobs keeps every attempt.
  const jobs = states.flatMap(s => (s.current !== undefined ? [s.current] : []))
  const deadlinePassed = isPast(sync.deadline, now) && jobs.some(endedByDeadline)
  const computed = flowPhase(jobs, started.failedLeaves, creating)
  const phase = finished && isOutcome(previous.phase)
    ? previous.phase
    : deadlinePassed && computed === 'Succeeded' ? 'Failed' : computed
  const running = jobs.some(j => j.phase !== 'Pending' && j.phase !== 'Skipped') || creating
  const describe = (succeeded: boolean): { reason: string, message: string } => succeeded
    ? { reason: 'AllJobsSucceeded', message: successMessage(jobs) }
    : deadlinePassed
      ? { reason: 'DeadlineExceeded', message: deadlineFailure(sync.deadline as FlowDeadline, jobs) }
      : { reason: 'JobFailed', message: failureMessage(jobs) }
  const conditions = outcomeCondition(validityConditions(base.conditions, [], now), phase, describe, now)
  const status: Record<string, unknown> = {
    phase,
    jobsSucceeded: jobsSucceeded(jobs),
    ...jobsQueued(jobs),
    ...runTimes(base, running, phase === 'Succeeded' || phase === 'Failed', now),
    ...groupRecords(
      shownOutputs(states.flatMap(historyOf), stillRead(sync, started)), sync.parent.metadata.name, now
    ),
    conditions: suspendedCondition(conditions, run.suspend, run.suspendedJobs, now)
  }
  if (rerun !== undefined) status.rerun = rerun.status
  else if (isRecord(previous.rerun)) status.rerun = previous.rerun
  return status
}

/**
 * Whether a step may still read a flow's output, from the records of this sync: worked out on the
 * first long output only, as most flows have none.
 */
function stillRead (sync: FlowSync, started: Started): (name: string) => boolean {
  let read: ((name: string) => boolean) | undefined
  return name => {
    if (read === undefined) {
      const records = new Map<string, JobRecord>()
      for (const [flow, state] of started.flows) if (state.current !== undefined) records.set(flow, state.current)
      read = outputStillRead(sync.steps, records, sync.groups)
    }
    return read(name)
  }
}

function restarted (previous: Record<string, unknown>, rerun: RerunRequest, now: Date): Record<string, unknown> {
  const { completionTime: _, ...rest } = previous
  return { ...rest, conditions: rerunConditions(previous.conditions, rerun, now) }
}

type Resolved = { ok: true, value: Plan } | { ok: false, problems: string[], missingTemplate: boolean }

/**
 * Looks up the JobSpec and the script of every flow still to start; anything missing makes the
 * spec invalid. The scripts ConfigMap holds the scripts of every flow that can still be found.
 */
function resolvePlan (sync: FlowSync, unstarted: PlannedFlow[]): Resolved {
  const { parent, spec } = sync
  const problems: string[] = []
  let missingTemplate = false
  const jobTemplates = objectsByName(sync.request.related, 'JobTemplate', JOBTEMPLATE_API_VERSION)
  const templates = new Map<string, JobSpec>()
  // The items of a fan-out step share its template: it is looked up and checked once a step, and
  // its problems are the step's, said once.
  const byStep = new Map<string, JobSpec | undefined>()
  for (const flow of unstarted) {
    const step = stepOf(flow)
    if (!byStep.has(step)) {
      const found = flowTemplate(flow, jobTemplates, parent.metadata.namespace)
      if (found !== undefined && 'problem' in found) {
        missingTemplate ||= found.missing
        problems.push(found.problem)
      }
      const checked = found === undefined || 'problem' in found ? [] : templateProblems(flow, found)
      problems.push(...checked)
      byStep.set(step, found === undefined || 'problem' in found || checked.length > 0 ? undefined : found)
    }
    const template = byStep.get(step)
    if (template !== undefined) templates.set(flow.name, template)
  }
  const needed = new Set(unstarted.flatMap(f => (f.script !== undefined ? [f.script.name] : [])))
  const available = (name: string): boolean => Object.hasOwn(spec.scripts, name) || sync.scripts.has(name)
  const scriptNames = spec.flows.flatMap(f => (f.script !== undefined ? [f.script.name] : []))
    .filter(n => needed.has(n) || available(n))
  const { scripts, problems: scriptProblems } = resolveScripts(scriptNames, spec.scripts, sync.scripts)
  problems.push(...scriptProblems)
  if (problems.length > 0) return { ok: false, problems, missingTemplate }
  const plan: Plan = { templates }
  if (scriptNames.length > 0) {
    const labels = { [JOBFLOW_LABEL]: fitName(parent.metadata.name) }
    plan.scripts = scriptsConfigMap(parent.metadata.name, parent.metadata.namespace, labels, scripts)
  }
  return { ok: true, value: plan }
}

/** What is wrong with a flow's JobSpec, named by its step. */
function templateProblems (flow: PlannedFlow, template: JobSpec): string[] {
  const at = `flow ${JSON.stringify(stepOf(flow))}`
  return jobSpecProblems(template, flow.patch !== undefined ? `${at} (its Job spec patched)` : at, flow)
}

/**
 * A flow's JobSpec, inline or from its JobTemplate, with its patch; undefined without either, a
 * problem when the JobTemplate is missing or has none. The patch comes before the globals, so
 * that one template serves many flows.
 */
function flowTemplate (
  flow: PlannedFlow,
  jobTemplates: Map<string, KubeObject>,
  namespace: string | undefined
): JobSpec | { problem: string, missing: boolean } | undefined {
  const at = `flow ${JSON.stringify(stepOf(flow))}`
  let template = flow.jobTemplate
  if (flow.jobTemplateRef !== undefined) {
    const ref = jobTemplates.get(flow.jobTemplateRef)
    const refSpec = isRecord(ref?.spec) ? ref.spec.jobTemplate : undefined
    const name = JSON.stringify(flow.jobTemplateRef)
    if (ref === undefined) {
      return {
        problem: `${at}: JobTemplate ${name} not found in namespace ${namespace ?? ''}`,
        missing: true
      }
    }
    if (!isRecord(refSpec)) return { problem: `${at}: JobTemplate ${name} has no spec.jobTemplate`, missing: false }
    template = refSpec as unknown as JobSpec
  }
  if (template === undefined) return undefined
  return flow.patch !== undefined ? mergePatch(template, flow.patch) as JobSpec : template
}

/**
 * Every Job that exists is returned as observed, every attempt's: a started Job is a record of a
 * run and is never rebuilt from an edited spec. New Jobs are built from the spec. A finished Job
 * is left out (and so deleted) once its TTL has passed and the observed status holds its outcome;
 * `ttlWake` is when the next one is due. Scripts ConfigMaps stay while a Job mounts them; the
 * current one is always there for the Jobs still to come.
 */
function desiredChildren (
  sync: FlowSync,
  plan: Plan,
  started: Started,
  suspend: boolean
): { children: KubeObject[], suspendedJobs: SuspendedJobs, ttlWake?: number } | string {
  const children: KubeObject[] = []
  const suspendedJobs: SuspendedJobs = { suspended: 0, leftTo: [] }
  const kept: KubeObject[] = []
  const decisions: JobTtlDecision[] = []
  for (const flow of sync.spec.flows) {
    const state = started.flows.get(flow.name) as FlowState
    for (const observed of observedAttempts(sync, state)) {
      // Past the deadline and its grace, the Job still running is deleted (deadline.ts).
      if (started.stopped.has(flow.name) && observed.metadata.name === state.id.name) continue
      const decision = ttlDecision(sync, flow, observed)
      decisions.push(decision)
      if (decision.drop) continue
      const answer = keptJob(observed, suspend)
      if (answer.suspended) suspendedJobs.suspended++
      if (answer.leftTo !== undefined) suspendedJobs.leftTo.push(`${observed.metadata.name} (${answer.leftTo})`)
      children.push(answer.job)
      kept.push(observed)
    }
    if (started.toCreate.has(flow.name) && sync.observedJobs.get(state.id.name) === undefined) {
      const template = plan.templates.get(flow.name) as JobSpec
      const job = buildFlowJob(state.id, flow, template, sync.spec, {
        scriptsConfigMap: plan.scripts?.metadata.name,
        outputs: dependencyOutputs(flow, started.flows, sync.spec.fanOuts),
        // An exit step reports the deadline rather than being bound by it.
        ...(flow.exit === true ? { dag: started.dag } : deadlineInput(sync, template))
      })
      if (typeof job === 'string') return job
      children.push(job)
    }
  }
  children.push(...scriptsConfigMapChildren(kept, plan.scripts, sync.request.children))
  const ttlWake = earliestWake(decisions)
  return ttlWake === undefined ? { children, suspendedJobs } : { children, suspendedJobs, ttlWake }
}

/** A new Job's own deadline under the flow's, when the spec sets one. */
function deadlineInput (sync: FlowSync, template: JobSpec): { deadlineSeconds?: number } {
  if (sync.deadline === undefined) return {}
  return { deadlineSeconds: jobDeadlineSeconds(template.activeDeadlineSeconds ?? undefined, sync.deadline, sync.now) }
}

/** The Jobs this sync would create, by step, and the observed ones kept beside them. */
function answerFigures (sync: FlowSync, plan: Plan, started: Started): AnswerFigures {
  const isNew = (flow: PlannedFlow): boolean =>
    sync.observedJobs.get((started.flows.get(flow.name) as FlowState).id.name) === undefined
  const creating = sync.spec.flows.filter(f => started.toCreate.has(f.name) && isNew(f))
  return jobFlowAnswerFigures({
    spec: sync.spec,
    observedJobs: sync.observedJobs,
    creating,
    templates: plan.templates,
    outputsOf: flow => {
      const outputs = dependencyOutputs(flow, started.flows, sync.spec.fanOuts)
      // An exit step's containers carry the DAG's failures too: weighed as an output.
      if (flow.exit !== true || started.dag === undefined) return outputs
      return new Map([...outputs, [FLOW_FAILURES_ENV, failuresJSON(started.dag)]])
    }
  })
}

/** The outputs of a flow's dependencies, by dependency: '' for one that succeeded without an output. */
function dependencyOutputs (flow: PlannedFlow, flows: Flows, fanOuts: JobFlowPlan['fanOuts']): Map<string, string> {
  // A fan-out step hands nothing on: its items' outputs are read by a `forEachFrom` over it. A
  // group's step names its dependencies as its template does.
  return new Map(flow.dependencies.filter(d => !fanOuts.has(d))
    .map(d => [localName(d, flow.scope), flows.get(d)?.current?.output ?? '']))
}

/** The observed Jobs of a flow's attempts, earlier ones first. */
function observedAttempts (sync: FlowSync, state: FlowState): KubeObject[] {
  const step = stepOf(state.flow)
  // A flow's first attempt (nearly every item of a large fan-out) needs no set of names.
  const jobNames = state.earlier.length === 0
    ? [state.id.name]
    : new Set([...state.earlier.map(r => r.jobName), state.id.name])
  const jobs: KubeObject[] = []
  for (const jobName of jobNames) {
    const observed = observedAttempt(sync.observedJobs, jobName, step, FLOW_LABEL)
    if (observed !== undefined) jobs.push(observed)
  }
  return jobs
}

/**
 * A finished Job under its TTL (common/job-ttl.ts): the outcome that counts is the one the
 * observed status holds for this very Job, not the one this sync is about to write.
 */
function ttlDecision (sync: FlowSync, flow: PlannedFlow, job: KubeObject): JobTtlDecision {
  const remembered = (sync.memory.get(flow.name) ?? []).findLast(r => r.jobName === job.metadata.name)
  return jobTtlDecision(job, remembered, sync.now)
}

/**
 * The flow's phase: once every flow ran or was skipped and nothing runs, Failed when a failure
 * nothing handled (a failed leaf, branches.ts) remains. A flow still to start keeps it open after
 * a failure too: a retry in its backoff (under Continue), a step whose `when` or `depends` decides.
 */
function flowPhase (jobs: JobRecord[], failedLeaves: readonly string[], creating: boolean): JobFlowPhase {
  const failed = failedLeaves.length > 0
  // A queued Job is not running yet, but it will: the flow is not over while one waits.
  const running = creating || jobs.some(isUnderway)
  // Every flow ran or was skipped: the outcome is the leaves'.
  if (!running && jobs.every(j => isSettled(j))) return failed ? 'Failed' : 'Succeeded'
  if (jobs.some(j => j.phase === 'Running' || j.phase === 'Succeeded' || j.phase === 'Failed')) return 'Running'
  return 'Pending'
}

/** How many flows ran and succeeded, how many their own `when` skipped, and how many no target needs. */
function successMessage (jobs: JobRecord[]): string {
  const succeeded = jobs.filter(j => j.phase === 'Succeeded').length
  const untargeted = jobs.filter(isUntargeted).length
  const skipped = jobs.filter(j => j.phase === 'Skipped').length - untargeted
  const failed = jobs.filter(j => j.phase === 'Failed').length
  return `${succeeded} of ${jobs.length} jobs succeeded` +
    (skipped > 0 ? `, ${skipped} skipped` + (failed > 0 ? '' : ' by their when') : '') +
    (failed > 0 ? `, ${failed} failed and handled by the steps after them` : '') +
    (untargeted > 0 ? `, ${untargeted} not run: no target needs them (spec.targets)` : '')
}

/** A flow the deadline ended: what it stopped and what it kept from starting. */
function deadlineFailure (deadline: FlowDeadline, jobs: JobRecord[]): string {
  const ended = jobs.filter(endedByDeadline).map(j => j.name)
  return `the JobFlow passed its activeDeadlineSeconds (${deadline.seconds} s): ${ended.join(', ')}`
}

/** Which flows failed, and which were skipped because of them (not those their own `when` skipped). */
function failureMessage (jobs: JobRecord[]): string {
  const failed = jobs.filter(j => j.phase === 'Failed').map(j => `${j.name}: ${j.message ?? 'failed'}`).join('; ')
  const skipped = jobs.filter(j => j.phase === 'Skipped' && j.message?.startsWith(WHEN_FALSE) !== true &&
    !isUntargeted(j)).map(j => j.name)
  return skipped.length > 0 ? `${failed}; skipped because of them: ${skipped.join(', ')}` : failed
}
