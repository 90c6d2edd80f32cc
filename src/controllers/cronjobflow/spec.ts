// A CronJobFlow's spec read into what a sync acts on: the schedule and its time zone, the rules
// for runs that meet (concurrency, deadline, history), and the JobFlow each run is — written out
// in spec.jobFlowTemplate or made of a JobFlowTemplate of the namespace (spec.jobFlowTemplateRef).
// Every problem is collected (law 2): a spec with one starts nothing and deletes nothing.
import type { KubeObject, ObjectMap } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { objectsByName } from '../../k8s/objects.js'
import { JOBFLOW_TEMPLATE_LABEL } from '../../k8s/labels.js'
import type { Parsed } from '../common/parsed.js'
import { optionalWholeNumber } from '../common/parsed.js'
import { parseCron, type CronSchedule } from '../common/cron.js'
import { timeZoneNamed, type TimeZone } from '../common/time-zone.js'
import {
  parseArguments, parseTemplateArguments, resolveArguments, type FlowArgument
} from '../common/arguments.js'

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace'
const POLICIES: readonly ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace']

/** Kubernetes' limit for a CronJob's name: its Jobs add `-<minutes>` and must fit 63 characters. */
export const MAX_NAME_LENGTH = 52
/** The most finished runs of one outcome a CronJobFlow keeps (the CRD's maximum). */
export const MAX_HISTORY = 100
const LABEL_VALUE_MAX = 63

export const JOBFLOW_TEMPLATE_API = 'jobhooks.io/v1alpha1'

/** What every run's JobFlow is made of: its labels, annotations and spec. */
export interface RunTemplate {
  labels: Record<string, string>
  annotations: Record<string, string>
  spec: Record<string, unknown>
}

export interface CronJobFlowSpec {
  schedule: CronSchedule
  zone: TimeZone
  concurrencyPolicy: ConcurrencyPolicy
  startingDeadlineSeconds?: number
  suspend: boolean
  successfulLimit: number
  failedLimit: number
  run: RunTemplate
}

/** The spec of `parent`, the JobFlowTemplate it names read from `related`. */
export function parseCronJobFlowSpec (parent: KubeObject, related: ObjectMap | undefined): Parsed<CronJobFlowSpec> {
  const problems: string[] = []
  const spec = isRecord(parent.spec) ? parent.spec : {}
  if (parent.metadata.name.length > MAX_NAME_LENGTH) {
    problems.push(`the name is ${parent.metadata.name.length} characters, more than ${MAX_NAME_LENGTH}: ` +
      'each run is a JobFlow named <name>-<scheduled time in unix minutes>')
  }
  const schedule = readSchedule(spec, problems)
  const zone = readZone(spec.timeZone, problems)
  const concurrencyPolicy = readPolicy(spec.concurrencyPolicy, problems)
  const startingDeadlineSeconds = optionalWholeNumber(spec.startingDeadlineSeconds, 'spec.startingDeadlineSeconds',
    0, undefined, problems)
  const successfulLimit = optionalWholeNumber(spec.successfulJobFlowsHistoryLimit,
    'spec.successfulJobFlowsHistoryLimit', 0, MAX_HISTORY, problems) ?? 3
  const failedLimit = optionalWholeNumber(spec.failedJobFlowsHistoryLimit,
    'spec.failedJobFlowsHistoryLimit', 0, MAX_HISTORY, problems) ?? 1
  if (spec.suspend !== undefined && typeof spec.suspend !== 'boolean') {
    problems.push('spec.suspend must be true or false')
  }
  const run = readRunTemplate(spec, parent.metadata.namespace, related, problems)
  if (problems.length > 0 || schedule === undefined || zone === undefined || run === undefined) {
    return { ok: false, problems }
  }
  return {
    ok: true,
    value: {
      schedule,
      zone,
      concurrencyPolicy,
      ...(startingDeadlineSeconds !== undefined ? { startingDeadlineSeconds } : {}),
      suspend: spec.suspend === true,
      successfulLimit,
      failedLimit,
      run
    }
  }
}

function readSchedule (spec: Record<string, unknown>, problems: string[]): CronSchedule | undefined {
  if (typeof spec.schedule !== 'string' || spec.schedule.trim() === '') {
    problems.push('spec.schedule must be a cron schedule, e.g. "*/5 * * * *" or "@hourly"')
    return undefined
  }
  const parsed = parseCron(spec.schedule)
  if ('problem' in parsed) {
    problems.push(`spec.schedule: ${parsed.problem}`)
    return undefined
  }
  return parsed.schedule
}

function readZone (value: unknown, problems: string[]): TimeZone | undefined {
  if (value !== undefined && value !== null && typeof value !== 'string') {
    problems.push('spec.timeZone must be the name of an IANA time zone, e.g. "Europe/Berlin"')
    return undefined
  }
  const found = timeZoneNamed(value ?? undefined)
  if ('problem' in found) {
    problems.push(found.problem)
    return undefined
  }
  return found.zone
}

