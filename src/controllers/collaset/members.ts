// What one CollaSet sync knows of its Pods: each member Pod with what it says of itself, read once,
// the orders in which the sync picks among them, and the plan the sync's steps fill in. Shared by
// the steps of the sync (sync.ts), the rollout (rollout.ts) and the status (status.ts).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { findCondition } from '../../k8s/conditions.js'
import { byCreation, isReady, serviceReady } from '../../k8s/pods.js'

/**
 * A member Pod and what this sync reads of its conditions, read once: pairing, settling, scaling,
 * the status and the readiness gate all ask about the same Pods, and a sort asks at every
 * comparison. A per-sync record beside the Pod, never a mark on it: the Pods the hook is given are
 * frozen and shared between requests.
 */
export interface Member {
  pod: KubeObject
  ready: boolean
  /** The service-ready condition is True: with `ready`, the Pod is available. */
  serving: boolean
}

export function member (pod: KubeObject): Member {
  return { pod, ready: isReady(pod), serving: serviceReady(pod) }
}

/** When the Pod's Ready condition last changed, in ms; NaN when it does not say. */
export function readyTime (pod: KubeObject): number {
  const ready = isRecord(pod.status) ? findCondition(pod.status.conditions, 'Ready') : undefined
  return typeof ready?.lastTransitionTime === 'string' ? Date.parse(ready.lastTransitionTime) : NaN
}

/**
 * kube-xset's CompareTarget on readiness, which the update and the scale-in orders share: not
 * Ready first; of two Ready Pods, the one Ready last (a Ready time not known first); 0 on a tie.
 */
export function byReadiness (a: Member, b: Member): number {
  if (a.ready !== b.ready) return a.ready ? 1 : -1
  if (!a.ready) return 0
  const at = readyTime(a.pod)
  const bt = readyTime(b.pod)
  if (Number.isNaN(at) !== Number.isNaN(bt)) return Number.isNaN(at) ? -1 : 1
  return !Number.isNaN(at) && at !== bt ? (at > bt ? -1 : 1) : 0
}

/** Oldest first, then by name (byCreation), for members. */
export function byMemberCreation (a: Member, b: Member): number {
  return byCreation(a.pod, b.pod)
}

/** Rollout order: not Ready first, then oldest, then by name. */
export function rolloutOrder (a: Member, b: Member): number {
  if (a.ready !== b.ready) return a.ready ? 1 : -1
  return byCreation(a.pod, b.pod)
}

/** Replacement order: Ready first, then oldest, then by name. */
export function replacementOrder (a: Member, b: Member): number {
  if (a.ready !== b.ready) return a.ready ? -1 : 1
  return byCreation(a.pod, b.pod)
}

/**
 * What one sync decides about the observed Pods, step by step: which go (`drop`), which origin is
 * being replaced by which Pod (`pairOf`, with the replacements in `inPair`), and the Pods that
 * count against `replicas` (`logical`). Sets and maps are keyed by the Pod itself, as a Pod is
 * one Pod however often the request lists it.
 */
export interface PodPlan {
  /** The Pods that take part in the set: neither terminating nor finished. */
  members: Member[]
  drop: Set<KubeObject>
  pairOf: Map<KubeObject, Member>
  inPair: Set<KubeObject>
  logical: Member[]
  /**
   * Pods chosen to go (scale-in, to-delete) that still serve: kept, not counted, their
   * service-ready condition set False first (scale.ts); they go at a later sync.
   */
  draining: Map<KubeObject, 'ScaleIn' | 'ToDelete'>
  /** When the first drained Pod that `scaleStrategy.operationDelaySeconds` still holds may go (ms). */
  drainUntilMs?: number
}
