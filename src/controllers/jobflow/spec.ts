// Reading a JobFlow's spec. Everything that makes it invalid is collected, not thrown: the hook
// reports it in status and keeps every child as it is (law 2).
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { Volume, VolumeMount } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { isDnsLabel } from '../../k8s/names.js'
import { parseGlobalParams, objectList, type GlobalParams } from '../common/global-params.js'
import { parseInlineScripts, parseScriptRef, type ScriptRef } from '../../scripts/configmap.js'
import { orderByDependencies } from './dag.js'
import { jobSpecProblems as podSpecProblems } from '../common/job-spec.js'
import { whenProblem } from './when.js'
import { MAX_ITEMS } from '../../formats/jobflow-status.js'
import { dependsValue, parseDepends, type DependsExpression } from './depends.js'
import { optionalWholeNumber, type Parsed } from '../common/parsed.js'
import { parseArguments, unknownArguments, type FlowArgument } from './arguments.js'
import { attemptNameClashes, parseRetry, type RetryPolicy } from './attempts.js'
import { optionalLabelValue, parseQueue, type QueueSpec } from '../common/queue.js'
import { parseApproval, type ApprovalSpec } from './approval.js'
import { parseTargets, type Targets } from './targets.js'
import {
  groupOrderingNodes, parseFlowTemplateRef, type FlowTemplateRef, type TemplateGroup
} from './template-ref.js'

export const JOBTEMPLATE_API_VERSION = 'jobhooks.io/v1alpha1'
export { MAX_ITEMS }

export interface FlowSpec {
  name: string
  dependencies: string[]
  jobTemplate?: JobSpec
  jobTemplateRef?: string
  shareVolumeMounts: VolumeMount[]
  script?: ScriptRef
  /** A JSON merge patch of the JobSpec (the JobTemplate's or the inline one), before the globals. */
  patch?: Record<string, unknown>
  /** A CEL expression over the dependencies' outcomes: the flow runs only when it holds. */
  when?: string
  /**
   * Argo's dependency expression (depends.ts), instead of `dependencies`: the steps it names are
   * then the flow's dependencies.
   */
  depends?: DependsExpression
  /** A failed Job is tried again as a new Job, this often, after a growing wait. */
  retry?: RetryPolicy
  /** The Kueue LocalQueue of this flow's Jobs, instead of the JobFlow's. */
  queueName?: string
  /** The container whose termination message is the flow's output (else the pod's first). */
  outputFrom?: string
  /** Fan-out (fanout.ts): one Job per item of this list (any JSON but null)... */
  forEach?: unknown[]
  /** ...or of this dependency's output, a JSON array... */
  forEachFrom?: string
  /** ...at most this many running at once. */
  parallelism?: number
  /** A step of `spec.onExit` (exit.ts): it starts once the DAG has finished. */
  exit?: true
  /** A step that runs no Job and waits for a person to approve it (approval.ts). */
  approval?: ApprovalSpec
  /** A step that runs a JobFlowTemplate's DAG as a group of steps (flow-templates.ts). */
  flowTemplateRef?: FlowTemplateRef
  /** Once templates are expanded, such a step: its template, and its own steps (`<step>.<inner>`). */
  group?: TemplateGroup
  /** Once templates are expanded, a step of a group: the group's name. */
  scope?: string
  /** A group's step: the arguments its Job and its `when` read (the flow's, then its template's). */
  args?: FlowArgument[]
}

export interface JobFlowSpec extends QueueSpec {
  /** Flows in spec order; the dependency graph is checked to be a DAG. */
  flows: FlowSpec[]
  /** `spec.onExit`: the exit steps, in spec order (exit.ts). */
  onExit: FlowSpec[]
  globalParams: GlobalParams
  shareVolumes: Volume[]
  shareVolumeMounts: VolumeMount[]
  scripts: Record<string, string>
  /** Seconds after it finished that the JobFlow deletes itself (and so its Jobs). */
  ttlSecondsAfterFinished?: number
  /** `spec.parallelism`: at most this many of the flow's Jobs unfinished at once, items included. */
  parallelism?: number
  /** `spec.activeDeadlineSeconds`: the whole flow's deadline (deadline.ts). */
  activeDeadlineSeconds?: number
  /** `spec.arguments`: every container's `JOBHOOKS_ARG_<NAME>`, a `when`'s `args.<name>`. */
  arguments: FlowArgument[]
  /** After a failure: start nothing more (FailFast), or every flow that does not depend on it (Continue). */
  failurePolicy: FailurePolicy
  /** Start no Job, and suspend the running ones, until it is false again. */
  suspend: boolean
  /** `spec.targets`: only these steps and what they need run (targets.ts); unset, every step. */
  targets?: Targets
}

