// The end of a `npm run simulate` run: per parent, its final phase, a table of what became of
// each thing it ran (a JobFlow's flows, an EphemeralJob's Pods, an OperationJob's targets, a
// CollaSet's Pods; DaemonJobs in simulate-daemonjob.ts), and the row `kubectl get` will show.
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { REVISION_LABEL } from '../controllers/collaset/pods.js'
import { isReady } from '../k8s/pods.js'
import type { Simulator } from '../simulator/simulator.js'
import { namespacedName } from '../simulator/objects.js'
import { formatSeconds } from './simulate-timeline.js'
import { alignRows, kubectlGet } from './printer-columns.js'
import { dependenciesText, flowSteps, jobCell, type FlowStep } from './flow-shape.js'
import { flowRecords, type FlowRecord } from './flow-records.js'
import { simulatedTemplates } from './flow-groups.js'
import { stepOfFlowName } from '../formats/jobflow-status.js'

/** A status time as simulated seconds (`t=20s`), `-` when there is none. */
export function timeOf (sim: Simulator): (value: unknown) => string {
  return value => (typeof value === 'string' ? `t=${formatSeconds(sim.secondsAt(value))}` : '-')
}

function statusOf (object: KubeObject): Record<string, unknown> {
  return isRecord(object.status) ? object.status : {}
}

/** `ns/name  Phase at t=…` and, for an invalid spec, why. */
function headline (sim: Simulator, object: KubeObject, phase: unknown, end: unknown, summary: string): string[] {
  const at = typeof end === 'string' ? ` at ${timeOf(sim)(end)}` : ''
  const phaseText = typeof phase === 'string' ? `  ${phase}` : ''
  const lines = [`${namespacedName(object.metadata)}${phaseText}${at}${summary !== '' ? ` (${summary})` : ''}`]
  const listed = statusOf(object).conditions
  const conditions: unknown[] = Array.isArray(listed) ? listed : []
  const valid = conditions.filter(isRecord).find((c: Record<string, unknown>) => c.type === 'Valid')
  if (valid?.status === 'False' && typeof valid.message === 'string') lines.push(`  invalid: ${valid.message}`)
  return lines
}

function table (rows: string[][]): string[] {
  return alignRows(rows, '  ').map(line => `  ${line}`)
}

/** What `kubectl get` shows for the object at the end of the simulation. */
export function kubectlLines (sim: Simulator, object: KubeObject, resource: string): string[] {
  const age = sim.seconds() - sim.secondsAt(object.metadata.creationTimestamp ?? sim.now().toISOString())
  const table = kubectlGet(object, age, sim.now().getTime())
  return [`  $ kubectl get ${resource} ${object.metadata.name}`, ...table.map(line => `  ${line}`)]
}

/** The final phase of a JobFlow and a table of its jobs. */
export function flowReport (sim: Simulator, flow: KubeObject): string[] {
  const status = statusOf(flow)
  // A template group's steps come right after it.
  const steps = flowSteps(flow, simulatedTemplates(sim, flow))
  const records = flowRecords(flow, steps.map(step => step.name))
  // A flow stands where its last attempt does; the earlier ones are counted apart.
  const flows = new Map(records.map(r => [String(r.name), r]))
  const counts = new Map<string, number>()
  for (const record of flows.values()) counts.set(String(record.phase), (counts.get(String(record.phase)) ?? 0) + 1)
  const others = [...counts].filter(([p]) => p !== 'Succeeded').map(([p, n]) => `${n} ${p.toLowerCase()}`)
  const earlier = records.length - flows.size
  if (earlier > 0) others.push(`${earlier} earlier attempt${earlier === 1 ? '' : 's'}`)
  const rest = others.length > 0 ? `, ${others.join(', ')}` : ''
  const summary = `${counts.get('Succeeded') ?? 0}/${flows.size} jobs succeeded${rest}`
  return [
    ...headline(sim, flow, status.phase, status.completionTime, summary),
    ...table(flowRows(sim, steps, records)),
    ...kubectlLines(sim, flow, 'jf')
  ]
}

/**
 * A row per attempt, the step's dependencies (AFTER) and `when` (when any step has one) first:
 * the table shows the flow's shape before its outcomes; OUTPUT when any step left one.
 */
