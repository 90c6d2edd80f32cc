// The page's views of one object, as HTML fragments the server builds from what it read (the page
// only places them): a JobFlow's graph, Gantt chart and attempts (a fan-out's items folded under
// their step, each attempt's logs a click away); the other kinds as `kubectl jobhooks get` draws
// them. Buttons name the plugin command they run (acts.ts); the page asks before it sends one.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { stepOfFlowName } from '../../formats/jobflow-status.js'
import { APPROVAL_WAITING } from '../../controllers/jobflow/approval.js'
import { flowRecords, type FlowRecord } from '../flow-records.js'
import { flowTemplates } from '../flow-groups.js'
import { liveFlowShape } from '../flow-shape.js'
import { legend } from '../picture-html.js'
import { dagSvg, escapeXml, ganttSvg } from '../picture-svg.js'
import { flowSeconds, view } from '../kubectl/get.js'
import type { Kind } from '../kubectl/kinds.js'
import { age, conditionLines, header, span } from '../kubectl/view-parts.js'

export interface Act { action: 'rerun' | 'suspend' | 'resume' | 'approve', steps?: string[], label: string }

const SUSPENDABLE = new Set(['JobFlow', 'DaemonJob', 'CronJobFlow'])
const FINISHED = new Set(['Succeeded', 'Failed'])

function button ({ action, steps, label }: Act): string {
  const stepsAttr = steps === undefined ? '' : ` data-steps="${escapeXml(steps.join(','))}"`
  return `<button type="button" class="act" data-act="${action}"${stepsAttr}>${escapeXml(label)}</button>`
}

/** What the page offers for the object as it is now: each the plugin would accept. */
export function actsOf (kind: Kind, object: KubeObject): Act[] {
  const acts: Act[] = []
  const status = isRecord(object.status) ? object.status : {}
  if (kind.kind === 'JobFlow' && FINISHED.has(String(status.phase))) acts.push({ action: 'rerun', label: 'Rerun' })
  if (SUSPENDABLE.has(kind.kind)) {
    const suspended = isRecord(object.spec) && object.spec.suspend === true
    acts.push(suspended ? { action: 'resume', label: 'Resume' } : { action: 'suspend', label: 'Suspend' })
  }
  if (kind.kind === 'JobFlow') {
    const waiting = flowRecords(object).filter(r => r.message?.startsWith(APPROVAL_WAITING) === true)
    for (const { name } of waiting) acts.push({ action: 'approve', steps: [name], label: `Approve ${name}` })
  }
  return acts
}

function cellOf (record: FlowRecord, now: Date): string[] {
  const started = record.startTime === undefined ? '-' : `${age(record.startTime, now)} ago`
  const running = record.completionTime === undefined && record.startTime !== undefined ? now : undefined
  return [record.name, String(record.attempt), record.phase, record.jobName ?? '-', started,
    span(record.startTime, record.completionTime, running), record.output ?? record.message ?? '']
}

function attemptRow (record: FlowRecord, now: Date, finished: boolean): string {
  const cells = cellOf(record, now).map(c => `<td>${escapeXml(c)}</td>`).join('')
  const item = /\[(\d+)\]$/.exec(record.name)?.[1]
  const step = stepOfFlowName(record.name)
  const logs = record.jobName !== undefined && record.startTime !== undefined
    ? `<button type="button" class="logs" data-step="${escapeXml(step)}" data-attempt="${record.attempt}"` +
      `${item !== undefined ? ` data-item="${item}"` : ''}>Logs</button>`
    : ''
  const rerun = finished && item === undefined
    ? button({ action: 'rerun', steps: [step], label: 'Rerun from here' })
    : ''
  return `<tr data-phase="${escapeXml(record.phase)}">${cells}<td>${logs}${rerun}</td></tr>`
}

/** Attempts by step; a fan-out step's items folded under a line that counts them by phase. */
function attemptsTable (flow: KubeObject, steps: string[], now: Date): string {
  const records = flowRecords(flow, steps)
  const finished = FINISHED.has(String(isRecord(flow.status) ? flow.status.phase : ''))
  const byStep = new Map<string, FlowRecord[]>()
  for (const record of records) {
    const step = stepOfFlowName(record.name)
    byStep.set(step, [...byStep.get(step) ?? [], record])
  }
  const head = '<thead><tr><th scope="col">Step</th><th scope="col">Attempt</th><th scope="col">Phase</th>' +
    '<th scope="col">Job</th><th scope="col">Started</th><th scope="col">Duration</th>' +
    '<th scope="col">Output or message</th><th scope="col">Actions</th></tr></thead>'
  const bodies = [...byStep.entries()].map(([step, attempts]) => {
    const items = attempts.filter(r => r.name !== step)
    if (items.length === 0) return `<tbody>${attempts.map(r => attemptRow(r, now, finished)).join('')}</tbody>`
    const phases = new Map<string, number>()
    for (const r of items) phases.set(r.phase, (phases.get(r.phase) ?? 0) + 1)
    const count = [...phases].map(([phase, n]) => `${n} ${phase}`).join(', ')
    const indices = new Set(items.map(r => r.name))
    return `<tbody class="fan-out" data-step="${escapeXml(step)}"><tr><td colspan="8"><details>` +
      `<summary>${escapeXml(`${step}: ${indices.size} items (${count})`)}</summary><table>` +
      `${items.map(r => attemptRow(r, now, false)).join('')}</table></details></td></tr></tbody>`
  })
  return `<table class="attempts">${head}${bodies.join('')}</table>`
}

function jobFlowDetail (flow: KubeObject, configMaps: KubeObject[], now: Date): string {
  const shape = liveFlowShape(flow, flowTemplates(flow, configMaps))
  const lines = [...header(flow, 'phase', now), ...conditionLines(flow)]
  return `<pre class="summary">${escapeXml(lines.join('\n'))}</pre>${legend()}` +
    `<h3>Steps and dependencies</h3><div class="picture">${dagSvg(shape)}</div>` +
    '<h3>Attempts</h3>' + attemptsTable(flow, shape.steps.map(s => s.name), now) +
    `<h3>Jobs over time (seconds since the flow started)</h3><div class="picture">${
      ganttSvg(shape, flowSeconds(flow, shape, now))}</div>`
}

/**
 * One object's view with its actions: `related` is what `kubectl jobhooks get` reads beside it (a
 * DaemonJob's Jobs, a CollaSet's Pods, a JobFlow's pinned templates, a CronJobFlow's runs).
 */
export function detailFragment (kind: Kind, object: KubeObject, related: KubeObject[], now: Date): string {
  const title = `${kind.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`
  const body = kind.kind === 'JobFlow'
    ? jobFlowDetail(object, related, now)
    : `<pre class="view">${escapeXml(view(kind, object, related, now).join('\n'))}</pre>`
  return `<h2>${escapeXml(title)}</h2><div class="acts">${actsOf(kind, object).map(button).join('')}</div>${body}`
}
