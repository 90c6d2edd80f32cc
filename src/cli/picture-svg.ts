// The pictures of `--output html`, as SVG text: a JobFlow's graph laid out in layers by
// dependency depth (left to right, steps coloured by outcome, an edge per dependency, a dashed
// edge into a step with a `when`), and a Gantt chart with a bar per Job attempt. Pure functions
// of the simulated shape; no library, nothing fetched. Exit steps (spec.onExit) are a DAG of their
// own in a frame after the DAG, a dashed connector into it from the DAG's leaves: they run after
// the whole DAG, not after any one step.
import { dagLeaves, type FlowShape, type FlowStep, type StepAttempt } from './flow-shape.js'
import { phaseColours } from './picture-mermaid.js'

// The top margin leaves room for the arches of edges that skip a layer.
const NODE = { width: 170, height: 46, columnGap: 60, rowGap: 18, margin: 16, top: 40 }
// The exit steps' frame: its padding, and the room for its label above the steps' first row.
const GROUP = { pad: 12, label: 26 }
const GANTT = { labelWidth: 220, chartWidth: 560, rowHeight: 24, bar: 16, top: 28, margin: 12 }

/** Text for SVG and HTML: the five characters markup gives meaning escaped. */
export function escapeXml (text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;').replaceAll("'", '&#39;')
}

/** Each step's layer: 0 without dependencies, else one past its deepest dependency (a cycle stops). */
export function depths (steps: FlowStep[]): Map<string, number> {
  const byName = new Map(steps.map(step => [step.name, step]))
  const found = new Map<string, number>()
  const depth = (name: string, seen: Set<string>): number => {
    const known = found.get(name)
    if (known !== undefined) return known
    const step = byName.get(name)
    if (step === undefined || seen.has(name)) return -1
    seen.add(name)
    const value = 1 + Math.max(-1, ...step.dependencies.map(d => depth(d, seen)))
    seen.delete(name)
    found.set(name, value)
    return value
  }
  for (const step of steps) depth(step.name, new Set())
  return found
}

interface Placed { step: FlowStep, x: number, y: number }

/** The steps' boxes: a column per layer from `left`, in spec order down each column. */
function place (steps: FlowStep[], left = NODE.margin): Placed[] {
  const layers = depths(steps)
  const rows = new Map<number, number>()
  return steps.map(step => {
    const layer = layers.get(step.name) ?? 0
    const row = rows.get(layer) ?? 0
    rows.set(layer, row + 1)
    return {
      step,
      x: left + layer * (NODE.width + NODE.columnGap),
      y: NODE.top + row * (NODE.height + NODE.rowGap)
    }
  })
}

function nodeSvg ({ step, x, y }: Placed): string {
  const { fill, stroke } = phaseColours(step.phase)
  const when = step.when !== undefined ? `<title>when ${escapeXml(step.when)}</title>` : ''
  const mark = step.when !== undefined ? ' · when' : ''
  const name = escapeXml(step.name)
  return `<g class="step" data-step="${name}" data-phase="${escapeXml(step.phase)}">${when}` +
    `<rect x="${x}" y="${y}" width="${NODE.width}" height="${NODE.height}" rx="6" fill="${fill}" stroke="${stroke}"/>` +
    `<text x="${x + 10}" y="${y + 19}" class="name">${name}</text>` +
    `<text x="${x + 10}" y="${y + 36}" class="phase">${escapeXml(step.phase)}${mark}</text></g>`
}

/** A curve from the right of a box to the left of another, as path data. */
function curve (from: Placed, x2: number, y2: number): string {
  const x1 = from.x + NODE.width
  const y1 = from.y + NODE.height / 2
  const bend = (x2 - x1) / 2
  // An edge that skips a layer arches over the row gap above, not through the boxes between.
  const skips = x2 - x1 > NODE.columnGap + 1
  const arch = Math.min(y1, y2) - 42
  const [c1, c2] = skips ? [`${x1 + 40},${arch}`, `${x2 - 40},${arch}`] : [`${x1 + bend},${y1}`, `${x2 - bend},${y2}`]
  return `M${x1},${y1} C${c1} ${c2} ${x2},${y2}`
}

