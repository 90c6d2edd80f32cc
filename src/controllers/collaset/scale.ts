// Scaling a CollaSet: the Pods asked to go (kuperator's `scaleStrategy.podToDelete`, and the label
// jobhooks.io/to-delete), the order in which Pods go when `replicas` goes down (kube-xset
// synccontrols/x_scale.go: to-delete first, then not Ready, Ready last, newest), and the
// `Scale` condition that says where scaling stands. Every Pod that goes here is left out of the
// answer: Metacontroller deletes it, and createPods (sync.ts) brings the count back to `replicas`.
import type { KubeObject } from '../../k8s/types.js'
import { refTo, type Effect } from '../../effects/types.js'
import { OPS_LIFECYCLE_LABEL, SERVICE_READY } from '../../k8s/labels.js'
import { timestamp } from '../../k8s/time.js'
import { byCreation, serviceReadyCondition } from '../../k8s/pods.js'
import type { CollaSetSpec } from './spec.js'
import { byReadiness, type Member, type PodPlan } from './members.js'
import { claimLabelEffects, TO_DELETE_LABEL } from './pods.js'
import type { ConditionState } from './status.js'

/** What the sync found of the Pods asked to go, or to leave the set. */
export interface DeleteRequests {
  /** The members asked to go (named in podToDelete or labelled), by name. */
  pods: Set<KubeObject>
  /** Names in podToDelete that no observed Pod of the set holds: ignored, and said. */
  unmatched: string[]
  /** The members podToExclude names (and not asked to go): released, never deleted. */
  excluded: Set<KubeObject>
  /** Names in podToExclude that no observed Pod of the set holds (released already, say). */
  unmatchedExclude: string[]
}

/** A Pod asked to go: named in `scaleStrategy.podToDelete`, or labelled jobhooks.io/to-delete (any value). */
function askedToGo (pod: KubeObject, named: ReadonlySet<string>): boolean {
  return named.has(pod.metadata.name) || pod.metadata.labels?.[TO_DELETE_LABEL] !== undefined
}

/** The members asked to go or to leave, and the names of either list no observed Pod holds. */
export function deleteRequests (plan: PodPlan, pods: readonly KubeObject[], spec: CollaSetSpec): DeleteRequests {
  const named = new Set(spec.scaleStrategy.podToDelete)
  const exclude = new Set(spec.scaleStrategy.podToExclude)
  const requests: DeleteRequests = { pods: new Set(), unmatched: [], excluded: new Set(), unmatchedExclude: [] }
  for (const { pod } of plan.members) {
    if (askedToGo(pod, named)) requests.pods.add(pod)
    else if (exclude.has(pod.metadata.name)) requests.excluded.add(pod)
  }
  if (named.size === 0 && exclude.size === 0) return requests
  const observed = new Set(pods.map(p => p.metadata.name))
  requests.unmatched = [...named].filter(name => !observed.has(name)).sort()
  requests.unmatchedExclude = [...exclude].filter(name => !observed.has(name)).sort()
  return requests
}

/**
 * The release of the excluded Pods: their `controller-uid` label removed (SetPodLabels), so they no
 * longer match the selector Metacontroller generated, and its next claim releases them (drops
 * its owner reference) instead of deleting them. Until then they are kept as observed.
 */
export function excludeEffects (requests: DeleteRequests): Effect[] {
  return claimLabelEffects(requests.excluded, null)
}

/** What decides when a drained Pod may go: the sync's time and `scaleStrategy.operationDelaySeconds`. */
export interface Drain {
  nowMs: number
  delaySeconds: number
}

/**
 * When a Pod this set drained may go under the delay: that long after its service-ready condition
 * went False for a scale-in or a delete (its lastTransitionTime, as written); undefined: no wait.
 */
function drainedUntil (pod: KubeObject, delaySeconds: number): number | undefined {
  if (delaySeconds === 0) return undefined
  const gate = serviceReadyCondition(pod)
  if (gate?.status !== 'False' || (gate.reason !== 'ScaleIn' && gate.reason !== 'ToDelete')) return undefined
  const since = typeof gate.lastTransitionTime === 'string' ? Date.parse(gate.lastTransitionTime) : NaN
  return Number.isNaN(since) ? undefined : since + delaySeconds * 1000
}

