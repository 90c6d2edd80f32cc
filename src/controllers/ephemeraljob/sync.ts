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
import { invalidSpecAnswer, validityConditions } from '../common/validity.js'
import { outcomeCondition } from '../common/completion.js'
import { parseEphemeralJobSpec, type EphemeralJobSpec } from './spec.js'
import { selectorMatches } from '../../k8s/selectors.js'
import { ineligibility, injectedContainer, type JobIdentity } from './pods.js'
import { byCreation, isTerminating, podPhaseOf } from '../../k8s/pods.js'
import {
  countPhases, isSettled, readRecords, rememberChosen, type Chosen, type Counts, type PodRecord
} from './records.js'

export type EphemeralJobPhase = 'Waiting' | 'Running' | 'Succeeded' | 'Failed' | 'Paused' | 'Invalid'

export const DEADLINE_EXCEEDED = 'DeadlineExceeded'

/** What one sync works from: the spec, the job, the clock, the matched Pods and what the status says. */
interface EphemeralSync {
  spec: EphemeralJobSpec
  job: JobIdentity
  now: Date
  previous: Record<string, unknown>
  parent: KubeObject
  /** The Pods the selector matches in the job's namespace, oldest first. */
  matched: KubeObject[]
  startTime?: string
  deadlineAt?: number
  previouslyFinished: boolean
  deadlinePassed: boolean
  deleting: boolean
  /** Whether containers may go into Pods in this sync. */
  mayInject: boolean
}

/** The Pods chosen in this sync, and those that could still be chosen later. */
interface Choice {
  newPods: KubeObject[]
  /** Eligible Pods not chosen (yet). */
  candidates: KubeObject[]
}

/** observe → remember → choose → decide → render. */
export function syncEphemeralJob (request: SyncRequest, context: HookContext): SyncAnswer {
  const previous = isRecord(request.parent.status) ? request.parent.status : {}
  const memory = readRecords(previous)
  const parsed = parseEphemeralJobSpec(request.parent)
  if (!parsed.ok) return invalid(previous, memory, parsed.problems, context.now)
  const sync = observe(request, parsed.value, previous, context.now)
  const chosen = rememberChosen(memory, sync.matched, {
    containers: sync.spec.containers,
    job: sync.job,
    now: sync.now,
    stoppedInjecting: sync.previouslyFinished || sync.deadlinePassed
  })
  const choice = chooseNewPods(sync, chosen)
  const counts = countPhases(chosen.records)
  const { phase, reason } = decidePhase(sync, chosen.records, counts, choice)
  const status = renderStatus(sync, chosen.records, counts, phase, reason)
  return answer(sync, chosen, status)
}

function observe (
  request: SyncRequest,
  spec: EphemeralJobSpec,
  previous: Record<string, unknown>,
  now: Date
): EphemeralSync {
  const { parent } = request
  const namespace = parent.metadata.namespace
  const matched = objectsOf(request.related, 'Pod', 'v1')
    .filter(p => (namespace === undefined || p.metadata.namespace === namespace) && selectorMatches(
      spec.selector,
      p.metadata.labels
    ))
    .sort(byCreation)
  const previouslyFinished = typeof previous.completionTime === 'string'
  const startTime = stringOrUndefined(previous.startTime) ?? (spec.paused ? undefined : timestamp(now))
  const deadlineAt = startTime !== undefined && spec.activeDeadlineSeconds !== undefined
    ? Date.parse(startTime) + spec.activeDeadlineSeconds * 1000
    : undefined
  const deadlinePassed = !previouslyFinished && deadlineAt !== undefined && now.getTime() >= deadlineAt
  const deleting = isTerminating(parent)
  return {
    spec,
    job: {
      name: parent.metadata.name,
      ...(typeof parent.metadata.uid === 'string' ? { uid: parent.metadata.uid } : {})
    },
    now,
    previous,
    parent,
    matched,
    ...(startTime !== undefined ? { startTime } : {}),
    ...(deadlineAt !== undefined ? { deadlineAt } : {}),
    previouslyFinished,
    deadlinePassed,
    deleting,
    mayInject: !previouslyFinished && !deadlinePassed && !spec.paused && !deleting
  }
}