/** The most exit steps a JobFlow has (the CRD says the same). */
export const MAX_EXIT_STEPS = 50

export type FailurePolicy = 'FailFast' | 'Continue'
const FAILURE_POLICIES: readonly string[] = ['FailFast', 'Continue']

export type { Parsed }

export function parseJobFlowSpec (parent: KubeObject): Parsed<JobFlowSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is missing'] }
  const problems: string[] = []

  const seen = new Set<string>()
  const hasFlows = Array.isArray(spec.flows) && spec.flows.length > 0
  if (!hasFlows) problems.push('spec.flows must list at least one flow')
  const flows = hasFlows ? parseSteps(spec.flows, 'flows', seen, problems) : []
  const onExit = parseSteps(spec.onExit, 'onExit', seen, problems)
  const targets = parseTargets(spec.targets, flows, onExit, problems)

  const globalParams = parseGlobalParams(spec.globalParams, problems)
  const shareVolumes = objectList<Volume>(spec.shareVolumes, 'spec.shareVolumes', problems)
  const shareVolumeMounts = objectList<VolumeMount>(spec.shareVolumeMounts, 'spec.shareVolumeMounts', problems)
  const scripts = parseInlineScripts(spec.scripts)
  if (Array.isArray(scripts)) problems.push(...scripts)
  const limits = parseRunLimits(spec, problems)
  const args = parseArguments(spec.arguments, problems)
  const failurePolicy = spec.failurePolicy ?? 'FailFast'
  if (typeof failurePolicy !== 'string' || !FAILURE_POLICIES.includes(failurePolicy)) {
    problems.push(
    `spec.failurePolicy must be FailFast or Continue, not ${JSON.stringify(failurePolicy)}`
    )
  }
  const suspend = spec.suspend ?? false
  if (typeof suspend !== 'boolean') problems.push(`spec.suspend must be true or false, not ${JSON.stringify(suspend)}`)
  const queue = parseQueue(spec, 'spec', problems)

  const steps = [...flows, ...onExit]
  problems.push(...stepProblems(flows, onExit), ...unknownArguments(steps, args))
  if (problems.length > 0) return { ok: false, problems }
  const graphProblems = orderByDependencies(steps).problems
  if (graphProblems.length > 0) return { ok: false, problems: graphProblems }
  return {
    ok: true,
    value: {
      flows,
      onExit,
      globalParams,
      shareVolumes,
      shareVolumeMounts,
      scripts: scripts as Record<string, string>,
      failurePolicy: failurePolicy as FailurePolicy,
      suspend: suspend === true,
      arguments: args,
      ...queue,
      ...limits,
      ...(targets !== undefined ? { targets } : {})
    }
  }
}

/** What is wrong with a DAG's steps taken together (a JobFlow's, a JobFlowTemplate's), but its graph. */
export function stepProblems (flows: readonly FlowSpec[], onExit: readonly FlowSpec[]): string[] {
  const steps = [...flows, ...onExit]
  return [...attemptNameClashes(steps.map(f => f.name)), ...itemNameClashes(steps), ...itemlessReaders(steps),
    ...exitDependencyProblems(flows, onExit)]
}

/**
 * The steps of `spec.flows` or `spec.onExit`, each name unique across both (`seen`): a step's Job
 * is named after it either way. Exit steps are marked so.
 */
export function parseSteps (
  raw: unknown, field: 'flows' | 'onExit', seen: Set<string>, problems: string[]
): FlowSpec[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) {
    problems.push(`spec.${field} must be a list of steps`)
    return []
  }
  if (field === 'onExit' && raw.length > MAX_EXIT_STEPS) {
    problems.push(`spec.onExit has ${raw.length} steps, more than ${MAX_EXIT_STEPS}`)
  }
  const steps: FlowSpec[] = []
  raw.forEach((entry, i) => {
    const step = parseFlow(entry, `spec.${field}[${i}]`, problems, field === 'onExit')
    if (step === undefined) return
    if (seen.has(step.name)) problems.push(`duplicate flow name ${JSON.stringify(step.name)}`)
    seen.add(step.name)
    steps.push(step)
  })
  return steps
}