/**
 * Whether a Pod chosen to go may go now: a PodOpsLifecycle holds the gate, or it is out of traffic
 * (not Ready, or its service-ready condition not True: never was, or set False by an earlier sync)
 * and, when this set drained it, `scaleStrategy.operationDelaySeconds` has passed since (the
 * plan notes when the first such wait ends, for a resync).
 */
function mayGo ({ pod, ready, serving }: Member, plan: PodPlan, drain: Drain): boolean {
  if (pod.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined) return true
  if (ready && serving) return false
  const until = drainedUntil(pod, drain.delaySeconds)
  if (until === undefined || until <= drain.nowMs) return true
  plan.drainUntilMs = Math.min(plan.drainUntilMs ?? until, until)
  return false
}

/**
 * Leaves out the Pods asked to go that no longer serve; the others are drained first (kept, their
 * service-ready condition set False) and no longer counted, so their replacement comes now. An
 * origin that goes hands its place to its replacement (as when it is deleted by hand); a
 * replacement that goes leaves its origin to ask again.
 */
export function applyDeletes (plan: PodPlan, requests: DeleteRequests, drain: Drain): void {
  if (requests.pods.size === 0 && requests.excluded.size === 0) return
  const going = new Set<KubeObject>()
  for (const m of plan.members) {
    if (!requests.pods.has(m.pod)) continue
    if (mayGo(m, plan, drain)) going.add(m.pod)
    else plan.draining.set(m.pod, 'ToDelete')
  }
  const leaves = (pod: KubeObject): boolean => going.has(pod) || plan.draining.has(pod) || requests.excluded.has(pod)
  for (const [origin, replacement] of [...plan.pairOf]) {
    const originLeaves = leaves(origin)
    if (!originLeaves && !leaves(replacement.pod)) continue
    plan.pairOf.delete(origin)
    plan.inPair.delete(replacement.pod)
    if (originLeaves && !leaves(replacement.pod)) plan.logical.push(replacement)
  }
  for (const pod of going) plan.drop.add(pod)
  plan.logical = plan.logical.filter(m => !plan.drop.has(m.pod) && !plan.draining.has(m.pod) &&
    !requests.excluded.has(m.pod))
}

/**
 * Scale-in order, kube-xset's (synccontrols/x_scale.go `ActiveTargetsForDeletion.Less`, then
 * x_utils.go `CompareTarget`): the Pods asked to go have gone already (applyDeletes); then the
 * Pods out of traffic (service-ready not True: kube-xset's "during scale-in"); then not Ready;
 * of two Ready Pods, the one Ready last (a Ready time not known first); then the newest (no
 * creation time first); then the greatest name. kube-xset's priority and deletion cost are not
 * read.
 */
export function removalOrder (a: Member, b: Member): number {
  if (a.serving !== b.serving) return a.serving ? 1 : -1
  const readiness = byReadiness(a, b)
  if (readiness !== 0) return readiness
  const ac = a.pod.metadata.creationTimestamp
  const bc = b.pod.metadata.creationTimestamp
  if ((ac === undefined) !== (bc === undefined)) return ac === undefined ? -1 : 1
  return -byCreation(a.pod, b.pod)
}

/**
 * Down to `replicas`: a Pod that no longer serves goes, taking its pending replacement with it;
 * one that serves is drained first (kept, not counted) and chosen again, first, at a later sync.
 */
export function scaleDown (plan: PodPlan, replicas: number, drain: Drain): void {
  if (plan.logical.length <= replicas) return
  const removed = [...plan.logical].sort(removalOrder).slice(0, plan.logical.length - replicas)
  for (const m of removed) {
    if (!mayGo(m, plan, drain)) {
      plan.draining.set(m.pod, 'ScaleIn')
      continue
    }
    plan.drop.add(m.pod)
    const replacement = plan.pairOf.get(m.pod)
    if (replacement !== undefined) {
      plan.drop.add(replacement.pod)
      plan.pairOf.delete(m.pod)
      plan.inPair.delete(replacement.pod)
    }
  }
  plan.logical = plan.logical.filter(m => !plan.drop.has(m.pod) && !plan.draining.has(m.pod))
}

