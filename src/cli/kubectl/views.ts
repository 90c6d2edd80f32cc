// `kubectl jobhooks get <kind> <name>` for the kinds other than JobFlow: a DaemonJob by node, an
// EphemeralJob by pod and container, an OperationJob by target, a CollaSet by pod. Each view is a
// pure function of the object and of the children or Pods the command read beside it.
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { jobFailureMessage, jobFinishTime, jobOutcome, jobStartTime } from '../../k8s/jobs.js'
import { isReady, podPhaseOf, serviceReadyCondition, serviceReadyStatus } from '../../k8s/pods.js'
import { originOf, wantsReplace } from '../../k8s/labels.js'
import { nodeOfJob } from '../../controllers/daemonjob/job.js'
import { REVISION_LABEL, UPDATE_INCLUDED_LABEL } from '../../controllers/collaset/pods.js'
import { IN_PLACE_REASON, RECREATE_REASON } from '../../controllers/collaset/inplace.js'
import { findCondition } from '../../k8s/conditions.js'
import { alignRows } from '../printer-columns.js'
import { age, conditionLines, field, header, span, statusOf } from './view-parts.js'

const records = (value: unknown): Array<Record<string, unknown>> => Array.isArray(value) ? value.filter(isRecord) : []
const text = (value: unknown): string | undefined => typeof value === 'string' ? value : undefined
const optionalLine = (label: string, value: string | undefined): string[] => value === undefined ? [] : [label + value]

/** The value at `path` in `value`, undefined where the path ends early. */
function valueAt (value: unknown, ...path: string[]): unknown {
  return path.reduce<unknown>((v, key) => isRecord(v) ? v[key] : undefined, value)
}

/** Counts of a status as `succeeded 2, failed 1`, the absent ones left out. */
function counts (object: KubeObject, keys: string[]): string {
  return keys.flatMap(key => field(object, key) === undefined ? [] : [`${key} ${field(object, key) as string}`])
    .join(', ')
}

function jobPhase (job: KubeObject): string {
  const outcome = jobOutcome(job)
  if (outcome !== undefined) return outcome
  return isRecord(job.spec) && job.spec.suspend === true ? 'Suspended' : 'Running'
}

/** A DaemonJob by node: its Jobs as they run, and what its status remembers of Jobs gone. */
export function daemonJobView (daemonJob: KubeObject, jobs: KubeObject[], now: Date): string[] {
  const status = statusOf(daemonJob)
  const byNode = new Map<string, string[]>()
  for (const job of jobs) {
    const node = nodeOfJob(job) ?? '?'
    const phase = jobPhase(job)
    const start = jobStartTime(job)
    const end = jobFinishTime(job)
    byNode.set(node, [node, phase, job.metadata.name, start === undefined ? '-' : age(start, now),
      span(start, end, phase === 'Running' ? now : undefined), phase === 'Failed' ? jobFailureMessage(job) : ''])
  }
  for (const node of Array.isArray(status.succeededNodes) ? status.succeededNodes : []) {
    if (typeof node === 'string' && !byNode.has(node)) byNode.set(node, [node, 'Succeeded', '-', '-', '-', 'Job gone'])
  }
  for (const failed of records(status.failedNodes)) {
    const node = text(failed.name)
    if (node === undefined || byNode.has(node)) continue
    byNode.set(node, [node, 'Failed', text(failed.jobName) ?? '-', '-', '-', text(failed.message) ?? ''])
  }
  const rows = [...byNode.values()].sort((a, b) => (a[0] as string).localeCompare(b[0] as string))
  return [
    ...header(daemonJob, 'phase', now),
    `Nodes:      ${counts(daemonJob, ['desired', 'active', 'queued', 'waiting', 'succeeded', 'failed'])}`,
    // What holds Jobs back (paused, nodeParallelism, failurePolicy) or what it waits for.
    ...(typeof status.message === 'string' ? [`Message:    ${status.message}`] : []),
    ...conditionLines(daemonJob),
    '',
    ...alignRows([['NODE', 'PHASE', 'JOB', 'STARTED', 'DURATION', 'MESSAGE'], ...rows])
  ]
}

