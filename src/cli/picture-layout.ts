// Where the SVG picture (picture-svg.ts) puts each step: in columns by dependency depth, left to
// right, in the order of the steps down each column. A template group is one box among its
// siblings, as large as its own steps laid out the same way inside it (below its label), so that
// the frame drawn round it holds them, a nested group's frame inside its group's. A column is as
// wide as its widest box; an edge leaves a box from the column's right edge, so that it crosses
// none of the column's wider boxes, and an edge that skips columns runs in a lane above the rows.
import { groupMembers, outsideGroups, shortName, type FlowStep } from './flow-shape.js'

// The top margin leaves room for the lane of edges that skip a layer.
export const NODE = { width: 170, height: 46, columnGap: 60, rowGap: 18, margin: 16, top: 40 }
/** A frame round steps (a template group's, the exit steps'): its padding, and the room for its label above them. */
export const FRAME = { pad: 12, label: 26 }
/** How far above the first row of steps laid out together their lane runs. */
const LANE = 20
/** About how wide a character of a frame's label is, to make the frame wide enough for it. */
const LABEL_CHARACTER = 7

/** A step's box, or a template group's frame (with its own steps' boxes inside it). */
export interface Placed {
  step: FlowStep
  x: number
  y: number
  width: number
  height: number
  /** Its column among the steps it is laid out with (its group's, or the flow's). */
  layer: number
  /** The right edge of that column. */
  columnRight: number
  /** The lane above the first row of those steps, where an edge that skips a column runs. */
  lane: number
  /** A template group's frame, round its steps' boxes. */
  frame: boolean
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

/** What a template group's frame says: `linux (JobFlowTemplate build-test) · Succeeded`. */
export function frameLabel (group: FlowStep): string {
  return `${shortName(group)} (JobFlowTemplate ${group.template ?? ''}) · ${group.phase}`
}

/** A box before it has a place: its size, and for a group its steps placed inside it (from its corner). */
interface Block { step: FlowStep, width: number, height: number, inside: Placed[] }

function blockOf (step: FlowStep, members: ReadonlyMap<string, FlowStep[]>): Block {
  const own = members.get(step.name) ?? []
  if (own.length === 0) return { step, width: NODE.width, height: NODE.height, inside: [] }
  // Below its label, room for the lane of its own steps.
  const inside = placeLevel(own, members, FRAME.pad, FRAME.label + LANE)
  const labelWidth = frameLabel(step).length * LABEL_CHARACTER + 2 * FRAME.pad
  const width = Math.max(labelWidth, ...inside.map(p => p.x + p.width + FRAME.pad))
  const height = Math.max(...inside.map(p => p.y + p.height)) + FRAME.pad
  return { step, width, height, inside }
}

/** Steps that depend only on one another, from (left, top): each box, then those inside it. */
function placeLevel (steps: FlowStep[], members: ReadonlyMap<string, FlowStep[]>, left: number, top: number): Placed[] {
  const layers = depths(steps)
  const blocks = steps.map(step => ({ ...blockOf(step, members), layer: Math.max(0, layers.get(step.name) ?? 0) }))
  const widths: number[] = []
  for (const b of blocks) widths[b.layer] = Math.max(widths[b.layer] ?? 0, b.width)
  const lefts: number[] = []
  for (let layer = 0, x = left; layer < widths.length; layer++) {
    lefts[layer] = x
    x += (widths[layer] ?? 0) + NODE.columnGap
  }
  const nextY = new Map<number, number>()
  return blocks.flatMap(({ step, width, height, inside, layer }) => {
    const x = lefts[layer] as number
    const y = nextY.get(layer) ?? top
    nextY.set(layer, y + height + NODE.rowGap)
    const columnRight = x + (widths[layer] as number)
    const moved = inside.map(p => ({ ...p, x: p.x + x, y: p.y + y, columnRight: p.columnRight + x, lane: p.lane + y }))
    return [{ step, x, y, width, height, layer, columnRight, lane: top - LANE, frame: inside.length > 0 }, ...moved]
  })
}

/**
 * The boxes of `steps` from (left, top): those outside any group by their dependencies, each
 * template group's inside its frame; a group comes before its steps.
 */
export function place (steps: FlowStep[], left = NODE.margin, top = NODE.top): Placed[] {
  const members = groupMembers(steps)
  return placeLevel(outsideGroups(steps), members, left, top)
}
