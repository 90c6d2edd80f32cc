// Deciding, in one sync, what each flow still to start does: start its Job, wait (for its
// dependencies, a retry's backoff, an output, a cap, an approval, the DAG for an exit step), or
// settle without a Job (skipped, failed, approved). Walks the flows in dependency order over the
// states flows.ts observed, and returns new states; none it was given is changed.
import { timestamp } from '../../k8s/time.js'
import type { PlannedFlow } from './fanout.js'
import { compact, type JobRecord } from './records.js'
import { retriesUsed, retryDueAt, type RetryPolicy } from './attempts.js'
import { whenBudget, type WhenBudget } from './when.js'
import { decideWhen, unfinishedSteps, WHEN_DEFERRED } from './when-decide.js'
import { dagEnd, EXIT_WAITING, type DagEnd } from './exit.js'
import { decideApproval, type ApprovalSpec } from './approval.js'
import { flowsInStepOrder, namesForPeople, stepOf } from './fanout.js'
import { evaluateDepends, type SettledStep } from './depends.js'
import { heldByParallelism, heldMessage, itemSlots, takeSlot } from './flow-cap.js'
import { isPast, notStartedMessage, overdueRecords } from './deadline.js'
import { failedLeaves, stepView, type StepView } from './branches.js'
import { untargetedMessage } from './targets.js'
import { backToFailure, type FlowState, type Flows, type FlowSync } from './flows.js'
import { groupEnd, groupRunningMessage, heldByGroup, membersByGroup } from './group-end.js'
import type { FlowSpec } from './spec.js'

/** The flows once every one still to start has its record, which Jobs start now, and when the next retry is due. */
export interface Started {
  flows: Flows
  toCreate: Set<string>
  retryWake?: number
  /** The leaf steps on a failed branch (branches.ts): the failures nothing handled. */
  failedLeaves: string[]
  /** The flows whose Job the deadline stops: left out of the answer, so deleted. */
  stopped: ReadonlySet<string>
  /** How the DAG ended, once it has: what the exit steps' Jobs are told (exit.ts). */
  dag?: DagEnd
}

/**
 * Flows without a Job start once their dependencies allow it (`dependencies`: each one succeeded
 * or its own `when` skipped it; `depends`: its expression holds once the steps it names have
 * finished), unless the flow as a whole has already finished. A flow with a `when` decides for
 * itself once every dependency has finished, whatever their outcomes: that is how a branch runs
 * because something failed. Under FailFast, once a failure is not handled (a leaf step is on a
 * failed branch), no other flow starts. A retry starts once its backoff has passed. Walks the
 * flows in dependency order, so a dependency's record is there before its dependants'.
 */
export function startFlows (sync: FlowSync, observed: Flows, finished: boolean): Started {
  const decided = decideFlows(sync, observed, finished, [])
  if (sync.spec.failurePolicy !== 'FailFast' || decided.failedLeaves.length === 0) return decided
  const failed = [...observed.values()].flatMap(s => (s.current?.phase === 'Failed' ? [s.flow] : []))
  return failed.length === 0 ? decided : decideFlows(sync, observed, finished, failed)
}

/**
 * One walk of startFlows: `failed` are the failures that stop what is still to start (FailFast),
 * the DAG's for its steps and the exit steps' for theirs: an exit step runs whatever the DAG did.
 */
