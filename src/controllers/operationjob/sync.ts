// The OperationJob sync and finalize hooks: from the observed job and its target Pods to the
// status that describes every target and the effects its action still owes. No children: what an
// action does to Pods it does not own (inject ephemeral containers, label, evict) is an effect,
// and so is the job's own deletion after its TTL. Pure: the clock only stamps times that are then
// carried forward (law 3).
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import { timestamp } from '../../k8s/time.js'
import { validityConditions } from '../common/validity.js'
import type { ActionContext, ActionRegistry, ActionTarget, TargetDetail, TargetError, TargetProgress } from '../../actions/registry.js'
import { actionJob, parseOperationJobSpec, type OperationJobSpec } from './spec.js'

export type JobProgress = 'Pending' | 'Processing' | 'Failed' | 'Succeeded'

const PROGRESS = new Set<string>(['Pending', 'Processing', 'Failed', 'Succeeded'])
export const DEADLINE_EXCEEDED = 'DeadlineExceeded'
export const POD_NOT_FOUND = 'PodNotFound'
export const CANCELLED = 'Cancelled'
/** extraInfo key set once a failed target has nothing left to undo. */
export const RELEASED = 'Released'
/** How soon finalize is called again while releases are still owed. */
export const RELEASE_RETRY_SECONDS = 5

const isFinished = (p: string | undefined): boolean => p === 'Succeeded' || p === 'Failed'

/** The previous `status.targetDetails` by target name; malformed entries are ignored. */
export function readDetails (value: unknown): Map<string, TargetDetail> {
  const details = new Map<string, TargetDetail>()
  if (!Array.isArray(value)) return details
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.progress !== 'string' || !PROGRESS.has(entry.progress) || details.has(entry.name)) continue
    const extraInfo = isRecord(entry.extraInfo)
      ? Object.fromEntries(Object.entries(entry.extraInfo).filter((kv): kv is [string, string] => typeof kv[1] === 'string'))
      : undefined
    const error = isRecord(entry.error) && typeof entry.error.reason === 'string'
      ? { reason: entry.error.reason, message: typeof entry.error.message === 'string' ? entry.error.message : '' }
      : undefined
    details.set(entry.name, detail({
      name: entry.name,
      progress: entry.progress as TargetProgress,
      ...(typeof entry.startTime === 'string' ? { startTime: entry.startTime } : {}),
      ...(typeof entry.endTime === 'string' ? { endTime: entry.endTime } : {}),
      ...(extraInfo !== undefined ? { extraInfo } : {}),
      ...(error !== undefined ? { error } : {})
    }))
  }
  return details
}

/** A detail with its fields in one order, extraInfo keys sorted, nothing empty (an empty value removes its key): identical input, identical bytes. */
function detail (d: TargetDetail): TargetDetail {
  const out: TargetDetail = { name: d.name, progress: d.progress }
  if (d.startTime !== undefined) out.startTime = d.startTime
  if (d.endTime !== undefined) out.endTime = d.endTime
  const keys = Object.keys(d.extraInfo ?? {}).filter(k => d.extraInfo?.[k] !== '').sort()
  if (keys.length > 0) out.extraInfo = Object.fromEntries(keys.map(k => [k, (d.extraInfo as Record<string, string>)[k] as string]))
  if (d.error !== undefined && d.progress !== 'Succeeded') out.error = { reason: d.error.reason, message: d.error.message }
  return out
}

export function syncOperationJob (request: SyncRequest, context: HookContext, registry: ActionRegistry): SyncAnswer {
  return reconcile(request, context, registry, request.finalizing === true)
}

export function finalizeOperationJob (request: SyncRequest, context: HookContext, registry: ActionRegistry): SyncAnswer {
  return reconcile(request, context, registry, true)
}

