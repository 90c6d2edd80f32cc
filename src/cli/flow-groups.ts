// Template groups (flows[].flowTemplateRef) as the tools show them: a JobFlow's steps with each
// group followed by the steps its JobFlowTemplate gives it, expanded by the hook's own code
// (flow-templates.ts) so that names, dependencies and order are the engine's. The templates are
// those the JobFlow pinned (template-pins.ts), else the JobFlowTemplates there are (the
// simulator's store); without them, or with a spec the hook would not expand, a group stays one step.
import type { KubeObject } from '../k8s/types.js'
import { allSteps, parseJobFlowSpec, writtenSteps, type FlowSpec } from '../controllers/jobflow/spec.js'
import { expandFlowTemplates, JOBFLOWTEMPLATE_API_VERSION } from '../controllers/jobflow/flow-templates.js'
import { PINS_LABEL, pinsConfigMap, templatesPinnedIn } from '../controllers/jobflow/template-pins.js'
import type { Simulator } from '../simulator/simulator.js'

/** JobFlowTemplates by name, as a JobFlow's namespace holds them. */
export type FlowTemplates = ReadonlyMap<string, KubeObject>

/** Whether a JobFlow's spec, as written, runs a JobFlowTemplate. */
export function runsTemplatesAsWritten (flow: KubeObject): boolean {
  return writtenSteps(flow.spec).some(step => step.flowTemplateRef !== undefined && step.flowTemplateRef !== null)
}

/** The labels the hook gives the ConfigMap that pins a JobFlow's templates: its own and the pins label. */
function pinLabels (flow: KubeObject): Record<string, string> {
  const pins = pinsConfigMap(flow, [])
  return typeof pins === 'string' ? {} : pins.metadata.labels ?? {}
}

/**
 * The label selector of the ConfigMaps pinning the templates of `flows`: of that JobFlow for one,
 * of any JobFlow for several (flowTemplates keeps each flow's own).
 */
export function pinsSelector (flows: readonly KubeObject[]): string {
  const [only] = flows
  const labels = Object.entries(only === undefined ? {} : pinLabels(only))
  const chosen = flows.length === 1 ? labels : labels.filter(([key]) => key === PINS_LABEL)
  return chosen.map(([key, value]) => `${key}=${value}`).join(',')
}

/**
 * The templates a JobFlow runs, by name: those pinned in the ConfigMaps that are its pins (others
 * are passed over), over the `live` JobFlowTemplates, as a sync reads them.
 */
export function flowTemplates (
  flow: KubeObject, configMaps: Iterable<KubeObject>, live: Iterable<KubeObject> = []
): Map<string, KubeObject> {
  const labels = Object.entries(pinLabels(flow))
  const namespace = flow.metadata.namespace ?? ''
  const own = [...configMaps].filter(c => (c.metadata.namespace ?? '') === namespace &&
    labels.every(([key, value]) => c.metadata.labels?.[key] === value))
  return new Map([...[...live].map(t => [t.metadata.name, t] as const), ...templatesPinnedIn(flow, own)])
}

/** The templates a simulated JobFlow runs: its pins, else the store's JobFlowTemplates of its namespace. */
export function simulatedTemplates (sim: Simulator, flow: KubeObject): Map<string, KubeObject> {
  const { namespace } = flow.metadata
  const live = sim.list({ apiVersion: JOBFLOWTEMPLATE_API_VERSION, kind: 'JobFlowTemplate' }, namespace)
  return flowTemplates(flow, sim.list({ apiVersion: 'v1', kind: 'ConfigMap' }, namespace), live)
}

/**
 * A JobFlow's steps with its template groups expanded as the hook expands them: each group (its
 * `group` set) followed by its own steps (their `scope` its name), flows then exit steps. Undefined
 * when it runs no template, or when the hook could not expand them (an invalid spec, a template
 * missing): then the spec's own steps are all there is.
 */
export function expandedSteps (flow: KubeObject, templates: FlowTemplates): FlowSpec[] | undefined {
  if (templates.size === 0 || !runsTemplatesAsWritten(flow)) return undefined
  const parsed = parseJobFlowSpec(flow)
  if (!parsed.ok) return undefined
  const expanded = expandFlowTemplates(parsed.value, templates, flow.metadata.namespace ?? 'default')
  return expanded.ok ? allSteps(expanded.value) : undefined
}