function edgeSvg (from: Placed, to: Placed): string {
  const dashed = to.step.when !== undefined ? ' stroke-dasharray="5 4"' : ''
  return `<path class="edge" data-from="${escapeXml(from.step.name)}" data-to="${escapeXml(to.step.name)}" ` +
    `d="${curve(from, to.x, to.y + NODE.height / 2)}" fill="none" stroke="#555"` +
    `${dashed} marker-end="url(#arrow)"/>`
}

/**
 * A leaf's way into the exit steps' frame at (x2, y2): a curve from the DAG's last column; from an
 * earlier one up the gap beside it, over the top row and down the gap before the frame, so that
 * it crosses no box.
 */
function intoFrame (leaf: Placed, x2: number, y2: number): string {
  const x1 = leaf.x + NODE.width
  if (x2 - x1 <= NODE.columnGap + 1) return curve(leaf, x2, y2)
  const y1 = leaf.y + NODE.height / 2
  const [up, down, top, r] = [x1 + NODE.columnGap / 2, x2 - NODE.columnGap / 2, NODE.top - 20, 10]
  return `M${x1},${y1} H${up - r} Q${up},${y1} ${up},${y1 - r} V${top + r} Q${up},${top} ${up + r},${top} ` +
    `H${down - r} Q${down},${top} ${down},${top + r} V${y2 - r} Q${down},${y2} ${down + r},${y2} L${x2},${y2}`
}

interface ExitGroup { placed: Placed[], x: number, y: number, width: number, height: number }

/** The exit steps laid out by their own dependencies in a frame a column gap right of `dagRight`. */
function placeExits (exits: FlowStep[], dagRight: number): ExitGroup | undefined {
  if (exits.length === 0) return undefined
  const x = dagRight + NODE.columnGap
  const y = NODE.top - GROUP.label
  const placed = place(exits, x + GROUP.pad)
  const width = Math.max(...placed.map(p => p.x + NODE.width)) + GROUP.pad - x
  const height = Math.max(...placed.map(p => p.y + NODE.height)) + GROUP.pad - y
  return { placed, x, y, width, height }
}

/**
 * The exit steps' frame labelled onExit, and one dashed connector into it made of a curve from each
 * leaf of the DAG: every curve ends at the same point, where the path's one arrowhead is.
 */
function exitGroupSvg (group: ExitGroup, leaves: Placed[]): { frame: string, connector: string } {
  const frame = '<g class="exit-group" data-group="onExit">' +
    '<title>onExit: these steps start once every step of flows has finished</title>' +
    `<rect x="${group.x}" y="${group.y}" width="${group.width}" height="${group.height}" rx="8" ` +
    'fill="#f8f9fa" stroke="#888"/>' +
    `<text x="${group.x + 10}" y="${group.y + 17}" class="name">onExit</text></g>`
  if (leaves.length === 0) return { frame, connector: '' }
  const d = leaves.map(leaf => intoFrame(leaf, group.x, NODE.top + NODE.height / 2)).join(' ')
  const from = escapeXml(leaves.map(leaf => leaf.step.name).join(' '))
  return {
    frame,
    connector: `<path class="exit-edge" data-from="${from}" data-into="onExit" d="${d}" fill="none" stroke="#555" ` +
      'stroke-dasharray="5 4" marker-end="url(#arrow)"/>'
  }
}

/**
 * A JobFlow's graph as one `<svg>`: the exit steps' frame, an edge per dependency (dashed into a
 * step with a when), the connector into the frame, then the boxes.
 */