/** An ephemeral container's state in its Pod: running, waiting, exited N, or not injected yet. */
function containerState (pod: KubeObject | undefined, container: string): string {
  const statuses = records(isRecord(pod?.status) ? pod.status.ephemeralContainerStatuses : undefined)
  const state = statuses.find(s => s.name === container)?.state
  if (!isRecord(state)) return pod === undefined ? 'Pod gone' : 'not injected'
  if (isRecord(state.terminated)) return `exited ${String(state.terminated.exitCode ?? '?')}`
  if (isRecord(state.waiting)) return `waiting (${text(state.waiting.reason) ?? '?'})`
  return 'running'
}

/** An EphemeralJob by pod and container: each chosen Pod's record, and each of its containers' state. */
export function ephemeralJobView (ephemeralJob: KubeObject, pods: KubeObject[], now: Date): string[] {
  const template = isRecord(ephemeralJob.spec) && isRecord(ephemeralJob.spec.template) ? ephemeralJob.spec.template : {}
  const containers = records(template.ephemeralContainers).flatMap(c => typeof c.name === 'string' ? [c.name] : [])
  const rows = [['POD', 'PHASE', 'CONTAINER', 'STATE', 'FINISHED', 'MESSAGE']]
  for (const record of records(statusOf(ephemeralJob).pods)) {
    const name = text(record.name) ?? '?'
    const pod = pods.find(p => p.metadata.name === name && (record.uid === undefined || p.metadata.uid === record.uid))
    const finished = text(record.completionTime)
    containers.forEach((container, i) => {
      rows.push([i === 0 ? name : '', i === 0 ? text(record.phase) ?? '?' : '', container,
        containerState(pod, container), i === 0 && finished !== undefined ? `${age(finished, now)} ago` : '',
        i === 0 ? text(record.message) ?? '' : ''])
    })
  }
  return [
    ...header(ephemeralJob, 'phase', now),
    `Pods:       ${counts(ephemeralJob, ['match', 'succeeded', 'failed', 'running', 'waiting'])}`,
    ...conditionLines(ephemeralJob),
    '',
    ...alignRows(rows)
  ]
}

/** An OperationJob by target: progress, times, the action's extra info and the error. */
export function operationJobView (operationJob: KubeObject, now: Date): string[] {
  const spec = isRecord(operationJob.spec) ? operationJob.spec : {}
  const details = new Map(records(statusOf(operationJob).targetDetails).map(d => [text(d.name), d]))
  const rows = [['TARGET', 'PROGRESS', 'STARTED', 'DURATION', 'INFO', 'ERROR']]
  for (const target of records(spec.targets)) {
    const name = text(target.name) ?? '?'
    const detail = details.get(name) ?? {}
    const progress = text(detail.progress) ?? 'Pending'
    const start = text(detail.startTime)
    const info = isRecord(detail.extraInfo)
      ? Object.entries(detail.extraInfo).map(([key, value]) => `${key}=${String(value)}`).join(', ')
      : ''
    const error = isRecord(detail.error) ? `${String(detail.error.reason)}: ${String(detail.error.message ?? '')}` : ''
    rows.push([name, progress, start === undefined ? '-' : age(start, now),
      span(start, text(detail.endTime), progress === 'Processing' ? now : undefined), info, error])
  }
  const total = field(operationJob, 'totalPodCount') ?? records(spec.targets).length
  const done = `${field(operationJob, 'succeededPodCount') ?? 0} succeeded, ` +
    `${field(operationJob, 'failedPodCount') ?? 0} failed of ${total}`
  const partition = typeof spec.partition === 'number' ? `, partition ${spec.partition}` : ''
  return [
    ...header(operationJob, 'progress', now),
    `Action:     ${text(spec.action) ?? '-'}${partition}`,
    `Targets:    ${done}`,
    ...conditionLines(operationJob),
    '',
    ...alignRows(rows)
  ]
}