function decideFlows (
  sync: FlowSync, observed: Flows, finished: boolean, failedFlows: readonly PlannedFlow[]
): Started {
  const failedIn = (exit: boolean): string[] => failedFlows.filter(f => (f.exit === true) === exit).map(f => f.name)
  const failedOf = { dag: failedIn(false), exit: failedIn(true) }
  const flows = new Map(observed)
  const records = new Map<string, JobRecord>()
  for (const [name, state] of flows) if (state.current !== undefined) records.set(name, state.current)
  const toCreate = new Set<string>()
  const outputWaits = new Map<string, number>()
  for (const [name, state] of flows) if (state.outputWait !== undefined) outputWaits.set(name, state.outputWait)
  let retryWake: number | undefined
  const suspended = sync.spec.suspend && !finished
  const slots = itemSlots(observed)
  const whens = whenBudget()
  const steps = stepView(records, sync.groups)
  const past = isPast(sync.deadline, sync.now)
  const stopped = finished ? new Set<string>() : stopOverdue(sync, flows, records)
  let dag: DagEnd | undefined
  let dagAsked = false
  const settle = groupSettler(sync, flows, records, steps)
  for (const flow of flowsInStepOrder(sync.spec, sync.steps)) {
    const state = flows.get(flow.name) as FlowState
    const exit = flow.exit === true
    // A group a step depends on has ended once every step inside it has: each was decided before it.
    flow.dependencies.forEach(settle)
    // Every flow of the DAG comes before the first exit step: its records are all decided here.
    if (exit && !dagAsked) [dag, dagAsked] = [dagOf(sync, records, steps), true]
    if (state.current !== undefined) continue
    const failed = exit ? failedOf.exit : failedOf.dag
    if (state.retryOf !== undefined && (failed.length > 0 || (past && !exit))) {
      // After a failure, or past the deadline, no new Job starts, retries included: its failure stands.
      const back = backToFailure(state)
      flows.set(flow.name, back)
      records.set(flow.name, back.current as JobRecord)
      continue
    }
    const start = exit && dag === undefined
      ? { record: unstartedRecord(state, 'Pending', EXIT_WAITING), create: false }
      : decideStart({ sync, state, records, steps, failed, finished, outputWaits, whens, dag })
    let current = start.record
    if (start.wakeSeconds !== undefined) retryWake = Math.min(retryWake ?? Infinity, start.wakeSeconds)
    if (start.create && suspended) {
      // Due now, but nothing starts while the JobFlow is suspended; resumed, it starts at once.
      current = { ...current, message: `not started: the JobFlow is suspended (${current.message ?? ''})` }
    } else if (start.create && !takeSlot(slots, flow)) {
      const at = `at most ${String(flow.item?.parallelism)} items of ${stepOf(flow)} at once`
      current = { ...current, message: `waiting: ${at}` }
    } else if (start.create) toCreate.add(flow.name)
    flows.set(flow.name, { ...state, current })
    records.set(flow.name, current)
  }
  for (const step of sync.steps) if (step.group !== undefined) settle(step.name)
  holdOverCap(sync, flows, records, toCreate)
  const failedLeaves = failedLeavesOf(sync, records)
  const ended: Started = { flows, toCreate, failedLeaves, stopped, ...(dag !== undefined ? { dag } : {}) }
  return suspended || retryWake === undefined ? ended : { ...ended, retryWake }
}

/**
 * The DAG's Jobs still unfinished a grace period past the deadline: their records Failed in
 * `flows` and `records`, their names returned (their Jobs are deleted). The exit steps' Jobs,
 * which report the deadline, are left to run.
 */
function stopOverdue (sync: FlowSync, flows: Map<string, FlowState>, records: Map<string, JobRecord>): Set<string> {
  if (sync.deadline === undefined) return new Set()
  const stopped = new Set<string>()
  for (const [name, record] of overdueRecords(records, sync.deadline, sync.now)) {
    const state = flows.get(name) as FlowState
    if (state.flow.exit === true) continue
    flows.set(name, { ...state, current: record })
    records.set(name, record)
    stopped.add(name)
  }
  return stopped
}

/**
 * Settles a running template group (group-end.ts) once every step inside it has ended, in
 * `flows` and `records`: a group inside it first. Does nothing to any other step.
 */
function groupSettler (
  sync: FlowSync,
  flows: Map<string, FlowState>,
  records: Map<string, JobRecord>,
  steps: StepView
): (name: string) => void {
  const members = membersByGroup(sync.steps)
  const settle = (name: string): void => {
    const inside = members.get(name)
    const record = records.get(name)
    if (inside === undefined || record?.phase !== 'Running') return
    inside.forEach(m => { settle(m.name) })
    const state = flows.get(name) as FlowState
    const end = groupEnd(state.flow, inside, records, { groups: sync.groups, steps })
    if (end === undefined) return
    const current = { ...record, phase: end.phase, message: end.message, completionTime: timestamp(sync.now) }
    flows.set(name, { ...state, current })
    records.set(name, current)
  }
  return settle
}

/** Takes out of `toCreate` what `spec.parallelism` holds back, saying so in their records. */
function holdOverCap (
  sync: FlowSync,
  flows: Map<string, FlowState>,
  records: Map<string, JobRecord>,
  toCreate: Set<string>
): void {
  for (const name of heldByParallelism(sync.spec.parallelism, sync.steps, flows, toCreate)) {
    const state = flows.get(name) as FlowState
    const current = { ...state.current as JobRecord, message: heldMessage(sync.spec.parallelism as number) }
    toCreate.delete(name)
    flows.set(name, { ...state, current })
    records.set(name, current)
  }
}

/** How the DAG (the steps but the exit steps) ended, from the records decided so far. */
function dagOf (sync: FlowSync, records: ReadonlyMap<string, JobRecord>, steps: StepView): DagEnd | undefined {
  const dagSteps = topLevel(sync.steps).filter(step => step.exit !== true)
  const view = { groups: sync.groups, steps, targets: sync.spec.targets?.names }
  return dagEnd(dagSteps, sync.spec.flows.filter(f => f.exit !== true), records, view)
}

