// The shape of a simulated JobFlow: its steps with their dependencies and `when`, read from the
// spec as written (an invalid spec still has a shape to show) or, when it runs JobFlowTemplates the
// tools can read, with its template groups expanded as the hook expands them (flow-groups.ts), and
// each step's attempts from its records (flow-records.ts). The simulator's table, timeline and
// pictures (Mermaid, SVG) and the plugin's tree and live picture all draw from here.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { attemptJobName } from '../formats/jobflow-status.js'
import { groupPhase, stepOfFlowName } from '../formats/jobflow-status.js'
import { parseDepends } from '../controllers/jobflow/depends.js'
import type { FlowSpec } from '../controllers/jobflow/spec.js'
import { localName } from '../controllers/jobflow/template-ref.js'
import { JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import { flowRecords, specSteps, type FlowRecord } from './flow-records.js'
import { expandedSteps, simulatedTemplates, type FlowTemplates } from './flow-groups.js'
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
  /**
   * A template group: the JobFlowTemplate it runs. Its steps follow it, each with `group` its name,
   * when its template was at hand.
   */
  template?: string
  /** A step of a template group (`linux.compile`): the group's name (`linux`). */
  group?: string
  /** A fan-out step (`forEach`, `withParam`): how many items its records hold so far. */
  items?: number
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

/** What a step is, before its phase: read from the spec as written, or from an expanded one. */
type StepShape = Omit<FlowStep, 'phase'>

/**
 * A step as the spec writes it (dependencies from its `depends` when it has one); a template
 * group's steps are not known here, but it is still a group (it runs no Job of its own).
 */
function writtenShape (f: Record<string, unknown>): StepShape {
  const parsed = typeof f.depends === 'string' ? parseDepends(f.depends) : undefined
  const depends = typeof parsed === 'object' ? parsed : undefined
  const dependencies = depends?.steps ?? (Array.isArray(f.dependencies) ? f.dependencies.map(String) : [])
  const when = typeof f.when === 'string' ? f.when : undefined
  const template = isRecord(f.flowTemplateRef) && typeof f.flowTemplateRef.name === 'string'
    ? f.flowTemplateRef.name
    : undefined
  return {
    name: f.name as string,
    dependencies,
    ...(when !== undefined ? { when } : {}),
    ...(depends !== undefined ? { depends: depends.source } : {}),
    ...(f.exit === true ? { exit: true } : {}),
    ...(isRecord(f.approval) ? { approval: true } : {}),
    ...(template !== undefined ? { template } : {})
  }
}

/** A step of a spec with its templates expanded: a group names its template, a group's step its group. */
function expandedShape (f: FlowSpec): StepShape {
  return {
    name: f.name,
    dependencies: f.dependencies,
    ...(f.when !== undefined ? { when: f.when } : {}),
    ...(f.depends !== undefined ? { depends: f.depends.source } : {}),
    ...(f.exit === true ? { exit: true } : {}),
    ...(f.approval !== undefined ? { approval: true } : {}),
    ...(f.group !== undefined ? { template: f.group.template } : {}),
    ...(f.scope !== undefined ? { group: f.scope } : {})
  }
}

/**
 * Every step name a command may be given: the spec's, and a template group's steps, which only
 * the records name when the templates were not read.
 */
export function knownStepNames (flow: KubeObject): string[] {
  return [...new Set([...flowSteps(flow).map(s => s.name), ...flowRecords(flow).map(r => stepOfFlowName(r.name))])]
}

/**
 * The steps of a JobFlow's spec, in spec order, with the phase of each one's last attempt; with
 * the `templates` it runs, each template group followed by its steps, in the order of its records.
 */
export function flowSteps (flow: KubeObject, templates: FlowTemplates = new Map()): FlowStep[] {
  const records = flowRecords(flow)
  const phases = stepPhases(records)
  const items = itemCounts(records)
  const expanded = expandedSteps(flow, templates)
  const shapes = expanded === undefined ? specSteps(flow).map(writtenShape) : expanded.map(expandedShape)
  return shapes.map(shape => ({
    ...shape,
    phase: phases.get(shape.name) ?? 'Pending',
    ...items.has(shape.name) ? { items: items.get(shape.name) } : {}
  }))
}

/** How many items each fan-out step's records name (`shard[0]`, `shard[1]`: 2). */
function itemCounts (records: readonly FlowRecord[]): Map<string, number> {
  const names = new Map<string, Set<string>>()
  for (const { name } of records) {
    const step = stepOfFlowName(name)
    if (step !== name) names.set(step, (names.get(step) ?? new Set()).add(name))
  }
  return new Map([...names].map(([step, items]) => [step, items.size]))
}

/** The steps of each template group, by the group's name: its own, not those of a group inside it. */
export function groupMembers (steps: readonly FlowStep[]): Map<string, FlowStep[]> {
  const members = new Map<string, FlowStep[]>()
  for (const step of steps) {
    if (step.group !== undefined) members.set(step.group, [...members.get(step.group) ?? [], step])
  }
  return members
}

/** The steps inside no template group of `steps`: the flow's own, whose groups hold the others. */
export function outsideGroups (steps: readonly FlowStep[]): FlowStep[] {
  const names = new Set(steps.map(step => step.name))
  return steps.filter(step => step.group === undefined || !names.has(step.group))
}

/** A step's name as its group's steps read it (`compile` for `linux.compile`), else its name. */
export function shortName (step: Pick<FlowStep, 'name' | 'group'>): string {
  return localName(step.name, step.group)
}

/**
 * The steps of spec.flows that no other one depends on: the DAG's last steps, after which the exit
 * steps run.
 */
export function dagLeaves (steps: FlowStep[]): FlowStep[] {
  // A template group's steps end with it: the flow's last steps are among its own.
  const dag = outsideGroups(steps).filter(step => step.exit !== true)
  const needed = new Set(dag.flatMap(step => step.dependencies))
  return dag.filter(step => !needed.has(step.name))
}

/**
 * What a JOB column says of a step's attempt: its Job, but for a step that runs none (its
 * record's Job name is only a name): an approval step, a template group (its steps run the Jobs).
 */
export function jobCell (step: Pick<FlowStep, 'approval' | 'template'>, job: string): string {
  if (step.approval === true) return '(approval)'
  return step.template !== undefined ? '(group)' : job
}

/** Past this many dependencies a cell names the first two and counts the rest, to stay readable. */
const NAMED_DEPENDENCIES = 3

/**
 * A step's dependencies as a table cell: `job1, job2`, `a, b, +4 more`, `-` for none, or its
 * `depends` expression; an exit step's begin `onExit`. A template group's step names them as its
 * template does (`compile`, not `linux.compile`), as its `depends` and `when` do.
 */
export function dependenciesText (step: Pick<FlowStep, 'dependencies' | 'depends' | 'exit' | 'group'>): string {
  // An exit step runs after the whole DAG: said first, before the exit steps it waits for.
  if (step.exit === true) {
    const rest = dependenciesText({ dependencies: step.dependencies, depends: step.depends })
    return rest === '-' ? 'onExit' : `onExit: ${rest}`
  }
  if (step.depends !== undefined) return step.depends
  const all = step.dependencies.map(name => localName(name, step.group))
  if (all.length === 0) return '-'
  if (all.length <= NAMED_DEPENDENCIES) return all.join(', ')
  return `${all.slice(0, 2).join(', ')}, +${all.length - 2} more`
}

/** Every JobFlow of the simulation with its steps and their attempts in simulated seconds. */
export function flowShapes (sim: Simulator): FlowShape[] {
  return sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' })
    .map(flow => shapeOf(flow, value => sim.secondsAt(value), simulatedTemplates(sim, flow)))
}

/**
 * A live JobFlow's shape, its attempts in whole seconds since the flow started (else since its
 * first attempt); `templates` are those it pinned.
 */
export function liveFlowShape (flow: KubeObject, templates: FlowTemplates = new Map()): FlowShape {
  const status = statusOf(flow)
  const starts = flowRecords(flow).flatMap(r => r.startTime === undefined ? [] : [Date.parse(r.startTime)])
  const origin = typeof status.startTime === 'string' ? Date.parse(status.startTime) : Math.min(...starts)
  return shapeOf(flow, value => Math.round((Date.parse(value) - origin) / 1000), templates)
}

function shapeOf (flow: KubeObject, secondsAt: (time: string) => number, templates: FlowTemplates): FlowShape {
  const seconds = (value: string | undefined): number | undefined =>
    value === undefined ? undefined : secondsAt(value)
  const steps = flowSteps(flow, templates)
  const attempts = flowRecords(flow, steps.map(step => step.name)).map(r => {
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
    steps,
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
    for (const step of flowSteps(flow, simulatedTemplates(sim, flow))) {
      if (step.dependencies.length === 0) continue
      const job = attemptJobName(flow.metadata.name, step.name, 1)
      const when = step.when !== undefined ? ' (when held)' : ''
      notes.set(`${flow.metadata.namespace ?? 'default'}/${job}`, `${step.name} after ${dependenciesText(step)}${when}`)
    }
  }
  return notes
}
