// The size of a JobFlow's answer, from its spec, before any Job is built (common/answer-size.ts):
// each step's Job weighs its template, plus the globals and outputs copied into each container,
// plus its item; a fan-out step multiplies that by its items, and the DAG by its steps.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { SyncRequest } from '../../protocol/hooks.js'
import { isRecord, type KubeObject } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import {
  CHILD_OVERHEAD_BYTES, containerCount, copiesBytes, formatBytes, podParts, specBytes,
  type AnswerFigures, type ChildFigure, type KeptChildren
} from '../common/answer-size.js'
import { JOBTEMPLATE_API_VERSION, writtenSteps } from './spec.js'
import type { JobFlowPlan, PlannedFlow } from './fanout.js'
import { FLOW_LABEL } from './job.js'
import { argumentEnv } from './arguments.js'
import { itemText, stepOf } from './fanout.js'

/** What an item's value costs in each container: `JOBHOOKS_ITEM` and, for an object, a variable per key. */
const ITEM_ENV_FACTOR = 2
const ITEM_ENV_OVERHEAD = 64

/** What the estimate reads of a sync: the spec, the Jobs observed, and what each new Job is built from. */
export interface JobFlowSizing {
  spec: JobFlowPlan
  observedJobs: ReadonlyMap<string, KubeObject>
  /** The flows whose Job this sync creates. */
  creating: readonly PlannedFlow[]
  /** Each flow's JobSpec, for the flows still to start. */
  templates: ReadonlyMap<string, JobSpec>
  /** The outputs a flow's Job gets as env, by dependency. */
  outputsOf: (flow: PlannedFlow) => ReadonlyMap<string, string>
}

/** One step's Jobs: how many this sync creates, and what one weighs without its item. */
interface StepSize {
  count: number
  baseBytes: number
  largestItem: number
  /** Its Jobs are a fan-out's items. */
  fanOut: boolean
  containers: number
  templateBytes: number
  outputBytes: number
}

/** The new Jobs, grouped by step, and the observed Jobs of the steps whose weight is known. */
export function jobFlowAnswerFigures (sizing: JobFlowSizing): AnswerFigures {
  const steps = new Map<string, StepSize>()
  // The arguments are copied into every container, as the global env is: a template group's steps
  // carry their template's too, so the most any step carries is weighed for each.
  // One group's steps (and their items) share one list: each list is weighed once.
  const lists = new Set([sizing.spec.arguments, ...sizing.creating.flatMap(flow => (flow.args ? [flow.args] : []))])
  const argumentBytes = Math.max(...[...lists].map(args => specBytes(argumentEnv(args))))
  const globalEnvBytes = specBytes(sizing.spec.globalParams.env) + argumentBytes
  const templateBytes = new Map<JobSpec, number>()
  for (const flow of sizing.creating) {
    const template = sizing.templates.get(flow.name)
    if (template === undefined) continue
    const step = stepOf(flow)
    let size = steps.get(step)
    if (size === undefined) {
      size = stepSize(sizing, flow, template, templateBytes, globalEnvBytes)
      steps.set(step, size)
    }
    size.count++
    const itemBytes = flow.item === undefined
      ? 0
      : itemText(flow.item.value).length * ITEM_ENV_FACTOR + ITEM_ENV_OVERHEAD
    size.largestItem = Math.max(size.largestItem, itemBytes * size.containers)
  }
  const figures: ChildFigure[] = []
  const plain: StepSize[] = []
  for (const [step, size] of steps) {
    if (size.fanOut) figures.push(itemsFigure(step, size, globalEnvBytes))
    else plain.push(size)
  }
  if (plain.length > 0) figures.push(stepsFigure(plain, globalEnvBytes))
  return { figures, kept: keptJobs(sizing.observedJobs, steps) }
}