/**
 * The steps an unparsed spec writes, `flows` then `onExit` (each of those marked `exit: true`),
 * every one an object: what customize, the answer's size estimate and the CLI read before (or
 * without) parsing.
 */
export function writtenSteps (spec: unknown): Array<Record<string, unknown>> {
  const list = (field: string): Array<Record<string, unknown>> =>
    isRecord(spec) && Array.isArray(spec[field]) ? spec[field].filter(isRecord) : []
  return [...list('flows'), ...list('onExit').map(step => ({ ...step, exit: true }))]
}

/** The steps of a spec in the order a sync walks them: the DAG's in dependency order, then the exit steps'. */
export function stepsInOrder (spec: Pick<JobFlowSpec, 'flows' | 'onExit'>): FlowSpec[] {
  return [...ordered(spec.flows), ...ordered(spec.onExit)]
}

/** Steps in dependency order, a template group's (template-ref.ts) between the group and its dependants. */
function ordered (steps: FlowSpec[]): FlowSpec[] {
  const grouped = groupOrderingNodes(steps)
  return grouped === undefined ? orderByDependencies(steps).order : orderByDependencies(grouped).order.map(n => n.step)
}

/** Every step of a spec, the DAG's then the exit steps', in spec order. */
export function allSteps (spec: Pick<JobFlowSpec, 'flows' | 'onExit'>): FlowSpec[] {
  return spec.onExit.length === 0 ? spec.flows : [...spec.flows, ...spec.onExit]
}

/** Exit steps naming a step of the DAG: they run after it whatever it did, so the name would mean nothing. */
function exitDependencyProblems (flows: readonly FlowSpec[], onExit: readonly FlowSpec[]): string[] {
  const dag = new Set(flows.map(f => f.name))
  return onExit.flatMap(step => step.dependencies.filter(d => dag.has(d)).map(d =>
    `exit step ${JSON.stringify(step.name)} depends on ${JSON.stringify(d)}, a step of spec.flows: exit steps ` +
    'start once every step of spec.flows has finished, and may depend only on other exit steps ' +
    '(read the outcome from flow.phase or JOBHOOKS_FLOW_FAILURES)'))
}

/** Whether a flow as written fans out. */
function isFanOut (raw: Record<string, unknown>): boolean {
  const given = (value: unknown): boolean => value !== undefined && value !== null
  return given(raw.forEach) || given(raw.forEachFrom)
}

/** `forEach` or `forEachFrom` (one of its dependencies), and `parallelism` with either. */
function parseFanOut (raw: Record<string, unknown>, flow: FlowSpec, at: string, problems: string[]): void {
  const { forEach, forEachFrom, parallelism } = raw
  const hasList = forEach !== undefined && forEach !== null
  const hasFrom = forEachFrom !== undefined && forEachFrom !== null
  if (hasList && hasFrom) problems.push(`${at}: set at most one of forEach and forEachFrom`)
  if (hasList) {
    const problem = itemsProblem(forEach)
    if (problem !== undefined) problems.push(`${at}: forEach ${problem}`)
    else flow.forEach = forEach as unknown[]
  }
  if (hasFrom) {
    if (typeof forEachFrom !== 'string' || !flow.dependencies.includes(forEachFrom)) {
      problems.push(`${at}: forEachFrom must name one of its dependencies, not ${JSON.stringify(forEachFrom)}`)
    } else flow.forEachFrom = forEachFrom
  }
  if (parallelism === undefined || parallelism === null) return
  if (!hasList && !hasFrom) problems.push(`${at}: parallelism needs forEach or forEachFrom`)
  const value = optionalWholeNumber(parallelism, `${at}: parallelism`, 1, MAX_ITEMS, problems)
  if (value !== undefined) flow.parallelism = value
}

/**
 * What is wrong with a list of items, or undefined: at least one, at most MAX_ITEMS, any JSON
 * but null (an item becomes `JOBHOOKS_ITEM`, and null has no text a step could tell from "null").
 */
export function itemsProblem (items: unknown): string | undefined {
  if (!Array.isArray(items)) return 'must be a list of items'
  if (items.length === 0) return 'must list at least one item'
  if (items.length > MAX_ITEMS) return `has ${items.length} items, more than ${MAX_ITEMS}`
  const nullAt = items.findIndex(i => i === null || i === undefined)
  return nullAt >= 0 ? `item ${nullAt} is null` : undefined
}

