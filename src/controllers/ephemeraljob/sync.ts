// The EphemeralJob sync hook: from the observed EphemeralJob and the Pods its selector matches
// to the status that describes them and the effects still owed (containers to inject, the job
// itself to delete after a TTL). No children: Metacontroller cannot write the
// `pods/ephemeralcontainers` subresource, so injection is an effect. Pure: no I/O; the clock
// only stamps times that are then carried forward.
import type { HookContext, SyncAnswer, SyncRequest } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import type { Condition, KubeObject } from '../../k8s/types.js'
import { isRecord, stringOrUndefined } from '../../k8s/types.js'
import { objectsOf } from '../../k8s/objects.js'
import { timestamp } from '../../k8s/time.js'
import { validityConditions } from '../common/validity.js'
import { outcomeCondition } from '../common/completion.js'
import { parseEphemeralJobSpec, type EphemeralJobSpec } from './spec.js'
import { selectorMatches } from '../../k8s/selectors.js'
import { containerViews, ineligibility, injectedContainer, podPhase, type ContainerView, type JobIdentity, type PodPhase } from './pods.js'
import { byCreation, isTerminating, podPhaseOf } from '../../k8s/pods.js'

export type EphemeralJobPhase = 'Waiting' | 'Running' | 'Succeeded' | 'Failed' | 'Error' | 'Paused'

/**
 * One chosen Pod: the memory of law 6. A Pod is chosen once, when its containers are first
 * injected, and stays chosen; a finished record never changes again, even when its Pod is gone.
 */
export interface PodRecord {
  name: string
  uid: string
  phase: PodPhase
  completionTime?: string
  message?: string
}

const PHASES = new Set<string>(['Waiting', 'Running', 'Succeeded', 'Failed'])
export const DEADLINE_EXCEEDED = 'DeadlineExceeded'

function isSettled (record: PodRecord): boolean {
  return record.phase === 'Succeeded' || record.phase === 'Failed'
}

/** The records of the previous status, in the order they were chosen; malformed entries are ignored. */
export function readRecords (value: unknown): PodRecord[] {
  if (!Array.isArray(value)) return []
  const seen = new Set<string>()
  const records: PodRecord[] = []
  for (const entry of value) {
    if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.uid !== 'string' ||
      typeof entry.phase !== 'string' || !PHASES.has(entry.phase) || seen.has(entry.uid)) continue
    seen.add(entry.uid)
    records.push(compact({
      name: entry.name,
      uid: entry.uid,
      phase: entry.phase as PodPhase,
      completionTime: typeof entry.completionTime === 'string' ? entry.completionTime : undefined,
      message: typeof entry.message === 'string' ? entry.message : undefined
    }))
  }
  return records
}

function compact (record: PodRecord): PodRecord {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as unknown as PodRecord
}