function stepSize (
  sizing: JobFlowSizing,
  flow: PlannedFlow,
  template: JobSpec,
  templateBytes: Map<JobSpec, number>,
  globalEnvBytes: number
): StepSize {
  // Items share their step's template: it is measured once.
  const bytes = templateBytes.get(template) ?? JSON.stringify(template).length
  templateBytes.set(template, bytes)
  const { spec } = sizing
  const containers = containerCount(template.template?.spec)
  const outputBytes = [...sizing.outputsOf(flow).values()].reduce((sum, output) => sum + output.length * 2, 0)
  const mounts = specBytes(spec.shareVolumeMounts) + specBytes(flow.shareVolumeMounts)
  const perContainer = globalEnvBytes + outputBytes + mounts
  const metadata = specBytes(spec.globalParams.labels) * 2 + specBytes(spec.globalParams.annotations) * 2
  const baseBytes = bytes + containers * perContainer + specBytes(spec.shareVolumes) + metadata + CHILD_OVERHEAD_BYTES
  const fanOut = flow.item !== undefined
  return { count: 0, baseBytes, largestItem: 0, fanOut, containers, templateBytes: bytes, outputBytes }
}

/** A fan-out step's Jobs, one per item. */
function itemsFigure (step: string, size: StepSize, globalEnvBytes: number): ChildFigure {
  const parts = partsOf(size, globalEnvBytes)
  parts.push(`its item up to ${formatBytes(size.largestItem)}`)
  const bytes = size.baseBytes + size.largestItem
  const what = `the Jobs of step ${JSON.stringify(step)}`
  return { what, per: 'item', count: size.count, bytes, total: bytes * size.count, parts }
}

/** The one Job of each step without items, together: a DAG of many steps multiplies the globals too. */
function stepsFigure (sizes: readonly StepSize[], globalEnvBytes: number): ChildFigure {
  const largest = sizes.reduce((a, b) => (b.baseBytes > a.baseBytes ? b : a))
  return {
    what: sizes.length === 1 ? 'the Job of one step' : `the Jobs of ${sizes.length.toLocaleString('en-US')} steps`,
    per: 'step',
    count: sizes.length,
    bytes: largest.baseBytes,
    total: sizes.reduce((sum, size) => sum + size.baseBytes, 0),
    parts: partsOf(largest, globalEnvBytes)
  }
}

function partsOf (size: StepSize, globalEnvBytes: number): string[] {
  const parts = podParts(size.templateBytes, globalEnvBytes, size.containers)
  if (size.outputBytes > 0) parts.push(`outputs ${formatBytes(size.outputBytes)} × ${size.containers} containers`)
  return parts
}

/** Every observed Job counts; its bytes only where its step's weight is known (it is creating Jobs too). */
function keptJobs (observedJobs: ReadonlyMap<string, KubeObject>, steps: ReadonlyMap<string, StepSize>): KeptChildren {
  let bytes = 0
  for (const job of observedJobs.values()) {
    const step = job.metadata.labels?.[FLOW_LABEL]
    const size = step === undefined ? undefined : steps.get(step)
    if (size !== undefined) bytes += size.baseBytes + size.largestItem
  }
  return { count: observedJobs.size, bytes }
}

/**
 * What the new Jobs of a sync of `request` may weigh at most, from the request alone and without
 * running the hook (for the wire, which budgets calls by their answers): every step's template
 * copies, times its `forEach` items (a `forEachFrom` counted once: its items come from outputs),
 * less the Jobs of the step already observed. The Jobs kept are the request's own bytes.
 */
export function jobFlowNewBytes (request: SyncRequest): number {
  const spec = isRecord(request.parent.spec) ? request.parent.spec : {}
  const flows = writtenSteps(spec)
  const globalEnv = isRecord(spec.globalParams) ? spec.globalParams.env : undefined
  const templates = new Map(objectsOf(request.related, 'JobTemplate', JOBTEMPLATE_API_VERSION)
    .map(t => [t.metadata.name, isRecord(t.spec) ? t.spec.jobTemplate : undefined]))
  const observed = new Map<string, number>()
  for (const job of objectsOf(request.children, 'Job', 'batch/v1')) {
    const step = job.metadata.labels?.[FLOW_LABEL]
    if (step !== undefined) observed.set(step, (observed.get(step) ?? 0) + 1)
  }
  let bytes = 0
  for (const flow of flows) {
    const ref = typeof flow.jobTemplateRef === 'string' ? templates.get(flow.jobTemplateRef) : undefined
    const jobSpec = flow.jobTemplate ?? ref
    const podTemplate = isRecord(jobSpec) ? jobSpec.template : undefined
    const items = Array.isArray(flow.forEach) ? flow.forEach.length : 1
    const name = typeof flow.name === 'string' ? flow.name : ''
    bytes += copiesBytes(podTemplate, globalEnv, items - (observed.get(name) ?? 0))
  }
  return bytes
}
