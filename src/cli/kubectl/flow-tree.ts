// `kubectl jobhooks get jf <name>`: a JobFlow as a tree in dependency order. Each step sits one
// level deeper than its deepest dependency and after all of them; a row per attempt says its
// phase, Job, when it started, how long it ran, its output (cut) and why it waits or was skipped.
// A fan-out step has a row of its own and its items as rows under it. A template group's steps
// follow it one level deeper, in their own dependency order (their AFTER names steps as their
// template does). Exit steps (spec.onExit) come last, one level under an `onExit` row: they run
// after the whole DAG, not after its last step.
import type { KubeObject } from '../../k8s/types.js'
import { stepOfFlowName } from '../../formats/jobflow-status.js'
import {
  dependenciesText, flowSteps, groupMembers, jobCell, outsideGroups, type FlowStep
} from '../flow-shape.js'
import { flowRecords, type FlowRecord } from '../flow-records.js'
import type { FlowTemplates } from '../flow-groups.js'
import { depths } from '../picture-layout.js'
import { alignRows } from '../printer-columns.js'
import { age, conditionLines, field, header, span } from './view-parts.js'

/** Outputs are cut to this many characters in the tree; `-o json` has them whole. */
const OUTPUT_WIDTH = 30

/** The steps in dependency order: by depth, then as the spec lists them. */
export function dependencyOrder (steps: FlowStep[]): Array<{ step: FlowStep, depth: number }> {
  const depth = depths(steps)
  return steps.map((step, index) => ({ step, depth: Math.max(0, depth.get(step.name) ?? 0), index }))
    .sort((a, b) => a.depth - b.depth || a.index - b.index)
    .map(({ step, depth }) => ({ step, depth }))
}

/** An output on one line, cut: newlines as ⏎, `…` where it was cut. */
export function cutOutput (output: string | undefined): string {
  if (output === undefined) return '-'
  if (output === '') return "''"
  const line = output.replace(/\r?\n/g, '⏎')
  return line.length > OUTPUT_WIDTH ? `${line.slice(0, OUTPUT_WIDTH - 1)}…` : line
}

function recordRow (record: FlowRecord, label: string, now: Date): string[] {
  const started = record.startTime === undefined ? '-' : age(record.startTime, now)
  const duration = span(record.startTime, record.completionTime, record.phase === 'Running' ? now : undefined)
  return [label, record.phase, String(record.attempt), record.jobName ?? '-', started, duration,
    cutOutput(record.output), record.message ?? '']
}

/** The rows of `steps` in dependency order from `depth`, each template group's steps after it, a level deeper. */
function treeRows (
  steps: FlowStep[], depth: number, members: ReadonlyMap<string, FlowStep[]>, records: FlowRecord[], now: Date
): string[][] {
  return dependencyOrder(steps).flatMap(({ step, depth: own }) => [
    ...stepRows(step, depth + own, records, now),
    ...treeRows(members.get(step.name) ?? [], depth + own + 1, members, records, now)
  ])
}

/** The rows of one step: its attempts, or for a fan-out step a summary row and its items' attempts. */
function stepRows (step: FlowStep, depth: number, records: FlowRecord[], now: Date): string[][] {
  const indent = '  '.repeat(depth)
  const after = dependenciesText(step)
  const own = records.filter(r => r.name === step.name)
  const items = records.filter(r => r.name !== step.name && stepOfFlowName(r.name) === step.name)
  const when = step.when === undefined ? '' : ` when ${step.when}`
  if (items.length === 0 && own.length === 0) {
    return [[`${indent}${step.name}`, after, 'Pending', '-', '-', '-', '-', '-', `no record yet${when}`]]
  }
  const rows = own.map(r => {
    const [label = '', phase = '', attempt = '', job = '', ...rest] = recordRow(r, `${indent}${step.name}`, now)
    return [label, after, phase, attempt, jobCell(step, job), ...rest]
  })
  if (items.length > 0) {
    const count = new Set(items.map(r => r.name)).size
    rows.push([`${indent}${step.name}`, after, step.phase, '-', `${count} items`, '-', '-', '-', when.trim()])
    for (const r of items) {
      const [label = '', ...rest] = recordRow(r, `${indent}  ${r.name}`, now)
      rows.push([label, '', ...rest])
    }
  }
  return rows
}

/**
 * The tree's lines: the flow's header, its conditions worth reading, then the table; `templates`
 * are those the flow pinned, for its template groups' steps.
 */
export function flowTree (jobflow: KubeObject, now: Date, templates?: FlowTemplates): string[] {
  const records = flowRecords(jobflow)
  const rows = [['STEP', 'AFTER', 'PHASE', 'ATTEMPT', 'JOB', 'STARTED', 'DURATION', 'OUTPUT', 'MESSAGE']]
  const steps = flowSteps(jobflow, templates)
  const members = groupMembers(steps)
  const outside = outsideGroups(steps)
  rows.push(...treeRows(outside.filter(s => s.exit !== true), 0, members, records, now))
  const exits = outside.filter(s => s.exit === true)
  // No step reads as this row: step names are lowercase RFC 1123 labels.
  if (exits.length > 0) rows.push(['onExit'])
  rows.push(...treeRows(exits, 1, members, records, now))
  const extra = [`Jobs:       ${field(jobflow, 'jobsSucceeded') ?? '-'} succeeded`]
  return [...header(jobflow, 'phase', now), ...extra, ...conditionLines(jobflow), '', ...alignRows(rows)]
}