/** A flow named like the Jobs of another's items (`<step>-item-<n>`): the two would share Job names. */
function itemNameClashes (flows: readonly FlowSpec[]): string[] {
  const fanOut = new Set(flows.filter(f => f.forEach !== undefined || f.forEachFrom !== undefined).map(f => f.name))
  return flows.flatMap(flow => {
    const match = /^(.+)-item-[0-9]+(-[0-9]+)?$/.exec(flow.name)
    if (match === null || !fanOut.has(match[1] as string)) return []
    return [`flow ${JSON.stringify(flow.name)} has the Job name of an item of flow ${JSON.stringify(match[1])}: ` +
      'rename one of them']
  })
}

/** The numbers that bound a run: its TTL, its Jobs at once, its deadline; each only when set. */
function parseRunLimits (
  spec: Record<string, unknown>,
  problems: string[]
): Pick<JobFlowSpec, 'ttlSecondsAfterFinished' | 'parallelism' | 'activeDeadlineSeconds'> {
  const number = (field: string, min: number): number | undefined =>
    optionalWholeNumber(spec[field], `spec.${field}`, min, undefined, problems)
  const limits = {
    ttlSecondsAfterFinished: number('ttlSecondsAfterFinished', 0),
    parallelism: number('parallelism', 1),
    activeDeadlineSeconds: number('activeDeadlineSeconds', 1)
  }
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined))
}

/**
 * A `forEachFrom` step whose `depends` can hold only when its source did not succeed: a plain
 * step has an output only once it succeeded, so such a step could never read its items (it would
 * fail when started, or be skipped). Decided with the source succeeded and every other step
 * unknown (depends.ts dependsValue). A fan-out source is left alone: its items' outputs are read
 * however it ended.
 */
function itemlessReaders (flows: readonly FlowSpec[]): string[] {
  const fanOut = new Set(flows.filter(f => f.forEach !== undefined || f.forEachFrom !== undefined).map(f => f.name))
  return flows.flatMap(flow => {
    const from = flow.forEachFrom
    if (from === undefined || flow.depends === undefined || fanOut.has(from)) return []
    const value = dependsValue(flow.depends.tree, step => (step === from ? { end: 'Succeeded' } : undefined))
    if (value !== false) return []
    return [`flow ${JSON.stringify(flow.name)}: depends ${JSON.stringify(flow.depends.source)} holds only when ` +
      `${from} did not succeed, so forEachFrom ${from} could never read items (${from} has an output only ` +
      'once it succeeded)']
  })
}

/**
 * What is wrong with a flow's Job spec (inline, or its JobTemplate's, patched): what the API
 * server would refuse (common/job-spec.ts), and a container the flow names (`outputFrom`, its
 * script's) that its pod does not have. Checked for every flow still to start, before any Job of
 * the sync is built: a JobTemplate is only known then.
 */
export function jobSpecProblems (
  spec: JobSpec,
  at: string,
  flow?: Pick<FlowSpec, 'outputFrom' | 'script'>
): string[] {
  const problems = podSpecProblems(spec, at)
  if (problems.length > 0 || flow === undefined) return problems
  const containers = (spec.template.spec?.containers ?? []).map(c => c.name)
  if (flow.outputFrom !== undefined && !containers.includes(flow.outputFrom)) {
    problems.push(`${at}: outputFrom names no container of its pod: ${flow.outputFrom}`)
  }
  const script = flow.script
  if (script?.container !== undefined && !containers.includes(script.container)) {
    problems.push(`${at}: script ${script.name}: no container ${JSON.stringify(script.container)} to run it in`)
  }
  return problems
}

/** `depends`, exclusive with `dependencies`: the steps it names become the flow's dependencies. */
function parseDependsField (raw: Record<string, unknown>, flow: FlowSpec, at: string, problems: string[]): void {
  if (raw.depends === undefined || raw.depends === null) return
  if (typeof raw.depends !== 'string') {
    problems.push(`${at}: depends must be an expression (a string), e.g. "a && b.Failed"`)
    return
  }
  if (raw.dependencies !== undefined && raw.dependencies !== null) {
    problems.push(`${at}: set at most one of dependencies and depends`)
    return
  }
  const parsed = parseDepends(raw.depends)
  if (typeof parsed === 'string') {
    problems.push(`${at}: ${parsed}`)
    return
  }
  flow.depends = parsed
  flow.dependencies = parsed.steps
}