/**
 * New Pods, oldest first, while parallelism and replicas allow; each becomes a `Waiting` record
 * with every container owed (added to `chosen`).
 */
function chooseNewPods (sync: EphemeralSync, chosen: Chosen): Choice {
  const { spec } = sync
  const taken = new Set(chosen.records.map(r => r.uid))
  const candidates = sync.matched.filter(
    p => !taken.has(p.metadata.uid as string) && ineligibility(p, spec.containers) === undefined
  )
  if (!sync.mayInject) return { newPods: [], candidates }
  const slots = Math.max(0, Math.floor((spec.parallelism - chosen.active) / spec.containers.length))
  const room = Math.max(0, (spec.replicas ?? Infinity) - chosen.records.length)
  const newPods = candidates.slice(0, Math.min(slots, room))
  for (const pod of newPods) {
    chosen.records.push({ name: pod.metadata.name, uid: pod.metadata.uid as string, phase: 'Waiting' })
    chosen.owed.set(pod.metadata.uid as string, { pod, missing: spec.containers.map(c => c.name) })
  }
  return { newPods, candidates }
}

/**
 * The job's phase. Finished once every chosen Pod finished and no other Pod can still be chosen:
 * none left to inject, and none still starting (Pending) that could be. Mixed outcomes end Failed,
 * never stuck; a finished job keeps its phase.
 */
function decidePhase (
  sync: EphemeralSync,
  records: PodRecord[],
  counts: Counts,
  choice: Choice
): { phase: EphemeralJobPhase, reason?: string } {
  const { previous } = sync
  if (sync.previouslyFinished) {
    const kept = previous.phase === 'Succeeded' || previous.phase === 'Failed' ? previous.phase : undefined
    return { phase: kept ?? (counts.failed > 0 ? 'Failed' : 'Succeeded') }
  }
  if (sync.deadlinePassed) return { phase: 'Failed', reason: DEADLINE_EXCEEDED }
  const chosen = new Set(records.map(r => r.uid))
  const remaining = choice.candidates.length - choice.newPods.length
  const starting = sync.matched.filter(
    p => !chosen.has(p.metadata.uid as string) && !isTerminating(p) && podPhaseOf(p) === 'Pending'
  ).length
  const moreToCome = records.length < (sync.spec.replicas ?? Infinity) && (remaining > 0 || starting > 0)
  if (records.length > 0 && records.every(isSettled) && !moreToCome) {
    return counts.failed > 0
      ? { phase: 'Failed', reason: 'PodsFailed' }
      : {
          phase: 'Succeeded',
          reason: 'AllPodsSucceeded'
        }
  }
  if (sync.spec.paused) return { phase: 'Paused' }
  if (counts.running > 0 || counts.succeeded + counts.failed > 0) return { phase: 'Running' }
  return { phase: 'Waiting' }
}

function renderStatus (
  sync: EphemeralSync,
  records: PodRecord[],
  counts: Counts,
  phase: EphemeralJobPhase,
  reason: string | undefined
): Record<string, unknown> {
  const { previous, now } = sync
  const finished = phase === 'Succeeded' || phase === 'Failed'
  const completionTime = stringOrUndefined(previous.completionTime) ?? (finished ? timestamp(now) : undefined)
  let conditions: Condition[] = validityConditions(previous.conditions, [], now)
  if (!sync.previouslyFinished && finished) {
    conditions = outcomeCondition(
      conditions,
      phase,
      succeeded => outcome(succeeded, reason, counts, records, sync.spec),
      now
    )
  }
  return {
    phase,
    match: sync.matched.length,
    succeeded: counts.succeeded,
    failed: counts.failed,
    running: counts.running,
    waiting: counts.waiting,
    ...(sync.startTime !== undefined ? { startTime: sync.startTime } : {}),
    ...(completionTime !== undefined ? { completionTime } : {}),
    pods: records,
    conditions
  }
}

/**
 * The effects still owed and the next time something changes by the clock alone: after a TTL,
 * deleting the job is all that is left to do (nothing more is injected); otherwise the owed
 * containers, and a resync at the next TTL or the deadline.
 */
