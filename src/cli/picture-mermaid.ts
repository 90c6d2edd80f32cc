// `npm run simulate -- <manifest> --output mermaid`: each simulated JobFlow as a Mermaid flowchart,
// for docs and issues (GitHub draws a ```mermaid block). A step is a node labelled with its name
// and final phase (an approval step a hexagon), a dependency an edge; a step with a `when` says
// so, and its edges are dotted. A template group is a subgraph holding its steps (a nested group's
// nested), its edges drawn to and from the subgraph. Exit steps (spec.onExit) form a subgraph
// `onExit` after the DAG, a dotted edge into it from the DAG's leaves: they run after the whole
// DAG, not after any one step.
import { dagLeaves, groupMembers, outsideGroups, shortName, type FlowShape, type FlowStep } from './flow-shape.js'

/** The colour of each final phase, shared with the SVG pictures (picture-svg.ts). */
export const PHASE_COLOURS: Record<string, { fill: string, stroke: string }> = {
  Succeeded: { fill: '#d4edda', stroke: '#2e7d32' },
  Failed: { fill: '#f8d7da', stroke: '#c62828' },
  Skipped: { fill: '#e9ecef', stroke: '#6c757d' },
  Running: { fill: '#d0e4ff', stroke: '#1565c0' },
  Queued: { fill: '#fff3cd', stroke: '#b7791f' },
  Pending: { fill: '#ffffff', stroke: '#6c757d' }
}

export function phaseColours (phase: string): { fill: string, stroke: string } {
  return PHASE_COLOURS[phase] ?? PHASE_COLOURS.Pending as { fill: string, stroke: string }
}

/** Text inside a quoted Mermaid label: its quotes and angle brackets as Mermaid's entity codes. */
function label (text: string): string {
  return text.replaceAll('"', '#quot;').replaceAll('<', '#lt;').replaceAll('>', '#gt;')
}

/** Node ids by position, not name: a step's name may hold characters Mermaid's ids do not take. */
function nodeId (flowIndex: number, stepIndex: number): string {
  return `f${flowIndex}s${stepIndex}`
}

/** A step's node: a box, or for an approval step (it runs no Job, a person decides) a hexagon. */
function nodeLine (id: string, step: FlowStep, indent = '    '): string {
  const when = step.when !== undefined ? `<br/>when ${label(step.when)}` : ''
  const text = `"${label(shortName(step))}<br/>${label(step.phase)}${when}"`
  const shaped = step.approval === true ? `{{${text}}}` : `[${text}]`
  return `${indent}${id}${shaped}:::${step.phase.toLowerCase()}`
}

/**
 * The nodes of `steps`, each template group a subgraph `<group> (JobFlowTemplate <name>)` with its
 * phase, holding its own steps (`members`, by group) a level deeper.
 */
function stepLines (
  steps: readonly FlowStep[], members: ReadonlyMap<string, FlowStep[]>, ids: ReadonlyMap<string, string>,
  indent: string
): string[] {
  return steps.flatMap(step => {
    const id = ids.get(step.name) as string
    const own = members.get(step.name) ?? []
    if (own.length === 0) return [nodeLine(id, step, indent)]
    const title = `${label(`${shortName(step)} (JobFlowTemplate ${step.template ?? ''})`)}<br/>${label(step.phase)}`
    return [`${indent}subgraph ${id}["${title}"]`, ...stepLines(own, members, ids, `${indent}  `), `${indent}end`]
  })
}

/**
 * The exit steps' subgraph, and the dotted edge into it from the DAG's leaves (none without exit
 * steps). Its id is the flow's: each JobFlow of the chart has its own.
 */
function exitLines (flow: FlowShape, flowIndex: number): { group: string[], edge: string[] } {
  const exits = flow.steps.flatMap((step, i) =>
    step.exit === true ? [nodeLine(nodeId(flowIndex, i), step, '      ')] : [])
  if (exits.length === 0) return { group: [], edge: [] }
  const group = [`    subgraph f${flowIndex}x["onExit"]`, ...exits, '    end']
  const leaves = dagLeaves(flow.steps).map(leaf => nodeId(flowIndex, flow.steps.indexOf(leaf)))
  return { group, edge: leaves.length === 0 ? [] : [`    ${leaves.join(' & ')} -.-> f${flowIndex}x`] }
}

/**
 * One JobFlow as a subgraph: its steps (each template group's in its subgraph, the exit steps in
 * a subgraph of their own), then its edges (dotted into a step with a when, and into the exit
 * steps' subgraph).
 */
function flowLines (flow: FlowShape, flowIndex: number): string[] {
  const ids = new Map(flow.steps.map((step, i) => [step.name, nodeId(flowIndex, i)]))
  const edges = flow.steps.flatMap(step => step.dependencies.flatMap(dependency => {
    const from = ids.get(dependency)
    const to = ids.get(step.name) as string
    if (from === undefined) return []
    return [step.when !== undefined ? `    ${from} -.->|when| ${to}` : `    ${from} --> ${to}`]
  }))
  // The exit steps are declared in their subgraph before any edge names them: Mermaid puts a node
  // in the first subgraph that lists it.
  const exit = exitLines(flow, flowIndex)
  return [
    `  subgraph f${flowIndex}["${label(`${flow.namespace}/${flow.name}: ${flow.phase}`)}"]`,
    ...stepLines(outsideGroups(flow.steps).filter(step => step.exit !== true), groupMembers(flow.steps), ids, '    '),
    ...exit.group,
    ...edges,
    ...exit.edge,
    '  end'
  ]
}

/** The flowchart of every JobFlow, with a class per phase for its colours. */
export function mermaidText (flows: FlowShape[]): string {
  if (flows.length === 0) return '%% no JobFlow was simulated: nothing to draw'
  const classes = Object.entries(PHASE_COLOURS).map(([phase, colour]) =>
    `  classDef ${phase.toLowerCase()} fill:${colour.fill},stroke:${colour.stroke}`)
  return ['flowchart LR', ...flows.flatMap(flowLines), ...classes].join('\n')
}
