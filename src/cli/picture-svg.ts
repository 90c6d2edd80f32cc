// The pictures of `--output html`, as SVG text: a JobFlow's graph laid out in layers by
// dependency depth (picture-layout.ts: left to right, steps coloured by outcome, an edge per
// dependency, a dashed edge into a step with a `when`, an approval step a hexagon, a template
// group a frame round its steps), and a Gantt chart with a bar per Job attempt. Pure functions
// of the simulated shape; no library, nothing fetched. Exit steps (spec.onExit) are a DAG of their
// own in a frame after the DAG, a dashed connector into it from the DAG's leaves: they run after
// the whole DAG, not after any one step.
import { dagLeaves, shortName, type FlowShape, type FlowStep, type StepAttempt } from './flow-shape.js'
import { phaseColours } from './picture-mermaid.js'
import { FRAME, frameLabel, NODE, place, type Placed } from './picture-layout.js'

const GANTT = { labelWidth: 220, chartWidth: 560, rowHeight: 24, bar: 16, top: 28, margin: 12 }
/** How far an approval step's hexagon slants in at each end. */
const HEXAGON_SLANT = 12

/** Text for SVG and HTML: the five characters markup gives meaning escaped. */
export function escapeXml (text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;').replaceAll("'", '&#39;')
}

/** A step's outline: a rounded box, or for an approval step (it runs no Job, a person decides) a hexagon. */
function outlineSvg ({ step, x, y, width, height }: Placed, fill: string, stroke: string): string {
  if (step.approval !== true) {
    return `<rect x="${x}" y="${y}" width="${width}" height="${height}" rx="6" fill="${fill}" stroke="${stroke}"/>`
  }
  const [right, middle, bottom] = [x + width, y + height / 2, y + height]
  const points = [[x + HEXAGON_SLANT, y], [right - HEXAGON_SLANT, y], [right, middle], [right - HEXAGON_SLANT, bottom],
    [x + HEXAGON_SLANT, bottom], [x, middle]].map(([px, py]) => `${px},${py}`).join(' ')
  return `<polygon class="approval" points="${points}" fill="${fill}" stroke="${stroke}"/>`
}

function nodeSvg (placed: Placed): string {
  const { step, x, y } = placed
  const { fill, stroke } = phaseColours(step.phase)
  const when = step.when !== undefined ? `<title>when ${escapeXml(step.when)}</title>` : ''
  const mark = [...step.items !== undefined ? [`${step.items} items`] : [],
    ...step.approval === true ? ['approval'] : [], ...step.when !== undefined ? ['when'] : []]
    .map(m => ` · ${m}`).join('')
  const inset = step.approval === true ? HEXAGON_SLANT : 10
  return `<g class="step" data-step="${escapeXml(step.name)}" data-phase="${escapeXml(step.phase)}">${when}` +
    outlineSvg(placed, fill, stroke) +
    `<text x="${x + inset}" y="${y + 19}" class="name">${escapeXml(shortName(step))}</text>` +
    `<text x="${x + inset}" y="${y + 36}" class="phase">${escapeXml(step.phase)}${mark}</text></g>`
}

/** A template group's frame: a rectangle round its steps, labelled with its name, template and phase. */
function groupSvg ({ step, x, y, width, height }: Placed): string {
  const { stroke } = phaseColours(step.phase)
  // A faint fill: a group inside a group shows a shade darker.
  return `<g class="group" data-group="${escapeXml(step.name)}" data-template="${escapeXml(step.template ?? '')}" ` +
    `data-phase="${escapeXml(step.phase)}"><title>${escapeXml(`${step.name}: runs the steps of JobFlowTemplate ` +
    `${step.template ?? ''}`)}</title><rect x="${x}" y="${y}" width="${width}" height="${height}" rx="8" ` +
    `fill="#495057" fill-opacity="0.05" stroke="${stroke}"/>` +
    `<text x="${x + 10}" y="${y + 17}" class="name">${escapeXml(frameLabel(step))}</text></g>`
}