export function syncEphemeralJob (request: SyncRequest, context: HookContext): SyncAnswer {
  const { parent } = request
  const now = context.now
  const previous = isRecord(parent.status) ? parent.status : {}
  const memory = readRecords(previous.pods)
  const parsed = parseEphemeralJobSpec(parent)
  if (!parsed.ok) return refuse(previous, memory, parsed.problems, now)
  const spec = parsed.value
  const job: JobIdentity = { name: parent.metadata.name, ...(typeof parent.metadata.uid === 'string' ? { uid: parent.metadata.uid } : {}) }

  const namespace = parent.metadata.namespace
  const matched = objectsOf(request.related, 'Pod', 'v1')
    .filter(p => (namespace === undefined || p.metadata.namespace === namespace) && selectorMatches(spec.selector, p.metadata.labels))
    .sort(byCreation)
  const byUid = new Map(matched.map(p => [p.metadata.uid, p]))

  const previouslyFinished = typeof previous.completionTime === 'string'
  const startTime = stringOrUndefined(previous.startTime) ?? (spec.paused ? undefined : timestamp(now))
  const deadlineAt = startTime !== undefined && spec.activeDeadlineSeconds !== undefined
    ? Date.parse(startTime) + spec.activeDeadlineSeconds * 1000
    : undefined
  const deadlinePassed = !previouslyFinished && deadlineAt !== undefined && now.getTime() >= deadlineAt
  const deleting = isTerminating(parent)
  const mayInject = !previouslyFinished && !deadlinePassed && !spec.paused && !deleting

  // 1. What became of every chosen Pod.
  const records: PodRecord[] = []
  const owed = new Map<string, { pod: KubeObject, missing: string[] }>()
  let active = 0
  const observe = (pod: KubeObject, memo: PodRecord | undefined): PodRecord => {
    const views = containerViews(pod, spec.containers, job)
    const missing = views.filter(v => v.state === 'Absent').map(v => v.name)
    const stopped = isTerminating(pod) || podPhaseOf(pod) === 'Succeeded' || podPhaseOf(pod) === 'Failed'
    // Containers not injected yet cannot be once the Pod stops or the job stops injecting for good.
    const neverInjected = missing.length > 0 && (stopped || previouslyFinished || deadlinePassed)
    const phase = neverInjected ? 'Failed' : podPhase(views)
    const record = compact({
      name: pod.metadata.name,
      uid: pod.metadata.uid as string,
      phase,
      completionTime: phase === 'Succeeded' || phase === 'Failed' ? memo?.completionTime ?? latest(views) ?? timestamp(now) : undefined,
      message: phase === 'Failed' ? failureMessage(views, neverInjected, stopped) : undefined
    })
    if (!isSettled(record)) {
      active += views.filter(v => v.state === 'Running' || v.state === 'Waiting' || v.state === 'Absent').length
      if (missing.length > 0) owed.set(record.uid, { pod, missing })
    }
    return record
  }
  for (const memo of memory) {
    const pod = byUid.get(memo.uid)
    if (isSettled(memo)) records.push(memo)
    else if (pod === undefined) {
      records.push({ name: memo.name, uid: memo.uid, phase: 'Failed', completionTime: timestamp(now), message: 'the Pod disappeared, or stopped matching the selector, before its ephemeral containers finished' })
    } else records.push(observe(pod, memo))
  }
  // Pods that carry our containers but that the status does not remember (a status lost or
  // wiped): they were chosen, whatever the status says.
  const chosen = new Set(records.map(r => r.uid))
  for (const pod of matched) {
    if (chosen.has(pod.metadata.uid as string) || typeof pod.metadata.uid !== 'string') continue
    const views = containerViews(pod, spec.containers, job)
    if (views.some(v => v.state !== 'Absent' && v.state !== 'Foreign')) {
      records.push(observe(pod, undefined))
      chosen.add(pod.metadata.uid)
    }
  }

  // 2. New Pods, oldest first, while parallelism and replicas allow.
  const limit = spec.replicas ?? Infinity
  const candidates = matched.filter(p => !chosen.has(p.metadata.uid as string) && ineligibility(p, spec.containers) === undefined)
  const perPod = spec.containers.length
  const newPods: KubeObject[] = []
  if (mayInject) {
    const slots = Math.max(0, Math.floor((spec.parallelism - active) / perPod))
    const room = Math.max(0, limit - records.length)
    newPods.push(...candidates.slice(0, Math.min(slots, room)))
    for (const pod of newPods) {
      records.push({ name: pod.metadata.name, uid: pod.metadata.uid as string, phase: 'Waiting' })
      owed.set(pod.metadata.uid as string, { pod, missing: spec.containers.map(c => c.name) })
    }
  }

  // 3. Finished once every chosen Pod finished and no other Pod can still be chosen: none left to
  // inject, and none still starting (Pending) that could be. Mixed outcomes end Failed, never stuck.
  const remaining = candidates.length - newPods.length
  const starting = matched.filter(p => !chosen.has(p.metadata.uid as string) && !isTerminating(p) && podPhaseOf(p) === 'Pending').length
  const moreToCome = records.length < limit && (remaining > 0 || starting > 0)
  const counts = countPhases(records)
  const allDone = records.length > 0 && records.every(isSettled) && !moreToCome
  let phase: EphemeralJobPhase
  let reason: string | undefined
  if (previouslyFinished) {
    phase = previous.phase === 'Succeeded' || previous.phase === 'Failed' ? previous.phase : (counts.failed > 0 ? 'Failed' : 'Succeeded')
  } else if (deadlinePassed) {
    phase = 'Failed'
    reason = DEADLINE_EXCEEDED
  } else if (allDone) {
    phase = counts.failed > 0 ? 'Failed' : 'Succeeded'
    reason = counts.failed > 0 ? 'PodsFailed' : 'AllPodsSucceeded'
  } else if (spec.paused) {
    phase = 'Paused'
  } else if (counts.running > 0 || counts.succeeded + counts.failed > 0) {
    phase = 'Running'
  } else {
    phase = 'Waiting'
  }
  const finished = phase === 'Succeeded' || phase === 'Failed'
  const completionTime = stringOrUndefined(previous.completionTime) ?? (finished ? timestamp(now) : undefined)

  let conditions: Condition[] = validityConditions(previous.conditions, [], now)
  if (!previouslyFinished && finished) conditions = outcomeCondition(conditions, phase, succeeded => outcome(succeeded, reason, counts, records, spec), now)

  const status: Record<string, unknown> = {
    phase,
    match: matched.length,
    succeeded: counts.succeeded,
    failed: counts.failed,
    running: counts.running,
    waiting: counts.waiting,
    ...(startTime !== undefined ? { startTime } : {}),
    ...(completionTime !== undefined ? { completionTime } : {}),
    pods: records,
    conditions
  }

  // 4. Effects and the next time something changes by the clock alone.
  const effects: Effect[] = []
  const due: number[] = []
  const created = parent.metadata.creationTimestamp !== undefined ? Date.parse(parent.metadata.creationTimestamp) : NaN
  if (spec.ttlSecondsAfterCreated !== undefined && !Number.isNaN(created)) due.push(created + spec.ttlSecondsAfterCreated * 1000)
  if (spec.ttlSecondsAfterFinished !== undefined && completionTime !== undefined) due.push(Date.parse(completionTime) + spec.ttlSecondsAfterFinished * 1000)
  const expired = due.some(at => at <= now.getTime())
  const self = refTo(parent)
  if (expired && !deleting && self !== undefined) {
    // Deleting the job is all that is left to do: nothing more is injected.
    effects.push({ type: 'Delete', target: self })
  } else if (mayInject && !finished) {
    for (const record of records) {
      const entry = owed.get(record.uid)
      if (entry === undefined) continue
      const { pod, missing } = entry
      effects.push({
        type: 'InjectEphemeralContainers',
        target: { apiVersion: 'v1', kind: 'Pod', ...(pod.metadata.namespace !== undefined ? { namespace: pod.metadata.namespace } : {}), name: pod.metadata.name, uid: record.uid },
        containers: spec.containers.filter(c => missing.includes(c.name)).map(c => injectedContainer(c, job))
      })
    }
  }
  if (!expired && !deleting) {
    if (!finished && deadlineAt !== undefined) due.push(deadlineAt)
    const next = due.filter(at => at > now.getTime())
    if (next.length > 0) {
      const response = { status, children: [], resyncAfterSeconds: Math.max(1, Math.ceil((Math.min(...next) - now.getTime()) / 1000)) }
      return { response, effects }
    }
  }
  return { response: { status, children: [] }, effects }
}