/** A flow's Job spec: exactly one of `jobTemplate` (inline) and `jobTemplateRef` (a JobTemplate's name). */
function parseTemplate (raw: Record<string, unknown>, flow: FlowSpec, at: string, problems: string[]): void {
  const hasTemplate = raw.jobTemplate !== undefined && raw.jobTemplate !== null
  const hasRef = raw.jobTemplateRef !== undefined && raw.jobTemplateRef !== null && raw.jobTemplateRef !== ''
  if (hasTemplate === hasRef) {
    problems.push(`${at}: set exactly one of jobTemplate and jobTemplateRef`)
  } else if (hasTemplate) {
    if (isRecord(raw.jobTemplate)) flow.jobTemplate = raw.jobTemplate as unknown as JobSpec
    else problems.push(`${at}: jobTemplate must be a Job spec`)
  } else if (typeof raw.jobTemplateRef === 'string') {
    flow.jobTemplateRef = raw.jobTemplateRef
  } else {
    problems.push(`${at}: jobTemplateRef must be the name of a JobTemplate`)
  }
}

/** A step's `when`, checked for the step it is (a fan-out step's reads `item`, an exit step's `flow`). */
function parseWhen (raw: Record<string, unknown>, flow: FlowSpec, at: string, problems: string[]): void {
  if (raw.when === undefined || raw.when === null) return
  const problem = typeof raw.when === 'string'
    ? whenProblem(raw.when, flow.dependencies, at, { fanOut: isFanOut(raw), exit: flow.exit === true })
    : `${at}: when must be a CEL expression (a string)`
  if (problem !== undefined) problems.push(problem)
  else flow.when = raw.when as string
}

function parseFlow (raw: unknown, where: string, problems: string[], exit = false): FlowSpec | undefined {
  if (!isRecord(raw)) {
    problems.push(`${where} must be an object`)
    return undefined
  }
  const { name } = raw
  if (typeof name !== 'string' || !isDnsLabel(name)) {
    problems.push(`${where}: name ${JSON.stringify(name)} must be a lowercase RFC 1123 label ` +
      '(a-z, 0-9, \'-\', at most 63 characters): it becomes part of a Job name')
    return undefined
  }
  const at = `${exit ? 'exit step' : 'flow'} ${JSON.stringify(name)}`
  const flow: FlowSpec = {
    name,
    dependencies: [],
    shareVolumeMounts: objectList<VolumeMount>(raw.shareVolumeMounts, `${at}: shareVolumeMounts`, problems),
    ...(exit ? { exit: true } : {})
  }

  if (raw.dependencies !== undefined && raw.dependencies !== null) {
    const { dependencies } = raw
    if (Array.isArray(dependencies) && dependencies.every(d => typeof d === 'string')) flow.dependencies = dependencies
    else problems.push(`${at}: dependencies must be a list of flow names`)
  }
  parseDependsField(raw, flow, at, problems)
  if (raw.flowTemplateRef !== undefined && raw.flowTemplateRef !== null) {
    const ref = parseFlowTemplateRef(raw, at, problems, exit)
    if (ref !== undefined) flow.flowTemplateRef = ref
  } else if (raw.approval === undefined || raw.approval === null) parseTemplate(raw, flow, at, problems)
  else {
    const approval = parseApproval(raw, at, problems)
    if (approval !== undefined) flow.approval = approval
  }

  parseWhen(raw, flow, at, problems)

  if (raw.patch !== undefined && raw.patch !== null) {
    if (isRecord(raw.patch)) flow.patch = raw.patch
    else problems.push(`${at}: patch must be an object: a JSON merge patch of the Job spec (RFC 7386)`)
  }

  const retry = parseRetry(raw.retry, at, problems)
  if (retry !== undefined) flow.retry = retry
  const queueName = optionalLabelValue(raw.queueName, `${at}: queueName`, problems)
  if (queueName !== undefined) flow.queueName = queueName
  parseFanOut(raw, flow, at, problems)
  if (raw.outputFrom !== undefined && raw.outputFrom !== null) {
    if (typeof raw.outputFrom === 'string' && isDnsLabel(raw.outputFrom)) flow.outputFrom = raw.outputFrom
    else problems.push(`${at}: outputFrom must name a container of its pod, not ${JSON.stringify(raw.outputFrom)}`)
  }

  if (raw.script !== undefined && raw.script !== null) {
    const script = parseScriptRef(raw.script, at)
    if (typeof script === 'string') problems.push(script)
    else flow.script = script
  }
  return flow
}
