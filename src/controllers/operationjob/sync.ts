// The OperationJob sync and finalize hooks: from the observed job and its target Pods to the
// status that describes every target and the effects its action still owes. No children: what an
// action does to Pods it does not own (inject ephemeral containers, label, evict) is an effect,
// and so is the job's own deletion after its TTL. Pure: the clock only stamps times that are then
// carried forward (law 3).
import type { HookContext, KindHooks, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import { timestamp } from '../../k8s/time.js'
import { isTerminating } from '../../k8s/pods.js'
import { invalidSpecAnswer, validityConditions } from '../common/validity.js'
import { defaultActions } from '../../actions/index.js'
import type {
  ActionContext, ActionHandler, ActionRegistry, ActionTarget, TargetDetail, TargetError
} from '../../actions/registry.js'
import { actionJob, parseOperationJobSpec, type OperationJobSpec, type OperationTarget } from './spec.js'
import { detail, isFinished, readRecords } from './records.js'

export type JobProgress = 'Pending' | 'Processing' | 'Failed' | 'Succeeded'

export const DEADLINE_EXCEEDED = 'DeadlineExceeded'
export const POD_NOT_FOUND = 'PodNotFound'
export const CANCELLED = 'Cancelled'
/** extraInfo key set once a failed target has nothing left to undo. */
export const RELEASED = 'Released'
/** How soon finalize is called again while releases are still owed. */
export const RELEASE_RETRY_SECONDS = 5

/** The sync hook over the service's own actions (a sync of a job being deleted finalizes it). */
export function syncOperationJob (request: SyncRequest, context: HookContext): SyncAnswer {
  return reconcile(request, context, defaultActions, request.finalizing === true)
}

/** The finalize hook over the service's own actions: releases every unfinished target first. */
export function finalizeOperationJob (request: SyncRequest, context: HookContext): SyncAnswer {
  return reconcile(request, context, defaultActions, true)
}

/** The same two hooks over another registry of actions (a test brings its own). */
export function operationJobSyncHooks (registry: ActionRegistry): { sync: SyncHook, finalize: SyncHook } {
  return {
    sync: (request, context) => reconcile(request, context, registry, request.finalizing === true),
    finalize: (request, context) => reconcile(request, context, registry, true)
  }
}

type SyncHook = KindHooks['sync']

/** observe → advance the targets → release the failed ones → render. */
function reconcile (
  request: SyncRequest,
  context: HookContext,
  registry: ActionRegistry,
  finalizing: boolean
): SyncAnswer {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const memory = readRecords(previous)
  const parsed = parseOperationJobSpec(parent, registry, context.scripts)
  if (!parsed.ok) return invalid({ parent, previous, memory, now: context.now, finalizing }, parsed.problems)
  const sync = new TargetsSync(request, context, parsed.value, memory)
  const wasFinished = isFinished(previous.progress as string | undefined)
  if (!wasFinished) sync.advance(finalizing)
  const owed = sync.releaseFailed()
  const status = renderStatus(parent, previous, sync.details, wasFinished, context.now)
  const response: SyncResponse = { status, children: [] }
  if (finalizing) {
    response.finalized = owed === 0
    if (owed > 0) response.resyncAfterSeconds = RELEASE_RETRY_SECONDS
    return { response, effects: sync.effects }
  }
  sync.dueAfterTtl(parent, status, parsed.value)
  const nowMs = context.now.getTime()
  const next = sync.due.filter(at => at > nowMs)
  if (next.length > 0) response.resyncAfterSeconds = Math.max(1, Math.ceil((Math.min(...next) - nowMs) / 1000))
  return { response, effects: sync.effects }
}

/**
 * One sync of an OperationJob's targets: their details as this sync changes them, the effects
 * their action owes, and the times something changes by the clock alone.
 */
class TargetsSync {
  readonly details: TargetDetail[]
  readonly effects: Effect[] = []
  readonly due: number[] = []
  private readonly pods = new Map<string, KubeObject>()
  private readonly action: ActionContext
  private readonly stamp: string
  private readonly nowMs: number

  constructor (
    request: SyncRequest,
    context: HookContext,
    private readonly spec: OperationJobSpec,
    memory: Map<string, TargetDetail>
  ) {
    const { parent } = request
    const namespace = parent.metadata.namespace
    for (const pod of objectsOf(request.related, 'Pod', 'v1')) {
      if (namespace === undefined || pod.metadata.namespace === namespace) this.pods.set(pod.metadata.name, pod)
    }
    this.action = {
      job: actionJob(parent, spec.targets),
      related: request.related ?? {},
      now: context.now,
      scripts: context.scripts
    }
    this.stamp = timestamp(context.now)
    this.nowMs = context.now.getTime()
    this.details = spec.targets.map(t => memory.get(t.name) ?? { name: t.name, progress: 'Pending' })
  }

  private get handler (): ActionHandler {
    return this.spec.action.handler
  }

  /** Target i as its action sees it: the spec's target, its Pod when there is one, its detail. */
  private target (i: number): ActionTarget {
    const t = this.spec.targets[i] as OperationTarget
    const pod = this.pods.get(t.name)
    return {
      name: t.name,
      containers: t.containers,
      ...(pod !== undefined ? { pod } : {}),
      detail: this.details[i] as TargetDetail
    }
  }

  private set (i: number, d: TargetDetail): void {
    this.details[i] = detail(d)
  }

  /** Merges what an action said into target i's extraInfo. */
  private remember (i: number, extraInfo: Record<string, string> | undefined): void {
    if (extraInfo === undefined) return
    const d = this.details[i] as TargetDetail
    this.set(i, { ...d, extraInfo: { ...d.extraInfo, ...extraInfo } })
  }

  private finish (
    i: number,
    progress: 'Succeeded' | 'Failed',
    error?: TargetError,
    extraInfo?: Record<string, string>
  ): void {
    const d = this.details[i] as TargetDetail
    this.set(
      i,
      {
        ...d,
        progress,
        endTime: d.endTime ?? this.stamp,
        extraInfo: { ...d.extraInfo, ...extraInfo },
        ...(error !== undefined ? { error } : {})
      }
    )
  }

  /**
   * Every unfinished target one step on: started ones read and operated, pending ones started as the partition allows.
   */
  advance (finalizing: boolean): void {
    const selected = selection(this.details, this.spec)
    this.details.forEach((d, i) => {
      if (isFinished(d.progress)) return
      if (d.progress === 'Processing') this.continueTarget(i, finalizing)
      else if (!finalizing && selected.has(i)) this.startTarget(i)
    })
  }

  /** A started target: done, failed, cancelled, past its deadline, or operated once more. */
  private continueTarget (i: number, finalizing: boolean): void {
    const d = this.details[i] as TargetDetail
    // A started target always has a start (a status written by hand may lack one).
    if (d.startTime === undefined) this.set(i, { ...d, startTime: this.stamp })
    this.remember(i, this.handler.observe?.(this.target(i), this.action))
    const read = this.handler.progress(this.target(i), this.action)
    if (read.progress !== 'Processing') {
      this.finish(
        i,
        read.progress,
        read.error ?? (read.progress === 'Failed'
          ? {
              reason: 'Failed',
              message: `the ${this.spec.action.name} action failed`
            }
          : undefined),
        read.extraInfo
      )
      return
    }
    this.remember(i, read.extraInfo)
    if (finalizing) {
      this.finish(
        i,
        'Failed',
        { reason: CANCELLED, message: 'the OperationJob was deleted before this target finished' }
      )
      return
    }
    const deadlineAt = Date.parse(
      (this.details[i] as TargetDetail).startTime ?? this.stamp
    ) + this.spec.activeDeadlineSeconds * 1000
    if (this.nowMs >= deadlineAt) {
      this.finish(
        i,
        'Failed',
        {
          reason: DEADLINE_EXCEEDED,
          message: `the target did not finish within activeDeadlineSeconds (${this.spec.activeDeadlineSeconds}s) of ` +
            'its start'
        }
      )
      return
    }
    this.operate(i, deadlineAt)
  }

  /** A pending target the partition has room for: failed at once when its Pod does not exist. */
  private startTarget (i: number): void {
    const d = this.details[i] as TargetDetail
    if (!this.pods.has(d.name)) {
      this.set(
        i,
        {
          ...d,
          progress: 'Failed',
          startTime: this.stamp,
          endTime: this.stamp,
          error: { reason: POD_NOT_FOUND, message: `Pod ${d.name} does not exist` }
        }
      )
      return
    }
    this.set(i, { ...d, progress: 'Processing', startTime: this.stamp })
    this.remember(i, this.handler.observe?.(this.target(i), this.action))
    this.operate(i, this.nowMs + this.spec.activeDeadlineSeconds * 1000)
  }

  private operate (i: number, deadlineAt: number): void {
    const result = this.handler.operate(this.target(i), this.action)
    if (result.error !== undefined) {
      this.finish(i, 'Failed', result.error, result.extraInfo)
      return
    }
    this.remember(i, result.extraInfo)
    this.effects.push(...result.effects)
    this.due.push(deadlineAt)
    if (result.resyncAfterSeconds !== undefined) {
      this.due.push(
        this.nowMs + Math.max(1, result.resyncAfterSeconds) * 1000
      )
    }
  }

  /** Failed targets are released until their action owes nothing more for them; returns how many still owe. */
  releaseFailed (): number {
    let owed = 0
    this.details.forEach((d, i) => {
      if (d.progress !== 'Failed' || d.extraInfo?.[RELEASED] === 'true') return
      const result = this.handler.release(this.target(i), this.action)
      const extraInfo = { ...d.extraInfo, ...result.extraInfo }
      if (result.effects.length === 0) extraInfo[RELEASED] = 'true'
      else owed++
      this.effects.push(...result.effects)
      this.set(i, { ...d, extraInfo })
    })
    return owed
  }

  /** A finished job deletes itself `TTLSecondsAfterFinished` after its end, or resyncs then. */
  dueAfterTtl (parent: KubeObject, status: Record<string, unknown>, spec: OperationJobSpec): void {
    if (typeof status.endTime !== 'string' || !isFinished(status.progress as string)) return
    const ttlAt = Date.parse(status.endTime) + spec.TTLSecondsAfterFinished * 1000
    if (this.nowMs < ttlAt) {
      this.due.push(ttlAt)
      return
    }
    const self = refTo(parent)
    if (self !== undefined && !isTerminating(parent)) this.effects.push({ type: 'Delete', target: self })
  }
}

function renderStatus (
  parent: KubeObject,
  previous: Record<string, unknown>,
  details: TargetDetail[],
  wasFinished: boolean,
  now: Date
): Record<string, unknown> {
  const stamp = timestamp(now)
  const succeeded = details.filter(d => d.progress === 'Succeeded').length
  const failed = details.filter(d => d.progress === 'Failed').length
  let progress: JobProgress
  if (wasFinished) progress = previous.progress as JobProgress
  else if (succeeded + failed === details.length) progress = failed > 0 ? 'Failed' : 'Succeeded'
  else if (details.every(d => d.progress === 'Pending')) progress = 'Pending'
  else progress = 'Processing'
  const startTime = typeof previous.startTime === 'string' ? previous.startTime : stamp
  const endTime = typeof previous.endTime === 'string' ? previous.endTime : (isFinished(progress) ? stamp : undefined)
  return {
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
}

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

/** What the answer to an invalid spec is made from. */
interface Refused {
  parent: KubeObject
  previous: Record<string, unknown>
  memory: Map<string, TargetDetail>
  now: Date
  finalizing: boolean
}

/**
 * The answer to a spec we cannot act on (an unknown action, say; law 2, common/validity.ts): no
 * effects, the previous status and target memory, and progress `Invalid`, as every kind with a
 * phase says it, unless the job had finished (terminal progress is sticky). Once the spec is
 * fixed, progress is computed from the targets again. Finalize lets the job go: without a usable
 * spec there is nothing we could release.
 */
function invalid ({ parent, previous, memory, now, finalizing }: Refused, problems: string[]): SyncAnswer {
  const { generation } = parent.metadata
  const status: Record<string, unknown> = {
    ...previous,
    ...(typeof generation === 'number' ? { observedGeneration: generation } : {}),
    progress: isFinished(previous.progress as string | undefined) ? previous.progress : 'Invalid',
    ...(memory.size > 0 ? { targetDetails: [...memory.values()] } : {})
  }
  const answer = invalidSpecAnswer(previous, { status, children: [], problems }, now)
  if (finalizing) answer.response.finalized = true
  return answer
}
