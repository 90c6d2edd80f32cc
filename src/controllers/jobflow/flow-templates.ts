// Expanding `flows[].flowTemplateRef` (template-ref.ts): each such step becomes a group, and its
// JobFlowTemplate's steps become steps of the flow named `<step>.<inner>`, their dependencies,
// `depends` and `forEachFrom` renamed with them. A group's steps read the flow's arguments and
// their template's (the template's defaults, then the reference's values); a template may run
// templates in turn, to MAX_TEMPLATE_DEPTH, and a cycle of templates makes the spec invalid.
import type { KubeObject } from '../../k8s/types.js'
import type { SyncRequest } from '../../protocol/hooks.js'
import { objectsByName } from '../../k8s/objects.js'
import type { Parsed } from '../common/parsed.js'
import { pinnedTemplates, pinsConfigMap } from './template-pins.js'
import { isRecord } from '../../k8s/types.js'
import {
  parseSteps, stepProblems, type FlowSpec, type JobFlowSpec
} from './spec.js'
import { orderByDependencies, reachable } from './dag.js'
import { parseTemplateArguments, unknownArguments, type FlowArgument } from './arguments.js'
import { resolveArguments } from '../common/arguments.js'
import type { DependsNode } from './depends.js'
import { GROUP_SEPARATOR, isGroupStepName } from './template-ref.js'

export const JOBFLOWTEMPLATE_API_VERSION = 'jobhooks.io/v1alpha1'
/** How deep templates may run templates: a JobFlow's step, its template's, and three more. */
export const MAX_TEMPLATE_DEPTH = 5
/** The most steps a JobFlow has once its templates are expanded (as many as spec.flows may list). */
export const MAX_EXPANDED_STEPS = 2000

export type Expanded =
  | { ok: true, value: JobFlowSpec, pins?: KubeObject }
  | { ok: false, problems: string[], missingTemplate?: boolean }

/** What one expansion carries from template to template. */
interface Expansion {
  templates: ReadonlyMap<string, KubeObject>
  namespace: string
  problems: string[]
  missing: boolean
  count: number
  /** The templates read, by name: what the JobFlow pins (template-pins.ts). */
  used: Map<string, KubeObject>
}

/**
 * A parsed spec with its templates expanded: those the JobFlow pinned (template-pins.ts), else
 * those Metacontroller sent; `pins` is the ConfigMap that pins what it read.
 */
export function withFlowTemplates (request: SyncRequest, parsed: Parsed<JobFlowSpec>): Expanded {
  if (!parsed.ok || !runsTemplates(parsed.value)) return parsed
  const live = objectsByName(request.related, 'JobFlowTemplate', JOBFLOWTEMPLATE_API_VERSION)
  const templates = new Map([...live, ...pinnedTemplates(request)])
  const expansion = expandFlowTemplates(parsed.value, templates, request.parent.metadata.namespace ?? 'default')
  if (!expansion.ok) return expansion
  const pins = pinsConfigMap(request.parent, expansion.used)
  return typeof pins === 'string' ? { ok: false, problems: [pins] } : { ok: true, value: expansion.value, pins }
}

/** Whether a spec runs any template: then customize asks for JobFlowTemplates. */
export function runsTemplates (spec: Pick<JobFlowSpec, 'flows'>): boolean {
  return spec.flows.some(f => f.flowTemplateRef !== undefined)
}

/**
 * The spec with every template group expanded, from the JobFlowTemplates by name; the spec itself
 * when it runs none. A missing template, a cycle, too deep a nesting or too many steps make it invalid.
 */
export function expandFlowTemplates (
  spec: JobFlowSpec,
  templates: ReadonlyMap<string, KubeObject>,
  namespace: string
): { ok: true, value: JobFlowSpec, used: KubeObject[] } | { ok: false, problems: string[], missingTemplate: boolean } {
  const used = new Map<string, KubeObject>()
  if (!runsTemplates(spec)) return { ok: true, value: spec, used: [] }
  const expansion: Expansion = { templates, namespace, problems: [], missing: false, count: spec.flows.length, used }
  const flows = expandSteps(spec.flows, spec.arguments, [], expansion)
  if (expansion.count > MAX_EXPANDED_STEPS) {
    expansion.problems.push(`the JobFlow has ${expansion.count} steps once its templates are expanded, more ` +
      `than ${MAX_EXPANDED_STEPS}`)
  }
  if (expansion.problems.length > 0) {
    return { ok: false, problems: [...new Set(expansion.problems)], missingTemplate: expansion.missing }
  }
  const value: JobFlowSpec = { ...spec, flows }
  if (spec.targets !== undefined) {
    // A group a target needs runs whole: every step inside it is needed too.
    const byName = new Map(flows.map(f => [f.name, f]))
    const needed = reachable(spec.targets.needed, name => byName.get(name)?.group?.members ?? [])
    value.targets = { ...spec.targets, needed }
  }
  return { ok: true, value, used: [...used.values()] }
}

