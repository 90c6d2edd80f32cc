// The CollaSet sync hook: from the observed CollaSet and its Pods to the Pods it should have and
// the status that describes them, plus the readiness-gate conditions still owed (effects:
// Metacontroller cannot write pods/status). Pure: no I/O, no randomness.
//
// Decisions (README, "CollaSet"):
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
import type { LabelSelector } from '../../k8s/selectors.js'
import { parseCollaSetSpec } from './spec.js'
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

/** A selector as `kubectl get -l` spells it: what the scale subresource reports. */
export function selectorString (selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`)
  for (const r of selector.matchExpressions ?? []) {
    const values = [...(r.values ?? [])].sort().join(',')
    if (r.operator === 'In') parts.push(`${r.key} in (${values})`)
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${values})`)
    else if (r.operator === 'Exists') parts.push(r.key)
    else parts.push(`!${r.key}`)
  }
  return parts.join(',')
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

export function syncCollaSet (request: SyncRequest, context: HookContext): SyncAnswer {
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const parsed = parseCollaSetSpec(parent)
  const pods = objectsOf(request.children, 'Pod', 'v1')
  if (!parsed.ok) {
    // Law 2: every Pod stays as it is; the problem goes to the Valid condition.
    const status = { ...previous, conditions: validityConditions(previous.conditions, parsed.problems, context.now) }
    return { response: { status, children: keepAllObserved(request.children) }, effects: [] }
  }
  const spec = parsed.value
  const name = parent.metadata.name
  const namespace = parent.metadata.namespace
  const updated = templateRevision(name, spec.template)

  const members = pods.filter(p => !isTerminating(p) && !isFinished(p))
  const memberByOrigin = new Map(members.map(p => [originLabelValue(p.metadata.name), p]))
  const drop = new Set<KubeObject>(pods.filter(p => !isTerminating(p) && isFinished(p)))

  // Replacement pairs: origin → its replacement. The first candidate (Ready first, then oldest) wins.
  const pairOf = new Map<KubeObject, KubeObject>()
  const inPair = new Set<KubeObject>()
  const candidates = members.filter(p => originOf(p) !== undefined)
    .sort((a, b) => (isReady(a) === isReady(b) ? byCreation(a, b) : isReady(a) ? -1 : 1))
  for (const replacement of candidates) {
    const origin = memberByOrigin.get(originOf(replacement) as string)
    if (origin === undefined || origin === replacement) continue // The origin is gone: a regular member now.
    // A replacement of a replacement still coming up is no pair: cancelled like a withdrawn one.
    const active = !inPair.has(origin) && (wantsReplace(origin) || (revisionOf(origin) !== updated && revisionOf(replacement) === updated))
    if (active && !pairOf.has(origin)) {
      pairOf.set(origin, replacement)
      inPair.add(replacement)
    } else if (!isReady(replacement)) {
      drop.add(replacement) // Cancelled (or a second one): not Ready yet, so nothing is lost.
    }
  }

  // Pairs whose replacement is Ready are done: the origin goes, the replacement takes its place.
  let logical: KubeObject[] = []
  const replacements = new Set(inPair)
  for (const pod of members) {
    if (replacements.has(pod) || drop.has(pod)) continue
    const replacement = pairOf.get(pod)
    if (replacement !== undefined && isReady(replacement)) {
      drop.add(pod)
      pairOf.delete(pod)
      inPair.delete(replacement)
      logical.push(replacement)
    } else {
      logical.push(pod)
    }
  }

  // Scale down.
  if (logical.length > spec.replicas) {
    const removed = [...logical].sort(removalOrder).slice(0, logical.length - spec.replicas)
    for (const pod of removed) {
      drop.add(pod)
      const replacement = pairOf.get(pod)
      if (replacement !== undefined) {
        drop.add(replacement)
        pairOf.delete(pod)
        inPair.delete(replacement)
      }
    }
    logical = logical.filter(p => !drop.has(p))
  }

  const used = new Set<string>()
  for (const pod of pods) {
    used.add(pod.metadata.name)
    const origin = originOf(pod)
    if (origin !== undefined) used.add(origin)
  }
  const namer = new PodNamer(`${namespace ?? ''}/${name}/${parent.metadata.uid ?? ''}`, name, used)
  const created: KubeObject[] = []

  // Scale up.
  for (let i = logical.length; i < spec.replicas; i++) created.push(newPod(namer.next(), namespace, spec, updated))

  // Replace requests.
  for (const pod of [...logical].sort(byCreation)) {
    if (wantsReplace(pod) && !pairOf.has(pod)) {
      const replacement = newPod(namer.next(), namespace, spec, updated, originLabelValue(pod.metadata.name))
      created.push(replacement)
      pairOf.set(pod, replacement)
    }
  }

  // Rollout: one old-revision Pod at a time, new Pod first.
  const rolling = [...pairOf.keys()].some(origin => !wantsReplace(origin))
  if (!rolling) {
    const stale = logical.filter(p => revisionOf(p) !== updated && !pairOf.has(p)).sort(rolloutOrder)[0]
    if (stale !== undefined) created.push(newPod(namer.next(), namespace, spec, updated, originLabelValue(stale.metadata.name)))
  }

  const kept = pods.filter(p => !drop.has(p))
  const children = [...kept.map(keepAsObserved), ...created]
    .sort(byName)

  // The readiness gate: True once the containers are ready, unless a lifecycle holds the Pod.
  const effects: Effect[] = []
  for (const pod of kept) {
    const ref = refTo(pod)
    if (isTerminating(pod) || isFinished(pod) || ref === undefined) continue
    if (!hasServiceGate(pod) || !containersReady(pod) || serviceReady(pod)) continue
    if (pod.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined) continue
    effects.push({
      type: 'SetPodCondition',
      target: ref,
      condition: { type: SERVICE_READY, status: 'True', reason: 'ContainersReady', message: 'the containers of the Pod are ready', lastTransitionTime: timestamp(context.now) }
    })
  }

  const live = kept.filter(p => !isTerminating(p) && !isFinished(p))
  const fresh = live.filter(p => revisionOf(p) === updated)
  const status: CollaSetStatus = {
    replicas: live.length,
    readyReplicas: live.filter(isReady).length,
    availableReplicas: live.filter(isAvailable).length,
    updatedReplicas: fresh.length,
    updatedReadyReplicas: fresh.filter(isReady).length,
    updatedAvailableReplicas: fresh.filter(isAvailable).length,
    currentRevision: currentRevision(live, updated),
    updatedRevision: updated,
    selector: selectorString(spec.selector),
    conditions: validityConditions(previous.conditions, [], context.now)
  }
  return { response: { status, children }, effects }
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