/** A curve from the right of a box (from its column's right edge) to (x2, y2), the left of another, as path data. */
function curve (from: Placed, x2: number, y2: number): string {
  const [x1, y1] = [from.columnRight, from.y + from.height / 2]
  const bend = (x2 - x1) / 2
  return `${leaving(from)} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`
}

/**
 * A way to (x2, y2) from a box columns away, crossing no box: up the gap after its column to the
 * lane above the rows, along it, and down the gap before (x2, y2), as path data.
 */
function overLane (from: Placed, x2: number, y2: number): string {
  const y1 = from.y + from.height / 2
  const [up, down, lane, r] = [from.columnRight + NODE.columnGap / 2, x2 - NODE.columnGap / 2, from.lane, 10]
  return `${leaving(from)} H${up - r} Q${up},${y1} ${up},${y1 - r} V${lane + r} Q${up},${lane} ${up + r},${lane} ` +
    `H${down - r} Q${down},${lane} ${down},${lane + r} V${y2 - r} Q${down},${y2} ${down + r},${y2} L${x2},${y2}`
}

/** Where an edge leaves a box, as path data: its right, then on to its column's right edge if the column is wider. */
function leaving ({ x, y, width, height, columnRight }: Placed): string {
  const y1 = y + height / 2
  return x + width < columnRight ? `M${x + width},${y1} H${columnRight}` : `M${columnRight},${y1}`
}

/** An edge to the left of a box from the right of its dependency's: a curve, over the lane when it skips columns. */
function edgeSvg (from: Placed, to: Placed): string {
  const dashed = to.step.when !== undefined ? ' stroke-dasharray="5 4"' : ''
  const [x2, y2] = [to.x, to.y + to.height / 2]
  const d = to.layer - from.layer > 1 ? overLane(from, x2, y2) : curve(from, x2, y2)
  return `<path class="edge" data-from="${escapeXml(from.step.name)}" data-to="${escapeXml(to.step.name)}" ` +
    `d="${d}" fill="none" stroke="#555"${dashed} marker-end="url(#arrow)"/>`
}

/**
 * A leaf's way into the exit steps' frame at (x2, y2): a curve from the DAG's last column; from an
 * earlier one over the lane, so that it crosses no box.
 */
function intoFrame (leaf: Placed, x2: number, y2: number): string {
  return x2 - leaf.columnRight <= NODE.columnGap + 1 ? curve(leaf, x2, y2) : overLane(leaf, x2, y2)
}

interface ExitGroup { placed: Placed[], x: number, y: number, width: number, height: number }

/** The exit steps laid out by their own dependencies in a frame a column gap right of `dagRight`. */
function placeExits (exits: FlowStep[], dagRight: number): ExitGroup | undefined {
  if (exits.length === 0) return undefined
  const x = dagRight + NODE.columnGap
  const y = NODE.top - FRAME.label
  const placed = place(exits, x + FRAME.pad)
  const width = Math.max(...placed.map(p => p.x + p.width)) + FRAME.pad - x
  const height = Math.max(...placed.map(p => p.y + p.height)) + FRAME.pad - y
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
 * A JobFlow's graph as one `<svg>`: the exit steps' frame, the template groups' frames (a group's
 * before those inside it), an edge per dependency (dashed into a step with a when), the connector
 * into the exit steps' frame, then the boxes.
 */
export function dagSvg (flow: FlowShape): string {
  const dag = place(flow.steps.filter(step => step.exit !== true))
  const dagRight = Math.max(NODE.margin - NODE.columnGap, ...dag.map(p => p.x + p.width))
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
  const extents = [...placed, ...group === undefined ? [] : [group]]
  const width = Math.max(...extents.map(e => e.x + e.width), 0) + NODE.margin
  const height = Math.max(...extents.map(e => e.y + e.height), 0) + NODE.margin
  const arrow = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" ' +
    'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>'
  return `<svg class="dag" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" ` +
    `aria-label="${escapeXml(`${flow.name}: steps and their dependencies`)}">${arrow}` +
    `${exit.frame}${dag.filter(p => p.frame).map(groupSvg).join('')}${edges.join('')}${exit.connector}` +
    `${placed.filter(p => !p.frame).map(nodeSvg).join('')}</svg>`
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