function answer (sync: EphemeralSync, chosen: Chosen, status: Record<string, unknown>): SyncAnswer {
  const { spec, parent, now } = sync
  const finished = status.phase === 'Succeeded' || status.phase === 'Failed'
  const completionTime = stringOrUndefined(status.completionTime)
  const due: number[] = []
  const created = parent.metadata.creationTimestamp !== undefined ? Date.parse(parent.metadata.creationTimestamp) : NaN
  if (spec.ttlSecondsAfterCreated !== undefined && !Number.isNaN(created)) {
    due.push(
      created + spec.ttlSecondsAfterCreated * 1000
    )
  }
  if (spec.ttlSecondsAfterFinished !== undefined && completionTime !== undefined) {
    due.push(
      Date.parse(completionTime) + spec.ttlSecondsAfterFinished * 1000
    )
  }
  const expired = due.some(at => at <= now.getTime())
  const self = refTo(parent)
  const effects: Effect[] = []
  if (expired && !sync.deleting && self !== undefined) effects.push({ type: 'Delete', target: self })
  else if (sync.mayInject && !finished) effects.push(...injections(sync, chosen))
  if (!expired && !sync.deleting) {
    if (!finished && sync.deadlineAt !== undefined) due.push(sync.deadlineAt)
    const next = due.filter(at => at > now.getTime())
    if (next.length > 0) {
      return {
        response: {
          status,
          children: [],
          resyncAfterSeconds: Math.max(1, Math.ceil((Math.min(...next) - now.getTime()) / 1000))
        },
        effects
      }
    }
  }
  return { response: { status, children: [] }, effects }
}

/** The owed containers, Pod by Pod in the order of the records, each guarded by the Pod's UID. */
function injections (sync: EphemeralSync, chosen: Chosen): Effect[] {
  return chosen.records.flatMap(record => {
    const owed = chosen.owed.get(record.uid)
    if (owed === undefined) return []
    const { pod, missing } = owed
    return [{
      type: 'InjectEphemeralContainers' as const,
      target: {
        apiVersion: 'v1',
        kind: 'Pod',
        ...(pod.metadata.namespace !== undefined ? { namespace: pod.metadata.namespace } : {}),
        name: pod.metadata.name,
        uid: record.uid
      },
      containers: sync.spec.containers.filter(c => missing.includes(c.name)).map(c => injectedContainer(c, sync.job))
    }]
  })
}

/**
 * The answer to a spec we cannot act on (law 2, common/validity.ts): no children, the previous
 * status and memory with phase `Invalid`, as on every kind with a phase (a job that finished
 * keeps its phase).
 */
function invalid (previous: Record<string, unknown>, memory: PodRecord[], problems: string[], now: Date): SyncAnswer {
  const finished = typeof previous.completionTime === 'string' &&
    (previous.phase === 'Succeeded' || previous.phase === 'Failed')
  const status = { ...previous, phase: finished ? previous.phase : 'Invalid', pods: memory }
  return invalidSpecAnswer(previous, { status, children: [], problems }, now)
}

/** Why a finished EphemeralJob ended as it did, for its `Complete` or `Failed` condition. */
function outcome (
  succeeded: boolean,
  reason: string | undefined,
  counts: Counts,
  records: PodRecord[],
  spec: EphemeralJobSpec
): { reason: string, message: string } {
  const total = records.length
  if (succeeded) {
    return {
      reason: reason ?? 'AllPodsSucceeded',
      message: `${counts.succeeded} of ${total} Pods succeeded`
    }
  }
  if (reason === DEADLINE_EXCEEDED) {
    return {
      reason,
      message: `the job ran longer than activeDeadlineSeconds (${spec.activeDeadlineSeconds ?? 0}s); no more ` +
        `containers are injected (${counts.succeeded} succeeded, ${counts.failed} failed, ` +
        `${counts.running + counts.waiting} unfinished)`
    }
  }
  const failed = records.filter(r => r.phase === 'Failed').map(r => `${r.name}: ${r.message ?? 'failed'}`)
  return { reason: reason ?? 'PodsFailed', message: `${counts.failed} of ${total} Pods failed: ${failed.join('; ')}` }
}