function readPolicy (value: unknown, problems: string[]): ConcurrencyPolicy {
  if (value === undefined || value === null) return 'Allow'
  if (POLICIES.includes(value as ConcurrencyPolicy)) return value as ConcurrencyPolicy
  problems.push(`spec.concurrencyPolicy must be one of ${POLICIES.join(', ')} (got ${JSON.stringify(value)})`)
  return 'Allow'
}

/** The JobFlow a run is: spec.jobFlowTemplate as written, or the JobFlowTemplate spec.jobFlowTemplateRef names. */
function readRunTemplate (
  spec: Record<string, unknown>,
  namespace: string | undefined,
  related: ObjectMap | undefined,
  problems: string[]
): RunTemplate | undefined {
  const inline = spec.jobFlowTemplate
  const ref = spec.jobFlowTemplateRef
  if ((inline === undefined) === (ref === undefined)) {
    problems.push('give exactly one of spec.jobFlowTemplate and spec.jobFlowTemplateRef')
    return undefined
  }
  return inline !== undefined ? inlineRunTemplate(inline, problems) : readReference(ref, namespace, related, problems)
}

/** spec.jobFlowTemplate as a run's template, problems added (the plugin's `trigger` reads it so too). */
export function inlineRunTemplate (inline: unknown, problems: string[]): RunTemplate | undefined {
  if (!isRecord(inline) || !isRecord(inline.spec)) {
    problems.push('spec.jobFlowTemplate must have a spec: the spec of a JobFlow')
    return undefined
  }
  const flows = inline.spec.flows
  if (!Array.isArray(flows) || flows.length === 0) {
    problems.push('spec.jobFlowTemplate.spec.flows must list at least one flow')
    return undefined
  }
  const metadata = isRecord(inline.metadata) ? inline.metadata : {}
  return {
    labels: stringMap(metadata.labels, 'spec.jobFlowTemplate.metadata.labels', problems),
    annotations: stringMap(metadata.annotations, 'spec.jobFlowTemplate.metadata.annotations', problems),
    spec: structuredClone(inline.spec)
  }
}

function stringMap (value: unknown, field: string, problems: string[]): Record<string, string> {
  if (value === undefined || value === null) return {}
  if (!isRecord(value) || Object.values(value).some(v => typeof v !== 'string')) {
    problems.push(`${field} must map names to strings`)
    return {}
  }
  return { ...value as Record<string, string> }
}

/** A run made of the JobFlowTemplate: its flows and exit steps, each argument given or defaulted. */
function readReference (
  ref: unknown,
  namespace: string | undefined,
  related: ObjectMap | undefined,
  problems: string[]
): RunTemplate | undefined {
  if (!isRecord(ref) || typeof ref.name !== 'string' || ref.name === '') {
    problems.push('spec.jobFlowTemplateRef.name must name a JobFlowTemplate of this namespace')
    return undefined
  }
  const given = parseArguments(ref.arguments, problems, 'spec.jobFlowTemplateRef.arguments')
  const template = objectsByName(related, 'JobFlowTemplate', JOBFLOW_TEMPLATE_API).get(ref.name)
  const it = `JobFlowTemplate ${JSON.stringify(ref.name)}`
  if (template === undefined || template.metadata.namespace !== namespace) {
    problems.push(`spec.jobFlowTemplateRef: ${it} not found in namespace ${namespace ?? ''}`)
    return undefined
  }
  return runOfTemplate(template, given, problems)
}

function runOfTemplate (template: KubeObject, given: FlowArgument[], problems: string[]): RunTemplate | undefined {
  const name = template.metadata.name
  const at = `spec.jobFlowTemplateRef: JobFlowTemplate ${JSON.stringify(name)}`
  const spec = isRecord(template.spec) ? template.spec : {}
  if (!Array.isArray(spec.flows) || spec.flows.length === 0) {
    problems.push(`${at} has no spec.flows`)
    return undefined
  }
  const found: string[] = []
  const declared = parseTemplateArguments(spec.arguments, found, `${at}: spec.arguments`)
  const args = resolveArguments(given, declared, at, found, 'spec.jobFlowTemplateRef.arguments')
  problems.push(...found)
  if (found.length > 0) return undefined
  const onExit = Array.isArray(spec.onExit) && spec.onExit.length > 0 ? { onExit: structuredClone(spec.onExit) } : {}
  return {
    labels: name.length <= LABEL_VALUE_MAX ? { [JOBFLOW_TEMPLATE_LABEL]: name } : {},
    annotations: {},
    spec: { ...(args.length > 0 ? { arguments: args } : {}), flows: structuredClone(spec.flows), ...onExit }
  }
}