/** `2/2`: how many of a Pod's containers are ready. */
function readyContainers (pod: KubeObject): string {
  const statuses = records(isRecord(pod.status) ? pod.status.containerStatuses : undefined)
  const declared = isRecord(pod.spec) && Array.isArray(pod.spec.containers) ? pod.spec.containers.length : 0
  return `${statuses.filter(s => s.ready === true).length}/${Math.max(declared, statuses.length)}`
}

/** Seconds from `now` to `time`, as `20s`; 0 once it passed. */
function secondsUntil (time: string | undefined, now: Date): string {
  const at = time === undefined ? NaN : Date.parse(time)
  return Number.isNaN(at) ? '?' : `${Math.max(0, Math.ceil((at - now.getTime()) / 1000))}s`
}

/** Where a CollaSet's rollout stands and what holds it, from its Update condition (and spec for the figures). */
function rolloutState (collaSet: KubeObject, now: Date): string | undefined {
  const update = findCondition(statusOf(collaSet).conditions, 'Update')
  if (update === undefined) return undefined
  const strategy = valueAt(collaSet.spec, 'updateStrategy')
  switch (update.reason) {
    case 'Paused': return 'paused'
    case 'Partitioned':
      return `partition ${String(valueAt(strategy, 'rollingUpdate', 'byPartition', 'partition') ?? 0)}`
    case 'ByLabel': return `byLabel: only Pods labelled ${UPDATE_INCLUDED_LABEL}`
    case 'OperationDelay':
      return `waiting ${secondsUntil(field(collaSet, 'nextUpdateTime'), now)} ` +
        `(operationDelaySeconds ${String(valueAt(strategy, 'operationDelaySeconds') ?? '-')})`
    case 'Updated': return 'done'
    case 'InPlaceImpossible': return 'held: podUpgradePolicy InPlaceOnly, and a Pod cannot take the template in place'
    default: return update.reason === undefined ? undefined : update.reason.toLowerCase()
  }
}

/** What the rollout does to the Pod, as its service-ready condition's reason says. */
function updating (pod: KubeObject): string {
  const gate = serviceReadyCondition(pod)
  if (gate?.status !== 'False') return ''
  if (gate.reason === IN_PLACE_REASON) return 'updating in place'
  return gate.reason === RECREATE_REASON ? 'to be recreated' : ''
}

/** A CollaSet by pod: readiness, serving, revision (`*` marks the updated one) and replacements. */
export function collaSetView (collaSet: KubeObject, pods: KubeObject[], now: Date): string[] {
  const updated = field(collaSet, 'updatedRevision')
  const rows = [['POD', 'READY', 'PHASE', 'SERVICE-READY', 'REVISION', 'AGE', 'REPLACE']]
  for (const pod of [...pods].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const revision = pod.metadata.labels?.[REVISION_LABEL] ?? '-'
    const origin = originOf(pod)
    const replace = origin !== undefined ? `replaces ${origin}` : wantsReplace(pod) ? 'to be replaced' : updating(pod)
    const created = pod.metadata.creationTimestamp
    const ready = `${readyContainers(pod)}${isReady(pod) ? '' : ' (not Ready)'}`
    rows.push([pod.metadata.name, ready, podPhaseOf(pod) ?? '-', serviceReadyStatus(pod) ?? '-',
      revision === updated ? `${revision}*` : revision, created === undefined ? '-' : age(created, now), replace])
  }
  const replicas = isRecord(collaSet.spec) ? String(collaSet.spec.replicas ?? '-') : '-'
  return [
    ...header(collaSet, undefined, now),
    `Replicas:   ${replicas} desired, ${counts(collaSet, ['replicas', 'scheduledReplicas', 'readyReplicas',
      'availableReplicas', 'operatingReplicas', 'updatedReplicas'])}`,
    `Revisions:  updated ${updated ?? '-'} (*), current ${field(collaSet, 'currentRevision') ?? '-'}`,
    ...optionalLine('Rollout:    ', rolloutState(collaSet, now)),
    ...conditionLines(collaSet),
    '',
    ...alignRows(rows)
  ]
}