/** The leaf steps on a failed branch, from the flows' records. */
function failedLeavesOf (sync: FlowSync, records: ReadonlyMap<string, JobRecord>): string[] {
  return failedLeaves(topLevel(sync.steps), records, sync.groups, sync.spec.targets?.names)
}

/** The steps but those inside a template group: a group stands for its own (group-end.ts). */
function topLevel (steps: readonly FlowSpec[]): readonly FlowSpec[] {
  return steps.some(s => s.scope !== undefined) ? steps.filter(s => s.scope === undefined) : steps
}

/** What deciding one flow's start looks at. */
interface StartQuestion {
  sync: FlowSync
  state: FlowState
  /** The records of the flows decided so far, by flow name. */
  records: ReadonlyMap<string, JobRecord>
  /** How the steps decided so far stand, a fan-out step as one. */
  steps: StepView
  /** The flows whose current attempt failed before this sync started any. */
  failed: readonly string[]
  finished: boolean
  /** Flows whose Job succeeded but whose output is not known yet: seconds their dependants still wait. */
  outputWaits: ReadonlyMap<string, number>
  /** What this sync's `when`s have left to spend. */
  whens: WhenBudget
  /** How the DAG ended: asked of an exit step only, once it has. */
  dag?: DagEnd
}

/** One flow still to start: its record, whether its Job is created now, and when its retry is due. */
function decideStart (question: StartQuestion): {
  record: JobRecord
  create: boolean
  wakeSeconds?: number
} {
  const { sync, state, finished, outputWaits } = question
  const { flow } = state
  const record = (phase: JobRecord['phase'], message: string): JobRecord => unstartedRecord(state, phase, message)
  // A group that started runs on until its steps end (groupSettler), whatever happens after.
  if (flow.group !== undefined && state.pending?.phase === 'Running') return groupStart(sync, state)
  const untargeted = untargetedMessage(sync.spec.targets, flow)
  if (untargeted !== undefined) return { record: record('Skipped', untargeted), create: false }
  if (finished) return { record: record('Skipped', 'added after the JobFlow finished'), create: false }
  if (flow.exit !== true && isPast(sync.deadline, sync.now)) {
    return { record: record('Skipped', notStartedMessage(sync.deadline)), create: false }
  }
  const held = flow.scope === undefined ? undefined : heldByGroup(flow.scope, question.records.get(flow.scope))
  if (held !== undefined) return { record: record(held.phase, held.message), create: false }
  if (state.retryOf !== undefined) return decideRetry(sync, state, record)
  // A dependant's Job carries its dependencies' outputs from its creation on: it waits a little for them.
  const awaited = flow.dependencies.filter(d => outputWaits.has(d))
  const create = (): { record: JobRecord, create: boolean, wakeSeconds?: number } => {
    if (flow.approval !== undefined) return approvalStart(sync, state, flow.approval)
    if (flow.group !== undefined) return groupStart(sync, state)
    // A fan-out step whose items are not known runs no Job of its own.
    if (flow.itemsProblem !== undefined) return { record: record('Failed', flow.itemsProblem), create: false }
    // Its output, as a fan-out step's is its items': none, an empty array.
    if (flow.itemsNone !== undefined) {
      return { record: { ...record('Succeeded', flow.itemsNone), output: '[]' }, create: false }
    }
    if (flow.itemsPending !== undefined) {
      return { record: record('Pending', flow.itemsPending), create: false, wakeSeconds: 2 }
    }
    if (awaited.length === 0) return { record: record('Pending', 'creating the Job'), create: true }
    return {
      record: record('Pending', `waiting for the output of ${[...new Set(awaited)].join(', ')}`),
      create: false,
      wakeSeconds: Math.max(...awaited.map(d => outputWaits.get(d) as number))
    }
  }
  const verdict = dependencyVerdict(question, awaited)
  if (verdict === true) return create()
  const decision = { record: record(verdict.phase, verdict.message), create: false }
  return verdict.wakeSeconds === undefined ? decision : { ...decision, wakeSeconds: verdict.wakeSeconds }
}

/** The record of a flow's attempt still to start, carrying its first start, attempt and rerun. */
function unstartedRecord (state: FlowState, phase: JobRecord['phase'], message: string): JobRecord {
  return compact({
    name: state.flow.name,
    jobName: state.id.name,
    phase,
    startTime: state.pending?.startTime,
    message,
    attempt: state.attempt >= 2 ? state.attempt : undefined,
    rerun: state.rerun
  })
}