function reconcile (request: SyncRequest, context: HookContext, registry: ActionRegistry, finalizing: boolean): SyncAnswer {
  const { parent } = request
  const now = context.now
  const nowMs = now.getTime()
  const previous = isRecord(parent.status) ? parent.status : {}
  const memory = readDetails(previous.targetDetails)
  const parsed = parseOperationJobSpec(parent, registry, context.scripts)
  if (!parsed.ok) return refuse(parent, previous, memory, parsed.problems, now, finalizing)
  const spec = parsed.value
  const job = actionJob(parent)
  const namespace = parent.metadata.namespace
  const pods = new Map<string, KubeObject>()
  for (const pod of objectsOf(request.related, 'Pod', 'v1')) {
    if (namespace === undefined || pod.metadata.namespace === namespace) pods.set(pod.metadata.name, pod)
  }
  const actionContext: ActionContext = { job, related: request.related ?? {}, now, scripts: context.scripts }
  const { handler } = spec.action
  const stamp = timestamp(now)
  const wasFinished = isFinished(previous.progress as string | undefined)

  const details = spec.targets.map(t => memory.get(t.name) ?? { name: t.name, progress: 'Pending' as TargetProgress })
  const targetOf = (i: number): ActionTarget => {
    const t = spec.targets[i] as OperationJobTarget
    const pod = pods.get(t.name)
    return { name: t.name, containers: t.containers, ...(pod !== undefined ? { pod } : {}), detail: details[i] as TargetDetail }
  }
  const effects: Effect[] = []
  const due: number[] = []
  /** Merges what an action said into target i's extraInfo. */
  const remember = (i: number, extraInfo: Record<string, string> | undefined): void => {
    if (extraInfo === undefined) return
    const d = details[i] as TargetDetail
    details[i] = detail({ ...d, extraInfo: { ...d.extraInfo, ...extraInfo } })
  }
  const finish = (i: number, progress: 'Succeeded' | 'Failed', error?: TargetError, extraInfo?: Record<string, string>): void => {
    const d = details[i] as TargetDetail
    details[i] = detail({ ...d, progress, endTime: d.endTime ?? stamp, extraInfo: { ...d.extraInfo, ...extraInfo }, ...(error !== undefined ? { error } : {}) })
  }

  if (!wasFinished) {
    const selected = selection(details, spec)
    details.forEach((d, i) => {
      if (isFinished(d.progress)) return
      if (d.progress === 'Processing') {
        // A started target always has a start (a status written by hand may lack one).
        if (d.startTime === undefined) details[i] = detail({ ...d, startTime: stamp })
        remember(i, handler.observe?.(targetOf(i), actionContext))
        const read = handler.progress(targetOf(i), actionContext)
        if (read.progress !== 'Processing') {
          finish(i, read.progress, read.error ?? (read.progress === 'Failed' ? { reason: 'Failed', message: `the ${spec.action.name} action failed` } : undefined), read.extraInfo)
          return
        }
        remember(i, read.extraInfo)
        if (finalizing) {
          finish(i, 'Failed', { reason: CANCELLED, message: 'the OperationJob was deleted before this target finished' })
          return
        }
        const deadlineAt = Date.parse((details[i] as TargetDetail).startTime ?? stamp) + spec.activeDeadlineSeconds * 1000
        if (nowMs >= deadlineAt) {
          finish(i, 'Failed', { reason: DEADLINE_EXCEEDED, message: `the target did not finish within activeDeadlineSeconds (${spec.activeDeadlineSeconds}s) of its start` })
          return
        }
        operate(i, deadlineAt)
        return
      }
      // Pending: start it when the partition has room for it.
      if (finalizing || !selected.has(i)) return
      if (!pods.has(d.name)) {
        details[i] = detail({ ...d, progress: 'Failed', startTime: stamp, endTime: stamp, error: { reason: POD_NOT_FOUND, message: `Pod ${d.name} does not exist` } })
        return
      }
      details[i] = detail({ ...d, progress: 'Processing', startTime: stamp })
      remember(i, handler.observe?.(targetOf(i), actionContext))
      operate(i, nowMs + spec.activeDeadlineSeconds * 1000)
    })
  }

  function operate (i: number, deadlineAt: number): void {
    const result = handler.operate(targetOf(i), actionContext)
    if (result.error !== undefined) {
      finish(i, 'Failed', result.error, result.extraInfo)
      return
    }
    remember(i, result.extraInfo)
    effects.push(...result.effects)
    due.push(deadlineAt)
    if (result.resyncAfterSeconds !== undefined) due.push(nowMs + Math.max(1, result.resyncAfterSeconds) * 1000)
  }

  // Failed targets are released until their action owes nothing more for them.
  let owed = 0
  details.forEach((d, i) => {
    if (d.progress !== 'Failed' || d.extraInfo?.[RELEASED] === 'true') return
    const result = handler.release(targetOf(i), actionContext)
    const extraInfo = { ...d.extraInfo, ...result.extraInfo }
    if (result.effects.length === 0) extraInfo[RELEASED] = 'true'
    else owed++
    effects.push(...result.effects)
    details[i] = detail({ ...d, extraInfo })
  })

  const succeeded = details.filter(d => d.progress === 'Succeeded').length
  const failed = details.filter(d => d.progress === 'Failed').length
  let progress: JobProgress
  if (wasFinished) progress = previous.progress as JobProgress
  else if (succeeded + failed === details.length) progress = failed > 0 ? 'Failed' : 'Succeeded'
  else if (details.every(d => d.progress === 'Pending')) progress = 'Pending'
  else progress = 'Processing'
  const startTime = typeof previous.startTime === 'string' ? previous.startTime : stamp
  const endTime = typeof previous.endTime === 'string' ? previous.endTime : (isFinished(progress) ? stamp : undefined)

  const status: Record<string, unknown> = {
    ...(typeof parent.metadata.generation === 'number' ? { observedGeneration: parent.metadata.generation } : {}),
    progress,
    startTime,
    ...(endTime !== undefined ? { endTime } : {}),
    totalPodCount: details.length,
    succeededPodCount: succeeded,
    failedPodCount: failed,
    targetDetails: details.map(detail),
    conditions: validityConditions(previous.conditions, [], now)
  }

  const response: SyncResponse = { status, children: [] }
  if (finalizing) {
    response.finalized = owed === 0
    if (owed > 0) response.resyncAfterSeconds = RELEASE_RETRY_SECONDS
    return { response, effects }
  }
  if (endTime !== undefined && isFinished(progress)) {
    const ttlAt = Date.parse(endTime) + spec.TTLSecondsAfterFinished * 1000
    if (nowMs >= ttlAt) {
      const self = refTo(parent)
      if (self !== undefined && typeof parent.metadata.deletionTimestamp !== 'string') effects.push({ type: 'Delete', target: self })
    } else {
      due.push(ttlAt)
    }
  }
  const next = due.filter(at => at > nowMs)
  if (next.length > 0) response.resyncAfterSeconds = Math.max(1, Math.ceil((Math.min(...next) - nowMs) / 1000))
  return { response, effects }
}

