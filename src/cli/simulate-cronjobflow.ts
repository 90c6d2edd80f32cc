// A CronJobFlow at the end of a `simulate` run: every run it started over the simulated time, each
// with its schedule time, how it ended, and whether the history limits (or a Replace) took it
// away since — the timeline says when each came and went, the status what the CronJobFlow
// remembers — and the row `kubectl get cjf` will show.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import type { Simulator } from '../simulator/simulator.js'
import { namespacedName } from '../simulator/objects.js'
import { REPLACED_BY_ANNOTATION, SCHEDULED_TIME_ANNOTATION } from '../controllers/cronjobflow/runs.js'
import { formatSeconds } from './simulate-timeline.js'
import { alignRows } from './printer-columns.js'
import { kubectlLines, timeOf } from './simulate-reports.js'

interface RunRow { name: string, created: number, deleted?: number, object?: KubeObject }

/** The runs the CronJobFlow's controller created, in order, with when each was deleted (if it was). */
function runsOf (sim: Simulator, cron: KubeObject): RunRow[] {
  const rows = new Map<string, RunRow>()
  for (const event of sim.timeline) {
    if (event.object.kind !== 'JobFlow' || event.object.namespace !== cron.metadata.namespace) continue
    if (event.type === 'created' && event.owner?.name === cron.metadata.name) {
      rows.set(event.object.name, { name: event.object.name, created: event.seconds })
    } else if (event.type === 'deleted') {
      const row = rows.get(event.object.name)
      if (row !== undefined) row.deleted = event.seconds
    }
  }
  const existing = sim.list({ apiVersion: cron.apiVersion, kind: 'JobFlow' }, cron.metadata.namespace)
  for (const object of existing) {
    const row = rows.get(object.metadata.name)
    if (row !== undefined && row.deleted === undefined) row.object = object
  }
  return [...rows.values()]
}

function runCells (sim: Simulator, cron: KubeObject, row: RunRow): string[] {
  const time = timeOf(sim)
  const status = isRecord(row.object?.status) ? row.object.status : {}
  const annotations = row.object?.metadata.annotations ?? {}
  const scheduled = annotations[SCHEDULED_TIME_ANNOTATION]
  const replacedBy = annotations[REPLACED_BY_ANNOTATION]
  const note = row.deleted !== undefined
    ? `deleted at t=${formatSeconds(row.deleted)}`
    : typeof replacedBy === 'string' ? `replaced by ${replacedBy}` : ''
  return [
    row.name,
    typeof scheduled === 'string' ? time(scheduled) : scheduledByName(sim, cron, row.name),
    `t=${formatSeconds(row.created)}`,
    row.object === undefined ? '-' : String(status.phase ?? 'Pending'),
    time(status.completionTime),
    note
  ]
}

/** A deleted run's schedule time, read from its name (`<cronjobflow>-<unix minutes>`), else `manual`. */
function scheduledByName (sim: Simulator, cron: KubeObject, name: string): string {
  const minutes = name.slice(cron.metadata.name.length + 1)
  if (!/^[0-9]+$/.test(minutes)) return 'manual'
  return timeOf(sim)(new Date(Number(minutes) * 60_000).toISOString())
}

/** The CronJobFlow's phase, a row per run it started, and its `kubectl get` row. */
export function cronJobFlowReport (sim: Simulator, cron: KubeObject): string[] {
  const status = isRecord(cron.status) ? cron.status : {}
  const runs = runsOf(sim, cron)
  const deleted = runs.filter(r => r.deleted !== undefined).length
  const phase = typeof status.phase === 'string' ? `  ${status.phase}` : ''
  const next = typeof status.nextScheduleTime === 'string' ? `, next at ${timeOf(sim)(status.nextScheduleTime)}` : ''
  const lines = [`${namespacedName(cron.metadata)}${phase} (${runs.length} runs, ${deleted} deleted${next})`]
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).filter(isRecord)
  for (const condition of conditions) {
    if (condition.status === 'False' && typeof condition.message === 'string') {
      lines.push(`  ${condition.type === 'Valid' ? 'invalid' : String(condition.reason)}: ${condition.message}`)
    }
  }
  const rows = [['RUN', 'SCHEDULED', 'CREATED', 'PHASE', 'END', 'NOTE'], ...runs.map(row => runCells(sim, cron, row))]
  return [...lines, ...(runs.length > 0 ? alignRows(rows, '  ').map(line => `  ${line}`) : []),
    ...kubectlLines(sim, cron, 'cjf')]
}