/**
 * The answer to a spec we cannot act on: no effects, the previous status and memory with the
 * problems in `Valid` and phase `Error` (this kind's phase for "cannot proceed"; a job that
 * finished keeps its phase).
 */
function refuse (previous: Record<string, unknown>, memory: PodRecord[], problems: string[], now: Date): SyncAnswer {
  const finished = typeof previous.completionTime === 'string' && (previous.phase === 'Succeeded' || previous.phase === 'Failed')
  const status: Record<string, unknown> = {
    ...previous,
    phase: finished ? previous.phase : 'Error',
    pods: memory,
    conditions: validityConditions(previous.conditions, problems, now)
  }
  return { response: { status, children: [] }, effects: [] }
}

interface Counts { succeeded: number, failed: number, running: number, waiting: number }

function countPhases (records: PodRecord[]): Counts {
  const counts: Counts = { succeeded: 0, failed: 0, running: 0, waiting: 0 }
  for (const { phase } of records) {
    if (phase === 'Succeeded') counts.succeeded++
    else if (phase === 'Failed') counts.failed++
    else if (phase === 'Running') counts.running++
    else counts.waiting++
  }
  return counts
}

/** Why a finished EphemeralJob ended as it did, for its `Complete` or `Failed` condition. */
function outcome (succeeded: boolean, reason: string | undefined, counts: Counts, records: PodRecord[], spec: EphemeralJobSpec): { reason: string, message: string } {
  const total = records.length
  if (succeeded) return { reason: reason ?? 'AllPodsSucceeded', message: `${counts.succeeded} of ${total} Pods succeeded` }
  if (reason === DEADLINE_EXCEEDED) {
    return { reason, message: `the job ran longer than activeDeadlineSeconds (${spec.activeDeadlineSeconds ?? 0}s); no more containers are injected (${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.running + counts.waiting} unfinished)` }
  }
  const failed = records.filter(r => r.phase === 'Failed').map(r => `${r.name}: ${r.message ?? 'failed'}`)
  return { reason: reason ?? 'PodsFailed', message: `${counts.failed} of ${total} Pods failed: ${failed.join('; ')}` }
}

function failureMessage (views: ContainerView[], neverInjected: boolean, stopped: boolean): string {
  if (neverInjected) return stopped ? 'the Pod stopped before its ephemeral containers were injected' : 'never injected: the job stopped injecting'
  return views.filter(v => v.state === 'Failed' || v.state === 'Foreign')
    .map(v => v.state === 'Foreign' ? `${v.name} was injected by someone else` : v.message ?? `${v.name} failed`).join('; ')
}

/** The latest finish time among the containers, when they report one. */
function latest (views: ContainerView[]): string | undefined {
  const times = views.map(v => v.finishedAt).filter((t): t is string => t !== undefined).sort()
  return times.at(-1)
}