/**
 * The drain: each Pod chosen to go that still serves gets its service-ready condition False; one
 * drained already keeps it as written (its time is when the delay started).
 */
export function drainEffects (plan: PodPlan, now: Date): Effect[] {
  const effects: Effect[] = []
  for (const [pod, why] of plan.draining) {
    const ref = refTo(pod)
    const gate = serviceReadyCondition(pod)
    if (ref === undefined || (gate?.status === 'False' && gate.reason === why)) continue
    const message = why === 'ScaleIn'
      ? 'the CollaSet scales in: the Pod leaves traffic, then goes'
      : 'the Pod is to delete: it leaves traffic, then goes'
    effects.push({
      type: 'SetPodCondition',
      target: ref,
      condition: { type: SERVICE_READY, status: 'False', reason: why, message, lastTransitionTime: timestamp(now) }
    })
  }
  return effects
}

/** Up to `max` names, then how many more. */
function nameList (names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ')
  return names.length > max ? `${shown} and ${names.length - max} more` : shown
}

const pods = (n: number): string => `${n} Pod${n === 1 ? '' : 's'}`

/** What the Scale condition adds about deletes: the Pods going, and the names ignored. */
function deleteNote (requests: DeleteRequests, paused: boolean): string {
  const notes: string[] = []
  if (requests.pods.size > 0) {
    const names = [...requests.pods].map(p => p.metadata.name).sort()
    notes.push(`${paused ? 'waiting to delete' : 'deleting'} ${nameList(names)} (podToDelete or ${TO_DELETE_LABEL})`)
  }
  if (requests.unmatched.length > 0) {
    notes.push(`spec.scaleStrategy.podToDelete names no Pod of the set, ignored: ${nameList(requests.unmatched)}`)
  }
  if (requests.excluded.size > 0) {
    const names = [...requests.excluded].map(p => p.metadata.name).sort()
    notes.push(`${paused ? 'waiting to release' : 'releasing'} ${nameList(names)} (podToExclude)`)
  }
  if (requests.unmatchedExclude.length > 0) {
    notes.push(`spec.scaleStrategy.podToExclude names no Pod of the set (released, or never one): ${
      nameList(requests.unmatchedExclude)}`)
  }
  return notes.length === 0 ? '' : `; ${notes.join('; ')}`
}

/**
 * `Scale`: whether the Pods that count against `replicas` (as observed, before this sync adds or
 * removes any) are as many as it asks and none is asked to go.
 */
export function scaleCondition (
  observed: number,
  spec: Pick<CollaSetSpec, 'replicas' | 'paused'>,
  requests: DeleteRequests = { pods: new Set(), unmatched: [], excluded: new Set(), unmatchedExclude: [] }
): ConditionState {
  const { replicas, paused } = spec
  const note = deleteNote(requests, paused)
  if (paused) {
    return {
      status: 'False',
      reason: 'Paused',
      message: 'spec.paused: no Pod is created or removed to scale ' +
        `(${pods(observed)}, spec.replicas ${replicas})${note}`
    }
  }
  if (requests.pods.size > 0 || requests.excluded.size > 0) {
    const reason = requests.pods.size > 0 ? 'Deleting' : 'Excluding'
    return { status: 'False', reason, message: `${pods(observed)} of ${replicas}${note}` }
  }
  if (observed === replicas) {
    return { status: 'True', reason: 'Scaled', message: `${pods(observed)}, as spec.replicas asks${note}` }
  }
  const [reason, verb, by] = observed < replicas
    ? ['ScalingOut', 'creating', replicas - observed]
    : ['ScalingIn', 'removing', observed - replicas]
  return { status: 'False', reason, message: `${pods(observed)} of ${replicas}: ${verb} ${by}${note}` }
}
