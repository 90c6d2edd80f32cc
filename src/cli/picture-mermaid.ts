// `npm run simulate -- <manifest> --output mermaid`: each simulated JobFlow as a Mermaid flowchart,
// for docs and issues (GitHub draws a ```mermaid block). A step is a node labelled with its name
// and final phase, a dependency an edge; a step with a `when` says so, and its edges are dotted.
import type { FlowShape, FlowStep } from './flow-shape.js'

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

function nodeLine (id: string, step: FlowStep): string {
  const when = step.when !== undefined ? `<br/>when ${label(step.when)}` : ''
  return `    ${id}["${label(step.name)}<br/>${label(step.phase)}${when}"]:::${step.phase.toLowerCase()}`
}

/** One JobFlow as a subgraph: its steps, then its edges (dotted into a step with a when). */
function flowLines (flow: FlowShape, flowIndex: number): string[] {
  const ids = new Map(flow.steps.map((step, i) => [step.name, nodeId(flowIndex, i)]))
  const edges = flow.steps.flatMap(step => step.dependencies.flatMap(dependency => {
    const from = ids.get(dependency)
    const to = ids.get(step.name) as string
    if (from === undefined) return []
    return [step.when !== undefined ? `    ${from} -.->|when| ${to}` : `    ${from} --> ${to}`]
  }))
  return [
    `  subgraph f${flowIndex}["${label(`${flow.namespace}/${flow.name}: ${flow.phase}`)}"]`,
    ...flow.steps.map((step, i) => nodeLine(nodeId(flowIndex, i), step)),
    ...edges,
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
