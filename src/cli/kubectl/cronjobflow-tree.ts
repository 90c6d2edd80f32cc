// `kubectl jobhooks get cjf <name>`: a CronJobFlow and its runs. Its header says when it runs
// (schedule, time zone, concurrencyPolicy, suspend), when it last ran and runs next, and why it
// started nothing (the Scheduled condition when False) or cannot act (Valid False). Then a row per
// run, oldest first as the controller orders them (the schedule time, else the creation): its
// phase, Jobs, the time it was scheduled for (`manual` for `kubectl jobhooks trigger`), how long
// ago it started and finished, and the run that replaced it under concurrencyPolicy Replace.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { timestamp } from '../../k8s/time.js'
import {
  INSTANTIATE_ANNOTATION, JOBFLOW_GROUP, observedRuns, REPLACED_BY_ANNOTATION, type Run
} from '../../controllers/cronjobflow/runs.js'
import { alignRows, humanAge } from '../printer-columns.js'
import { age, field, header, statusOf } from './view-parts.js'

/** A time of the status with how far it is from now: `… (5m ago)`, `… (in 22h)`; '-' when absent. */
function when (time: string | undefined, now: Date): string {
  if (time === undefined) return '-'
  const at = Date.parse(time)
  if (Number.isNaN(at)) return time
  const ahead = at - now.getTime()
  return ahead > 0 ? `${time} (in ${humanAge(ahead / 1000)})` : `${time} (${age(time, now)} ago)`
}

/** The conditions that say why no run starts: Valid and Scheduled, each when False. */
function whyNotLines (cronJobFlow: KubeObject): string[] {
  const listed = statusOf(cronJobFlow).conditions
  const conditions = Array.isArray(listed) ? listed as unknown[] : []
  return ['Valid', 'Scheduled'].flatMap(type => conditions.filter(isRecord)
    .filter(c => c.type === type && c.status === 'False')
    .map(c => `${type}:${' '.repeat(11 - type.length)}` +
      `${typeof c.message === 'string' ? c.message : String(c.reason ?? '')}`))
}

/** What the schedule says: `0 2 * * * (Europe/Berlin), concurrencyPolicy Forbid, suspend false`. */
function scheduleLine (cronJobFlow: KubeObject): string {
  const spec = isRecord(cronJobFlow.spec) ? cronJobFlow.spec : {}
  const zone = typeof spec.timeZone === 'string' && spec.timeZone !== '' ? spec.timeZone : 'UTC'
  const policy = typeof spec.concurrencyPolicy === 'string' ? spec.concurrencyPolicy : 'Allow'
  return `Schedule:   ${String(spec.schedule ?? '-')} (${zone}), concurrencyPolicy ${policy}, ` +
    `suspend ${String(spec.suspend === true)}`
}

function runRow (run: Run, now: Date): string[] {
  const flow = run.object
  const annotations = flow.metadata.annotations ?? {}
  const scheduled = run.scheduledMs !== undefined
    ? timestamp(new Date(run.scheduledMs))
    : annotations[INSTANTIATE_ANNOTATION] === 'manual' ? 'manual' : '-'
  const started = field(flow, 'startTime')
  const finished = field(flow, 'completionTime')
  const replacedBy = annotations[REPLACED_BY_ANNOTATION]
  return [run.name, field(flow, 'phase') ?? 'Pending', field(flow, 'jobsSucceeded') ?? '-', scheduled,
    started === undefined ? '-' : age(started, now), finished === undefined ? '-' : age(finished, now),
    replacedBy === undefined ? '' : `replaced by ${replacedBy}`]
}

/** The view's lines: the CronJobFlow, then its runs (`jobFlows`: the JobFlows labelled with its name). */
export function cronJobFlowTree (cronJobFlow: KubeObject, jobFlows: KubeObject[], now: Date): string[] {
  const children = { [JOBFLOW_GROUP]: Object.fromEntries(jobFlows.map(flow => [flow.metadata.name, flow])) }
  const runs = observedRuns(children, cronJobFlow.metadata.name)
  const rows = [['RUN', 'PHASE', 'JOBS', 'SCHEDULED', 'STARTED', 'FINISHED', 'MESSAGE'],
    ...runs.map(run => runRow(run, now))]
  return [
    ...header(cronJobFlow, 'phase', now),
    scheduleLine(cronJobFlow),
    `Last:       ${when(field(cronJobFlow, 'lastScheduleTime'), now)}`,
    `Next:       ${when(field(cronJobFlow, 'nextScheduleTime'), now)}`,
    ...whyNotLines(cronJobFlow),
    '',
    ...alignRows(rows)
  ]
}
