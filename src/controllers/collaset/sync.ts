// The CollaSet sync hook: from the observed CollaSet and its Pods to the Pods it should have and
// the status that describes them, plus the readiness-gate conditions still owed (effects:
// Metacontroller cannot write pods/status). Pure: no I/O, no randomness.
//
// Decisions (docs/collaset.md):
// - A *member* is a Pod that is not terminating and has not finished (Succeeded/Failed); a
//   finished Pod is dropped, a terminating one is returned as observed.
// - A *replacement pair* is an origin O and a member N labelled replace-origin=O. It is active
//   while O asks for it (to-replace=true) or while it rolls O to the updated template (O at an
//   older revision, N at the updated one). Once N is Ready, O is left out of the children
//   (deleted). A pair no longer active (the label was removed) drops N unless N is Ready already.
//   When O goes first (deleted by hand), N stays as a regular member: no capacity is lost.
// - Members counted against `replicas` are the Pods that are not the N of an active pair.
//   Scale-down removes not-Ready Pods first, then the newest, then the greatest name; an origin
//   removed this way takes its pending replacement with it.
// - A template change is rolled out one Pod at a time, new Pod first: one rollout pair at most,
//   its origin chosen not-Ready first, then oldest, then by name.
import type { HookContext, SyncAnswer, SyncRequest } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { byName, keepAllObserved, keepAsObserved, objectsOf } from '../../k8s/objects.js'
import { validityConditions } from '../common/validity.js'
import { timestamp } from '../../k8s/time.js'
import { selectorString } from '../../k8s/selectors.js'
import { parseCollaSetSpec, type CollaSetSpec } from './spec.js'
import { newPod, PodNamer, revisionOf, templateRevision } from './pods.js'
import { originLabelValue, originOf, OPS_LIFECYCLE_LABEL, SERVICE_READY, wantsReplace } from '../../k8s/labels.js'
import { byCreation, containersReady, hasServiceGate, isAvailable, isFinished, isReady, isTerminating, serviceReady } from '../../k8s/pods.js'

export interface CollaSetStatus {
  replicas: number
  readyReplicas: number
  availableReplicas: number
  updatedReplicas: number
  updatedReadyReplicas: number
  updatedAvailableReplicas: number
  currentRevision?: string
  updatedRevision?: string
  selector?: string
  conditions: unknown[]
  [key: string]: unknown
}

/** Scale-down order: not Ready first, then newest, then the greatest name. */
function removalOrder (a: KubeObject, b: KubeObject): number {
  const ar = isReady(a) ? 1 : 0
  const br = isReady(b) ? 1 : 0
  if (ar !== br) return ar - br
  return -byCreation(a, b)
}

/** Rollout order: not Ready first, then oldest, then by name. */
function rolloutOrder (a: KubeObject, b: KubeObject): number {
  const ar = isReady(a) ? 1 : 0
  const br = isReady(b) ? 1 : 0
  if (ar !== br) return ar - br
  return byCreation(a, b)
}

/**
 * What one sync decides about the observed Pods, step by step: which go (`drop`), which origin is
 * being replaced by which Pod (`pairOf`, with the replacements in `inPair`), and the Pods that
 * count against `replicas` (`logical`).
 */
interface PodPlan {
  /** The Pods that take part in the set: neither terminating nor finished. */
  members: KubeObject[]
  drop: Set<KubeObject>
  pairOf: Map<KubeObject, KubeObject>
  inPair: Set<KubeObject>
  logical: KubeObject[]
}

/** observe → pair → settle → scale → create → render. */
export function syncCollaSet (request: SyncRequest, context: HookContext): SyncAnswer {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const parsed = parseCollaSetSpec(parent)
  if (!parsed.ok) {
    // Law 2: every Pod stays as it is; the problem goes to the Valid condition.
    const status = { ...previous, conditions: validityConditions(previous.conditions, parsed.problems, context.now) }
    return { response: { status, children: keepAllObserved(request.children) }, effects: [] }
  }
  const spec = parsed.value
  const updated = templateRevision(parent.metadata.name, spec.template)
  const pods = objectsOf(request.children, 'Pod', 'v1')
  const plan = pairReplacements(pods, updated)
  settleReadyPairs(plan)
  scaleDown(plan, spec.replicas)
  const created = createPods(parent, spec, updated, pods, plan)
  const kept = pods.filter(p => !plan.drop.has(p))
  const children = [...kept.map(keepAsObserved), ...created].sort(byName)
  const status = renderStatus(kept, spec, updated, previous, context.now)
  return { response: { status, children }, effects: gateEffects(kept, context.now) }
}

/** A member takes part in the set: neither terminating nor finished. */
function isMember (pod: KubeObject): boolean {
  return !isTerminating(pod) && !isFinished(pod)
}

/**
 * Replacement pairs: origin → its replacement; the first candidate (Ready first, then oldest)
 * wins. Finished Pods go, and so do replacements no longer wanted that are not Ready yet.
 */
function pairReplacements (pods: KubeObject[], updated: string): PodPlan {
  const members = pods.filter(isMember)
  const memberByOrigin = new Map(members.map(p => [originLabelValue(p.metadata.name), p]))
  const plan: PodPlan = { members, drop: new Set(pods.filter(p => !isTerminating(p) && isFinished(p))), pairOf: new Map(), inPair: new Set(), logical: [] }
  const candidates = members.filter(p => originOf(p) !== undefined)
    .sort((a, b) => (isReady(a) === isReady(b) ? byCreation(a, b) : isReady(a) ? -1 : 1))
  for (const replacement of candidates) {
    const origin = memberByOrigin.get(originOf(replacement) as string)
    if (origin === undefined || origin === replacement) continue // The origin is gone: a regular member now.
    // A replacement of a replacement still coming up is no pair: cancelled like a withdrawn one.
    const active = !plan.inPair.has(origin) && (wantsReplace(origin) || (revisionOf(origin) !== updated && revisionOf(replacement) === updated))
    if (active && !plan.pairOf.has(origin)) {
      plan.pairOf.set(origin, replacement)
      plan.inPair.add(replacement)
    } else if (!isReady(replacement)) {
      plan.drop.add(replacement) // Cancelled (or a second one): not Ready yet, so nothing is lost.
    }
  }
  return plan
}