/** A template group free to start: it runs (no Job of its own) while its steps do. */
function groupStart (sync: FlowSync, state: FlowState): { record: JobRecord, create: false } {
  const running = unstartedRecord(state, 'Running', groupRunningMessage(state.flow))
  return { record: { ...running, startTime: state.pending?.startTime ?? timestamp(sync.now) }, create: false }
}

/** An approval step free to start: it waits for its approval (approval.ts) and runs no Job. */
function approvalStart (
  sync: FlowSync,
  state: FlowState,
  approval: ApprovalSpec
): { record: JobRecord, create: false, wakeSeconds?: number } {
  const verdict = decideApproval(stepOf(state.flow), approval, {
    parent: sync.parent, now: sync.now, since: state.pending?.startTime
  })
  const record = compact({
    ...unstartedRecord(state, verdict.phase, verdict.message),
    startTime: verdict.since,
    completionTime: verdict.completionTime
  })
  const wake = verdict.wakeSeconds === undefined ? {} : { wakeSeconds: verdict.wakeSeconds }
  return { record, create: false, ...wake }
}

/** What a flow's dependencies say of it: start it (true), or the phase and message it stays with. */
type Verdict = true | { phase: 'Pending' | 'Skipped' | 'Failed', message: string, wakeSeconds?: number }

/**
 * A flow's `depends` (once the steps it names finished), then its `when` (once every dependency
 * finished, whatever their outcomes); else, but under FailFast after a failure nothing handled,
 * its `dependencies`: each succeeded or skipped by its own `when`. `awaited`: dependencies whose
 * output is still awaited.
 */
function dependencyVerdict (
  { sync, state: { flow }, records, steps, failed, whens, dag }: StartQuestion,
  awaited: readonly string[]
): Verdict {
  const waiting = (names: string[]): Verdict => {
    const people = namesForPeople(names, sync.groups, steps.openItems)
    return { phase: 'Pending', message: `waiting for ${people}` }
  }
  const unfinished = (): string[] => unfinishedSteps(flow, steps)
  if (flow.depends !== undefined) {
    const open = unfinished()
    if (open.length > 0) return waiting(open)
    const holds = evaluateDepends(flow.depends.tree, step => steps.settled(step) as SettledStep)
    if (!holds) return { phase: 'Skipped', message: `${DEPENDS_FALSE}: ${flow.depends.source}` }
    if (flow.when === undefined) return true
  }
  if (flow.when !== undefined) {
    if (unfinished().length === 0 && awaited.length > 0) return true
    const decided = decideWhen(flow, flow.when, { records, steps, args: sync.args, dag }, whens)
    if (typeof decided === 'string') return { phase: 'Skipped', message: decided }
    if (typeof decided === 'object' && 'failed' in decided) return { phase: 'Failed', message: decided.failed }
    if (typeof decided === 'object') return { phase: 'Pending', message: WHEN_DEFERRED, wakeSeconds: 1 }
    return decided ? true : waiting(unfinished())
  }
  if (failed.length > 0) return { phase: 'Skipped', message: `not started: ${failed.join(', ')} failed` }
  // A dependency its own `when` skipped is no reason to stop (Argo's rule); a failed or omitted one is.
  const ends = new Map(flow.dependencies.map(d => [d, steps.certain(d)]))
  const blockedBy = flow.dependencies.filter(d => ends.get(d) === 'Failed' || ends.get(d) === 'Omitted')
  if (blockedBy.length > 0) {
    const why = [...new Set(blockedBy)].map(d => `${d} (${ends.get(d) === 'Failed' ? 'failed' : 'skipped'})`)
    return { phase: 'Skipped', message: `not started: depends on ${why.join(', ')}` }
  }
  const open = flow.dependencies.filter(d => ends.get(d) === undefined)
  return open.length === 0 ? true : waiting(open)
}

/** A retry of a failed attempt: created once its backoff has passed, else due then. */
function decideRetry (
  sync: FlowSync,
  state: FlowState,
  record: (phase: JobRecord['phase'], message: string) => JobRecord
): { record: JobRecord, create: boolean, wakeSeconds?: number } {
  const retry = state.flow.retry as RetryPolicy
  const number = retriesUsed(state.earlier) + 1
  const due = retryDueAt(retry, number, state.retryOf as JobRecord)
  const of = `retry ${number} of ${retry.limit}`
  const nowMs = sync.now.getTime()
  if (due <= nowMs) return { record: record('Pending', `creating the Job (${of})`), create: true }
  const message = `${of} starts at ${timestamp(new Date(due))}, after the backoff`
  return { record: record('Pending', message), create: false, wakeSeconds: Math.ceil((due - nowMs) / 1000) }
}

/** How a flow whose `depends` is false is recorded (Argo's Omitted). */
export const DEPENDS_FALSE = 'not started: its depends is false'
