// The shape of a simulated JobFlow: its steps with their dependencies and `when`, read from the
// spec as written (an invalid spec still has a shape to show), and each step's attempts from its
// records (flow-records.ts). The simulator's table, timeline and pictures (Mermaid, SVG) and the
// plugin's live picture all draw from here.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { attemptJobName } from '../formats/jobflow-status.js'
import { groupPhase, stepOfFlowName } from '../formats/jobflow-status.js'
import { parseDepends } from '../controllers/jobflow/depends.js'
import { JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import { flowRecords, specSteps, type FlowRecord } from './flow-records.js'
import type { Simulator } from '../simulator/simulator.js'

export interface FlowStep {
  name: string
  dependencies: string[]
  /** The CEL expression the step runs under, if it has one. */
  when?: string
  /** Its Argo `depends` expression, if it has one (its dependencies are the steps it names). */
  depends?: string
  /** The phase of the step's last attempt at the end ('Pending' when it has no record). */
  phase: string
  /** A step of spec.onExit: it starts once every step of spec.flows has finished. */
  exit?: true
  /** An approval step: it runs no Job and waits for a person. */
  approval?: true
}

/** One attempt of a step, in simulated seconds (`end` undefined: still running at the end). */
export interface StepAttempt {
  step: string
  jobName: string
  phase: string
  start?: number
  end?: number
}

export interface FlowShape {
  namespace: string
  name: string
  phase: string
  steps: FlowStep[]
  attempts: StepAttempt[]
}

function statusOf (object: KubeObject): Record<string, unknown> {
  return isRecord(object.status) ? object.status : {}
}

/**
 * Each step's phase from its last records: a fan-out step's from its items', by the hook's own
 * rule (groupPhase).
 */
function stepPhases (records: FlowRecord[]): Map<string, string> {
  const byStep = new Map<string, Map<string, FlowRecord>>()
  for (const r of records) {
    const step = stepOfFlowName(r.name)
    byStep.set(step, (byStep.get(step) ?? new Map<string, FlowRecord>()).set(r.name, r))
  }
  const phases = new Map<string, string>()
  for (const [step, items] of byStep) {
    phases.set(step, items.size === 1 ? [...items.values()][0]?.phase as string : groupPhase([...items.values()]))
  }
  return phases
}

/** The steps of a JobFlow's spec, in spec order, with the phase of each one's last attempt. */
export function flowSteps (flow: KubeObject): FlowStep[] {
  const phases = stepPhases(flowRecords(flow))
  return specSteps(flow).map(f => {
    const name = f.name as string
    const parsed = typeof f.depends === 'string' ? parseDepends(f.depends) : undefined
    const depends = typeof parsed === 'object' ? parsed : undefined
    const dependencies = depends?.steps ?? (Array.isArray(f.dependencies) ? f.dependencies.map(String) : [])
    const when = typeof f.when === 'string' ? f.when : undefined
    return {
      name,
      dependencies,
      ...(when !== undefined ? { when } : {}),
      ...(depends !== undefined ? { depends: depends.source } : {}),
      phase: phases.get(name) ?? 'Pending',
      ...(f.exit === true ? { exit: true } : {}),
      ...(isRecord(f.approval) ? { approval: true } : {})
    }
  })
}

/**
 * The steps of spec.flows that no other one depends on: the DAG's last steps, after which the exit
 * steps run.
 */
export function dagLeaves (steps: FlowStep[]): FlowStep[] {
  const dag = steps.filter(step => step.exit !== true)
  const needed = new Set(dag.flatMap(step => step.dependencies))
  return dag.filter(step => !needed.has(step.name))
}

/** Past this many dependencies a cell names the first two and counts the rest, to stay readable. */
const NAMED_DEPENDENCIES = 3

/**
 * A step's dependencies as a table cell: `job1, job2`, `a, b, +4 more`, `-` for none, or its
 * `depends` expression; an exit step's begin `onExit`.
 */
export function dependenciesText (step: Pick<FlowStep, 'dependencies' | 'depends' | 'exit'>): string {
  // An exit step runs after the whole DAG: said first, before the exit steps it waits for.
  if (step.exit === true) {
    const rest = dependenciesText({ dependencies: step.dependencies, depends: step.depends })
    return rest === '-' ? 'onExit' : `onExit: ${rest}`
  }
  if (step.depends !== undefined) return step.depends
  const all = step.dependencies
  if (all.length === 0) return '-'
  if (all.length <= NAMED_DEPENDENCIES) return all.join(', ')
  return `${all.slice(0, 2).join(', ')}, +${all.length - 2} more`
}

/** Every JobFlow of the simulation with its steps and their attempts in simulated seconds. */
export function flowShapes (sim: Simulator): FlowShape[] {
  return sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' })
    .map(flow => shapeOf(flow, value => sim.secondsAt(value)))
}

/** A live JobFlow's shape, its attempts in whole seconds since the flow started (else since its first attempt). */
export function liveFlowShape (flow: KubeObject): FlowShape {
  const status = statusOf(flow)
  const starts = flowRecords(flow).flatMap(r => r.startTime === undefined ? [] : [Date.parse(r.startTime)])
  const origin = typeof status.startTime === 'string' ? Date.parse(status.startTime) : Math.min(...starts)
  return shapeOf(flow, value => Math.round((Date.parse(value) - origin) / 1000))
}

function shapeOf (flow: KubeObject, secondsAt: (time: string) => number): FlowShape {
  const seconds = (value: string | undefined): number | undefined =>
    value === undefined ? undefined : secondsAt(value)
  const attempts = flowRecords(flow).map(r => {
    const start = seconds(r.startTime)
    const end = seconds(r.completionTime)
    return {
      step: r.name,
      jobName: r.jobName ?? '',
      phase: r.phase,
      ...(start !== undefined ? { start } : {}),
      ...(end !== undefined ? { end } : {})
    }
  })
  const phase = statusOf(flow).phase
  return {
    namespace: flow.metadata.namespace ?? 'default',
    name: flow.metadata.name,
    phase: typeof phase === 'string' ? phase : 'Pending',
    steps: flowSteps(flow),
    attempts
  }
}

/**
 * What the timeline says when a step's first Job is created: `job3 after job1, job2` (and that its
 * `when` held), by `namespace/Job name`. Steps without dependencies say nothing; retries neither.
 */
export function creationNotes (sim: Simulator): Map<string, string> {
  const notes = new Map<string, string>()
  for (const flow of sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' })) {
    for (const step of flowSteps(flow)) {
      if (step.dependencies.length === 0) continue
      const job = attemptJobName(flow.metadata.name, step.name, 1)
      const when = step.when !== undefined ? ' (when held)' : ''
      notes.set(`${flow.metadata.namespace ?? 'default'}/${job}`, `${step.name} after ${dependenciesText(step)}${when}`)
    }
  }
  return notes
}