/** Pairs whose replacement is Ready are done: the origin goes, the replacement takes its place. */
function settleReadyPairs (plan: PodPlan): void {
  const replacements = new Set(plan.inPair)
  for (const pod of plan.members) {
    if (replacements.has(pod) || plan.drop.has(pod)) continue
    const replacement = plan.pairOf.get(pod)
    if (replacement !== undefined && isReady(replacement)) {
      plan.drop.add(pod)
      plan.pairOf.delete(pod)
      plan.inPair.delete(replacement)
      plan.logical.push(replacement)
    } else {
      plan.logical.push(pod)
    }
  }
}

/** Down to `replicas`: an origin removed takes its pending replacement with it. */
function scaleDown (plan: PodPlan, replicas: number): void {
  if (plan.logical.length <= replicas) return
  const removed = [...plan.logical].sort(removalOrder).slice(0, plan.logical.length - replicas)
  for (const pod of removed) {
    plan.drop.add(pod)
    const replacement = plan.pairOf.get(pod)
    if (replacement !== undefined) {
      plan.drop.add(replacement)
      plan.pairOf.delete(pod)
      plan.inPair.delete(replacement)
    }
  }
  plan.logical = plan.logical.filter(p => !plan.drop.has(p))
}

/** New Pods: up to `replicas`, a replacement per replace request, and one rollout Pod at a time. */
function createPods (parent: KubeObject, spec: CollaSetSpec, updated: string, pods: KubeObject[], plan: PodPlan): KubeObject[] {
  const { name, namespace } = parent.metadata
  const used = new Set<string>()
  for (const pod of pods) {
    used.add(pod.metadata.name)
    const origin = originOf(pod)
    if (origin !== undefined) used.add(origin)
  }
  // The CollaSet's name alone seeds the names, so they are the same in every namespace and
  // cluster: an OperationJob written in advance (manifests/examples) can name its targets.
  const namer = new PodNamer(name, name, used)
  const created: KubeObject[] = []
  for (let i = plan.logical.length; i < spec.replicas; i++) created.push(newPod(namer.next(), namespace, spec, updated))
  for (const pod of [...plan.logical].sort(byCreation)) {
    if (wantsReplace(pod) && !plan.pairOf.has(pod)) {
      const replacement = newPod(namer.next(), namespace, spec, updated, originLabelValue(pod.metadata.name))
      created.push(replacement)
      plan.pairOf.set(pod, replacement)
    }
  }
  // Rollout: one old-revision Pod at a time, new Pod first.
  const rolling = [...plan.pairOf.keys()].some(origin => !wantsReplace(origin))
  if (!rolling) {
    const stale = plan.logical.filter(p => revisionOf(p) !== updated && !plan.pairOf.has(p)).sort(rolloutOrder)[0]
    if (stale !== undefined) created.push(newPod(namer.next(), namespace, spec, updated, originLabelValue(stale.metadata.name)))
  }
  return created
}

/** The readiness gate: True once the containers are ready, unless a lifecycle holds the Pod. */
function gateEffects (kept: KubeObject[], now: Date): Effect[] {
  const effects: Effect[] = []
  for (const pod of kept) {
    const ref = refTo(pod)
    if (!isMember(pod) || ref === undefined) continue
    if (!hasServiceGate(pod) || !containersReady(pod) || serviceReady(pod)) continue
    if (pod.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined) continue
    effects.push({
      type: 'SetPodCondition',
      target: ref,
      condition: { type: SERVICE_READY, status: 'True', reason: 'ContainersReady', message: 'the containers of the Pod are ready', lastTransitionTime: timestamp(now) }
    })
  }
  return effects
}

function renderStatus (kept: KubeObject[], spec: CollaSetSpec, updated: string, previous: Record<string, unknown>, now: Date): CollaSetStatus {
  const live = kept.filter(isMember)
  const fresh = live.filter(p => revisionOf(p) === updated)
  return {
    replicas: live.length,
    readyReplicas: live.filter(isReady).length,
    availableReplicas: live.filter(isAvailable).length,
    updatedReplicas: fresh.length,
    updatedReadyReplicas: fresh.filter(isReady).length,
    updatedAvailableReplicas: fresh.filter(isAvailable).length,
    currentRevision: currentRevision(live, updated),
    updatedRevision: updated,
    selector: selectorString(spec.selector),
    conditions: validityConditions(previous.conditions, [], now)
  }
}

/**
 * The revision most members still run while a rollout is under way (ties: the smallest), the
 * updated one once every member runs it.
 */
function currentRevision (live: KubeObject[], updated: string): string {
  const counts = new Map<string, number>()
  for (const pod of live) {
    const revision = revisionOf(pod)
    if (revision === undefined || revision === updated) continue
    counts.set(revision, (counts.get(revision) ?? 0) + 1)
  }
  let best: [string, number] | undefined
  for (const entry of [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (best === undefined || entry[1] > best[1]) best = entry
  }
  return best?.[0] ?? updated
}