/** Steps with each group followed by its own steps, expanded in turn; `chain` is the templates above. */
function expandSteps (
  steps: readonly FlowSpec[],
  args: readonly FlowArgument[],
  chain: readonly string[],
  expansion: Expansion
): FlowSpec[] {
  return steps.flatMap(step => {
    const ref = step.flowTemplateRef
    if (ref === undefined) return [step]
    const inner = instantiate(step, args, chain, expansion)
    if (inner === undefined) return [step]
    const members = inner.own.map(s => s.name)
    const group = { ...step, group: { template: ref.name, members, generation: inner.generation } }
    return [group, ...expandSteps(inner.own, inner.args, [...chain, ref.name], expansion)]
  })
}

/** A group's own steps, renamed and scoped, and the arguments they read; undefined when it cannot be. */
function instantiate (
  step: FlowSpec,
  outer: readonly FlowArgument[],
  chain: readonly string[],
  expansion: Expansion
): { own: FlowSpec[], args: FlowArgument[], generation?: number } | undefined {
  const ref = step.flowTemplateRef as NonNullable<FlowSpec['flowTemplateRef']>
  const at = `flow ${JSON.stringify(step.name)}`
  const problem = (text: string): undefined => { expansion.problems.push(`${at}: ${text}`) }
  if (chain.includes(ref.name)) return problem(`a cycle of JobFlowTemplates: ${[...chain, ref.name].join(' → ')}`)
  if (chain.length >= MAX_TEMPLATE_DEPTH) {
    const path = [...chain, ref.name].join(' → ')
    return problem(`JobFlowTemplates run templates ${MAX_TEMPLATE_DEPTH} deep at most: ${path}`)
  }
  const template = expansion.templates.get(ref.name)
  if (template === undefined) {
    expansion.missing = true
    return problem(`JobFlowTemplate ${JSON.stringify(ref.name)} not found in namespace ${expansion.namespace}`)
  }
  expansion.used.set(ref.name, template)
  const of = `JobFlowTemplate ${JSON.stringify(ref.name)}`
  const parsed = parseTemplate(template, `${at} (${of})`, expansion.problems)
  if (parsed === undefined) return undefined
  const args = resolveArguments(ref.arguments, parsed.arguments, `${at}: ${of}`, expansion.problems)
  const merged = [...outer.filter(a => !args.some(b => b.name === a.name)), ...args]
  const unknown = unknownArguments(parsed.flows, merged).map(p => `${at} (${of}): ${p}`)
  expansion.problems.push(...unknown)
  expansion.count += parsed.flows.length
  if (unknown.length > 0 || expansion.count > MAX_EXPANDED_STEPS) return undefined
  const own = parsed.flows.map(inner => scoped(inner, step.name, merged))
  const long = own.filter(s => !isGroupStepName(s.name)).map(s => s.name)
  if (long.length > 0) return problem(`its steps' names pass 63 characters: ${long.join(', ')} (shorten them)`)
  const { generation } = template.metadata
  return generation === undefined ? { own, args: merged } : { own, args: merged, generation }
}

/** A JobFlowTemplate's arguments and steps, checked as a JobFlow's are; undefined after a problem. */
function parseTemplate (
  template: KubeObject,
  at: string,
  problems: string[]
): { arguments: Array<{ name: string, value?: string }>, flows: FlowSpec[] } | undefined {
  const spec = template.spec
  if (!isRecord(spec)) return undefined
  const found: string[] = []
  const args = parseTemplateArguments(spec.arguments, found, 'spec.arguments')
  const flows = Array.isArray(spec.flows) && spec.flows.length > 0
    ? parseSteps(spec.flows, 'flows', new Set(), found)
    : (found.push('spec.flows must list at least one flow'), [])
  if (Array.isArray(spec.onExit) && spec.onExit.length > 0) {
    found.push('spec.onExit runs only when the template is a whole JobFlow (kubectl jobhooks submit --from), ' +
      'not as a group of steps')
  }
  if (found.length === 0) found.push(...stepProblems(flows, []), ...orderByDependencies(flows).problems)
  problems.push(...found.map(p => `${at}: ${p}`))
  return found.length > 0 ? undefined : { arguments: args, flows }
}

/** A template's step as a step of the group `group`: its names prefixed, its scope and arguments set. */
function scoped (inner: FlowSpec, group: string, args: FlowArgument[]): FlowSpec {
  const name = (step: string): string => `${group}${GROUP_SEPARATOR}${step}`
  const dependencies = inner.dependencies.map(name)
  const step: FlowSpec = { ...inner, name: name(inner.name), dependencies, scope: group, args }
  if (inner.depends !== undefined) {
    step.depends = { ...inner.depends, tree: renamed(inner.depends.tree, name), steps: inner.depends.steps.map(name) }
  }
  if (inner.forEachFrom !== undefined) step.forEachFrom = name(inner.forEachFrom)
  return step
}

function renamed (node: DependsNode, name: (step: string) => string): DependsNode {
  switch (node.op) {
    case 'ref': return { ...node, step: name(node.step) }
    case 'not': return { op: 'not', arg: renamed(node.arg, name) }
    default: return { op: node.op, args: node.args.map(arg => renamed(arg, name)) }
  }
}