function flowRows (sim: Simulator, shape: readonly FlowStep[], records: readonly FlowRecord[]): string[][] {
  const time = timeOf(sim)
  const steps = new Map(shape.map(step => [step.name, step]))
  const anyWhen = [...steps.values()].some(step => step.when !== undefined)
  const anyOutput = records.some(r => typeof r.output === 'string' && r.output !== '')
  const header = ['FLOW', 'AFTER', ...(anyWhen ? ['WHEN'] : []), 'JOB', 'PHASE', 'START', 'END',
    ...(anyOutput ? ['OUTPUT'] : []), 'MESSAGE']
  return [header, ...records.map(r => {
    const step = steps.get(stepOfFlowName(String(r.name)))
    const output = typeof r.output === 'string' && r.output !== '' ? r.output : '-'
    return [
      String(r.name), step !== undefined ? dependenciesText(step) : '-', ...(anyWhen ? [step?.when ?? '-'] : []),
      step !== undefined ? jobCell(step, String(r.jobName)) : String(r.jobName), String(r.phase), time(r.startTime),
      time(r.completionTime),
      ...(anyOutput ? [output] : []), typeof r.message === 'string' ? r.message : ''
    ]
  })]
}

/** The final phase of an EphemeralJob and what became of each Pod it chose. */
export function ephemeralJobReport (sim: Simulator, job: KubeObject): string[] {
  const status = statusOf(job)
  const count = (key: string): number => (typeof status[key] === 'number' ? status[key] : 0)
  const summary = `${count('match')} matched, ${count('succeeded')} succeeded, ${count('failed')} failed, ` +
    `${count('running')} running, ${count('waiting')} waiting`
  const time = timeOf(sim)
  const pods = (Array.isArray(status.pods) ? status.pods : []).filter(isRecord)
  return [
    ...headline(sim, job, status.phase, status.completionTime, summary),
    ...(pods.length === 0
      ? []
      : table([['POD', 'PHASE', 'END', 'MESSAGE'], ...pods.map(p => [
        String(p.name), String(p.phase), time(p.completionTime), typeof p.message === 'string' ? p.message : ''
      ])])),
    ...kubectlLines(sim, job, 'ejob')
  ]
}

/** The final progress of an OperationJob and each target's. */
export function operationJobReport (sim: Simulator, job: KubeObject): string[] {
  const status = statusOf(job)
  const details = (Array.isArray(status.targetDetails) ? status.targetDetails : []).filter(isRecord)
  const succeeded = details.filter(d => d.progress === 'Succeeded').length
  const failed = details.filter(d => d.progress === 'Failed').length
  const time = timeOf(sim)
  const detail = (d: Record<string, unknown>): string => {
    if (isRecord(d.error)) return `${String(d.error.reason)}: ${String(d.error.message ?? '')}`
    if (isRecord(d.extraInfo) && typeof d.extraInfo.NewPod === 'string') return `new Pod ${d.extraInfo.NewPod}`
    return ''
  }
  const summary = `${succeeded}/${details.length} targets succeeded${failed > 0 ? `, ${failed} failed` : ''}`
  return [
    ...headline(sim, job, status.progress, status.endTime, summary),
    ...table([['TARGET', 'PROGRESS', 'START', 'END', 'DETAIL'], ...details.map(d => [
      String(d.name), String(d.progress), time(d.startTime), time(d.endTime), detail(d)
    ])]),
    ...kubectlLines(sim, job, 'opj')
  ]
}

/** A CollaSet's counts and its Pods at the end. */
export function collaSetReport (sim: Simulator, collaset: KubeObject): string[] {
  const status = statusOf(collaset)
  const pods = sim.list({ apiVersion: 'v1', kind: 'Pod' }, collaset.metadata.namespace)
    .filter(p => p.metadata.ownerReferences?.some(o => o.uid === collaset.metadata.uid) === true)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
  const replicas = String((collaset.spec as Record<string, unknown>)?.replicas ?? '?')
  return [
    ...headline(sim, collaset, undefined, undefined, `${String(status.availableReplicas ?? 0)}/${replicas} available`),
    ...table([['POD', 'READY', 'REVISION'], ...pods.map(p => [
      p.metadata.name + (p.metadata.deletionTimestamp !== undefined ? ' (terminating)' : ''),
      isReady(p) ? 'Ready' : 'not Ready',
      p.metadata.labels?.[REVISION_LABEL] ?? ''
    ])]),
    ...kubectlLines(sim, collaset, 'cls')
  ]
}