export function dagSvg (flow: FlowShape): string {
  const dag = place(flow.steps.filter(step => step.exit !== true))
  const dagRight = Math.max(NODE.margin - NODE.columnGap, ...dag.map(p => p.x + NODE.width))
  const group = placeExits(flow.steps.filter(step => step.exit === true), dagRight)
  const placed = [...dag, ...group?.placed ?? []]
  const byName = new Map(placed.map(p => [p.step.name, p]))
  const edges = placed.flatMap(to => to.step.dependencies.flatMap(dependency => {
    const from = byName.get(dependency)
    return from === undefined ? [] : [edgeSvg(from, to)]
  }))
  const leaves = new Set(dagLeaves(flow.steps))
  const exit = group === undefined
    ? { frame: '', connector: '' }
    : exitGroupSvg(group, dag.filter(p => leaves.has(p.step)))
  const frames = group === undefined ? [] : [group]
  const width = Math.max(...placed.map(p => p.x + NODE.width), ...frames.map(f => f.x + f.width), 0) + NODE.margin
  const height = Math.max(...placed.map(p => p.y + NODE.height), ...frames.map(f => f.y + f.height), 0) + NODE.margin
  const arrow = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" ' +
    'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
  return `<svg class="dag" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" ` +
    `aria-label="${escapeXml(`${flow.name}: steps and their dependencies`)}">${arrow}` +
    `${exit.frame}${edges.join('')}${exit.connector}${placed.map(nodeSvg).join('')}</svg>`
}

/** A round step between axis ticks, about six ticks over the run. */
function tickStep (seconds: number): number {
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600]
  return steps.find(step => seconds / step <= 6) ?? 7200
}

function barSvg (attempt: StepAttempt, row: number, scale: number, endSeconds: number): string {
  const y = GANTT.top + row * GANTT.rowHeight
  const label = `<text x="0" y="${y + 12}" class="label">${escapeXml(attempt.jobName)}</text>`
  if (attempt.start === undefined) {
    return `<g class="attempt" data-job="${escapeXml(attempt.jobName)}">${label}` +
      `<text x="${GANTT.labelWidth}" y="${y + 12}" class="phase">${escapeXml(attempt.phase)}, not started</text></g>`
  }
  const { fill, stroke } = phaseColours(attempt.phase)
  const x = GANTT.labelWidth + attempt.start * scale
  const width = Math.max(2, ((attempt.end ?? endSeconds) - attempt.start) * scale)
  const span = `${attempt.start}s to ${attempt.end !== undefined ? `${attempt.end}s` : 'the end'}`
  return `<g class="attempt" data-job="${escapeXml(attempt.jobName)}">${label}` +
    `<rect x="${x}" y="${y}" width="${width}" height="${GANTT.bar}" fill="${fill}" stroke="${stroke}">` +
    `<title>${escapeXml(`${attempt.jobName}: ${attempt.phase}, ${span}`)}</title></rect></g>`
}

/** A JobFlow's Jobs on the simulated clock: a row per attempt, a bar from its start to its end. */
export function ganttSvg (flow: FlowShape, endSeconds: number): string {
  const last = Math.max(1, endSeconds, ...flow.attempts.map(a => a.end ?? 0))
  const scale = GANTT.chartWidth / last
  const step = tickStep(last)
  const ticks: string[] = []
  const bottom = GANTT.top + flow.attempts.length * GANTT.rowHeight
  for (let s = 0; s <= last; s += step) {
    const x = GANTT.labelWidth + s * scale
    ticks.push(`<line x1="${x}" y1="${GANTT.top - 6}" x2="${x}" y2="${bottom}" ` +
      `stroke="#ddd"/><text x="${x}" y="${GANTT.top - 10}" class="tick">${s}s</text>`)
  }
  const width = GANTT.labelWidth + GANTT.chartWidth + GANTT.margin * 3
  const height = GANTT.top + flow.attempts.length * GANTT.rowHeight + GANTT.margin
  const bars = flow.attempts.map((attempt, row) => barSvg(attempt, row, scale, last))
  return `<svg class="gantt" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" ` +
    `aria-label="${escapeXml(`${flow.name}: its Jobs over time`)}">${ticks.join('')}${bars.join('')}</svg>`
}
