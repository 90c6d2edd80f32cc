// Caps on Jobs at once. A fan-out step's `parallelism`: at most N of its items running. And
// `spec.parallelism`: at most N of a JobFlow's Jobs unfinished at once, items included, as Argo's
// workflow-level parallelism. What this sync would start beyond the free slots waits for a Job to
// finish (that change of a child syncs the JobFlow again): the first in dependency order, then by
// step name and item index, start.
import type { FlowSpec } from './spec.js'
import type { PlannedFlow } from './fanout.js'
import { isUnderway, type JobRecord } from './records.js'

/** Where a flow stands, as far as the cap reads it (flows.ts FlowState). */
interface Standing {
  readonly flow: PlannedFlow
  readonly current?: JobRecord
}

/** How a flow the cap holds back waits. */
export function heldMessage (limit: number): string {
  return `waiting: at most ${limit} Jobs of the JobFlow at once (spec.parallelism)`
}

/**
 * The flows among `due` (about to create their Job) that `limit` holds back, given the Jobs of
 * `flows` that have not finished (Running, or Queued by Kueue: created, and so counted).
 */
export function heldByParallelism (
  limit: number | undefined,
  steps: readonly FlowSpec[],
  flows: ReadonlyMap<string, Standing>,
  due: ReadonlySet<string>
): Set<string> {
  if (limit === undefined || due.size === 0) return new Set()
  let unfinished = 0
  // A template group runs no Job of its own: its steps' Jobs are what count.
  for (const state of flows.values()) {
    if (state.flow.group === undefined && state.current !== undefined && isUnderway(state.current)) unfinished++
  }
  const free = Math.max(0, limit - unfinished)
  if (due.size <= free) return new Set()
  const depth = depths(steps)
  const rank = (name: string): [number, string, number] => {
    const { flow } = flows.get(name) as Standing
    const step = flow.item?.step ?? flow.name
    return [depth.get(step) ?? 0, step, flow.item?.index ?? -1]
  }
  const order = [...due].map(name => ({ name, key: rank(name) })).sort((a, b) =>
    a.key[0] - b.key[0] || (a.key[1] < b.key[1] ? -1 : a.key[1] > b.key[1] ? 1 : 0) || a.key[2] - b.key[2])
  return new Set(order.slice(free).map(entry => entry.name))
}

/** Each step's depth in the DAG: 0 for a root, else one more than its deepest dependency. */
function depths (steps: readonly FlowSpec[]): Map<string, number> {
  const depth = new Map<string, number>()
  // `steps` are in dependency order: every dependency's depth is known before its dependants'.
  for (const step of steps) depth.set(step.name, Math.max(-1, ...step.dependencies.map(d => depth.get(d) ?? 0)) + 1)
  return depth
}

/** For each fan-out step with a `parallelism`: how many more of its items may start now. */
export function itemSlots (flows: ReadonlyMap<string, Standing>): Map<string, number> {
  const slots = new Map<string, number>()
  for (const { flow, current } of flows.values()) {
    if (flow.item?.parallelism === undefined) continue
    const left = slots.get(flow.item.step) ?? flow.item.parallelism
    slots.set(flow.item.step, current !== undefined && isUnderway(current) ? left - 1 : left)
  }
  return slots
}

/** Whether `flow` may start now under its step's `parallelism`, taking a slot if so. */
export function takeSlot (slots: Map<string, number>, flow: PlannedFlow): boolean {
  if (flow.item?.parallelism === undefined) return true
  const left = slots.get(flow.item.step) ?? 0
  if (left <= 0) return false
  slots.set(flow.item.step, left - 1)
  return true
}
