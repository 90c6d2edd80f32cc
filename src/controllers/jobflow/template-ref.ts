// `flows[].flowTemplateRef` `{name, arguments}`: a step that runs a JobFlowTemplate's DAG, as
// Argo's DAG task calling a DAG template (`dag-nested`). The step is a group: its template's steps
// run as steps of the flow named `<step>.<inner>` (flow-templates.ts expands them), started once
// the group itself may start, and the group ends as Argo's DAG node does, from its own leaves.
// This module reads the reference and orders grouped steps; spec.ts and the engine import it.
import { isRecord } from '../../k8s/types.js'
import { isLabelValue, MAX_OBJECT_NAME } from '../../k8s/names.js'
import { parseArguments, type FlowArgument } from './arguments.js'
import { JOB_FIELDS } from './approval.js'

export interface FlowTemplateRef {
  /** The JobFlowTemplate's name, in the JobFlow's namespace. */
  name: string
  /** Values for its arguments, over the template's defaults. */
  arguments: FlowArgument[]
}

/** A step that runs a template, once expanded: which one, and its own steps (not theirs). */
export interface TemplateGroup {
  template: string
  members: string[]
  /** The template's metadata.generation as the JobFlow pinned it (template-pins.ts). */
  generation?: number | undefined
}

/** How records name a group's template: `JobFlowTemplate ci (generation 3)`. */
export function templateNamed (group: TemplateGroup | undefined): string {
  if (group === undefined) return 'JobFlowTemplate'
  const generation = group.generation === undefined ? '' : ` (generation ${group.generation})`
  return `JobFlowTemplate ${group.template}${generation}`
}

/** The fields a step with `flowTemplateRef` cannot have: a Job's (it runs none of its own), and approval. */
const NOT_WITH_TEMPLATE = [...JOB_FIELDS, 'approval']

/** A step's `flowTemplateRef`; problems are added to `problems`. */
export function parseFlowTemplateRef (
  raw: Record<string, unknown>,
  at: string,
  problems: string[],
  exit: boolean
): FlowTemplateRef | undefined {
  const value = raw.flowTemplateRef
  if (exit) {
    problems.push(`${at}: an exit step cannot run a JobFlowTemplate (flowTemplateRef): give it a Job`)
    return undefined
  }
  if (!isRecord(value) || typeof value.name !== 'string' || value.name === '' ||
    value.name.length > MAX_OBJECT_NAME) {
    problems.push(`${at}: flowTemplateRef must be {name, arguments}, name a JobFlowTemplate of this namespace`)
    return undefined
  }
  const unknown = Object.keys(value).filter(k => k !== 'name' && k !== 'arguments')
  if (unknown.length > 0) problems.push(`${at}: flowTemplateRef has unknown fields: ${unknown.join(', ')}`)
  const withJob = NOT_WITH_TEMPLATE.filter(field => raw[field] !== undefined && raw[field] !== null)
  if (withJob.length > 0) {
    problems.push(`${at}: a step with flowTemplateRef runs its template's steps, not a Job of its own, so it ` +
      `cannot have ${withJob.join(', ')}`)
  }
  return { name: value.name, arguments: parseArguments(value.arguments, problems, `${at}: flowTemplateRef.arguments`) }
}

/** The step names of a group's steps: `<group>.<inner>`. */
export const GROUP_SEPARATOR = '.'

/**
 * A name as the steps of its group wrote it: `build.test.unit` is `unit` to the steps of
 * `build.test` (their outputs' variables, their `when`'s `flows.unit`).
 */
export function localName (name: string, scope: string | undefined): string {
  const prefix = scope === undefined ? '' : scope + GROUP_SEPARATOR
  return prefix !== '' && name.startsWith(prefix) ? name.slice(prefix.length) : name
}

/** Whether a step name made for a group's step can be a label value (its Jobs carry it). */
export function isGroupStepName (name: string): boolean {
  return isLabelValue(name)
}

/** A step as ordering reads it (spec.ts FlowSpec). */
interface GroupedStep { name: string, dependencies: string[], scope?: string, group?: TemplateGroup }

/**
 * The steps with the edges that order groups: a group's steps come after the group (which decides
 * whether they start), and a step that depends on a group after every step inside it (the group
 * ends with them). Undefined when the steps have no group: then their own dependencies order them.
 */
export function groupOrderingNodes<T extends GroupedStep> (
  steps: readonly T[]
): Array<{ name: string, dependencies: string[], step: T }> | undefined {
  if (!steps.some(s => s.group !== undefined)) return undefined
  const byName = new Map(steps.map(s => [s.name, s]))
  const inside = new Map<string, string[]>()
  const within = (name: string): string[] => {
    const known = inside.get(name)
    if (known !== undefined) return known
    const members = byName.get(name)?.group?.members ?? []
    const all = members.flatMap(m => [m, ...within(m)])
    inside.set(name, all)
    return all
  }
  return steps.map(step => ({
    name: step.name,
    dependencies: [
      ...step.dependencies, ...(step.scope !== undefined ? [step.scope] : []), ...step.dependencies.flatMap(within)
    ],
    step
  }))
}