type OperationJobTarget = OperationJobSpec['targets'][number]

/**
 * The targets that may be started: all when `partition` is unset; else at most `partition`,
 * the already-started ones first, then the pending ones in spec order.
 */
export function selection (details: TargetDetail[], spec: Pick<OperationJobSpec, 'partition'>): Set<number> {
  const all = details.map((_, i) => i)
  if (spec.partition === undefined) return new Set(all)
  const started = all.filter(i => details[i]?.progress !== 'Pending')
  const pending = all.filter(i => details[i]?.progress === 'Pending')
  return new Set([...started, ...pending].slice(0, Math.max(spec.partition, started.length)))
}

/**
 * The answer to a spec we cannot act on (an unknown action, say): no effects, the previous status
 * and target memory with the problems in `Valid`. Progress stays what it was (Pending for a new
 * job). Finalize lets the job go: without a usable spec there is nothing we could release.
 */
function refuse (parent: KubeObject, previous: Record<string, unknown>, memory: Map<string, TargetDetail>, problems: string[], now: Date, finalizing: boolean): SyncAnswer {
  const status: Record<string, unknown> = {
    ...previous,
    ...(typeof parent.metadata.generation === 'number' ? { observedGeneration: parent.metadata.generation } : {}),
    progress: typeof previous.progress === 'string' && PROGRESS.has(previous.progress) ? previous.progress : 'Pending',
    ...(memory.size > 0 ? { targetDetails: [...memory.values()] } : {}),
    conditions: validityConditions(previous.conditions, problems, now)
  }
  const response: SyncResponse = { status, children: [] }
  if (finalizing) response.finalized = true
  return { response, effects: [] }
}
