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
//   its origin chosen not-Ready first, then oldest, then by name, among the Pods the update
//   strategy lets it touch (rollout.ts: paused, partition, byLabel, operationDelaySeconds).
// - While paused, no Pod is created or removed to scale and none is updated; replace requests
//   and pairs already open go on (neither loses capacity).
import type { HookContext, SyncAnswer, SyncRequest, SyncResponse } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { byName, keepAllObserved, keepAsObserved, objectsOf } from '../../k8s/objects.js'
import { invalidSpecAnswer } from '../common/validity.js'
import {
  answerSizeProblems, CHILD_OVERHEAD_BYTES, podParts, specBytes, type AnswerFigures, type ChildFigure
} from '../common/answer-size.js'
import { timestamp } from '../../k8s/time.js'
import { parseCollaSetSpec, type CollaSetSpec } from './spec.js'
import { newPod, PodNamer, revisionOf, SequenceNamer, templateRevision, type TemplateIds } from './pods.js'
import { originLabelValue, originOf, OPS_LIFECYCLE_LABEL, SERVICE_READY, wantsReplace } from '../../k8s/labels.js'
import { containersReady, hasServiceGate, isFinished, isTerminating } from '../../k8s/pods.js'
import {
  byMemberCreation, member, replacementOrder, type Member, type PodPlan
} from './members.js'
import { renderStatus } from './status.js'
import {
  applyDeletes, deleteRequests, drainEffects, excludeEffects, scaleCondition, scaleDown, type DeleteRequests
} from './scale.js'
import type { ConditionState } from './status.js'
import { decideRollout, updateCondition } from './rollout.js'
import { templateShape } from './inplace.js'
import { carryOut } from './upgrade.js'
import { finalizeCollaSet } from './finalize.js'
import { includeEffects, includeNote, inclusions, type Inclusions } from './include.js'
import { answerClaims, attachClaims, freeInstances, INSTANCE_LABEL } from './volumes.js'

export type { CollaSetStatus } from './status.js'

/** observe → pair → settle → scale → create → render. */
export function syncCollaSet (request: SyncRequest, context: HookContext): SyncAnswer {
  // Hook v1 sends a CollaSet being deleted to sync, saying so: it is finalized.
  if (request.finalizing === true) return finalizeCollaSet(request, context)
  const { parent } = request
  const previous = isRecord(parent.status) ? parent.status : {}
  const parsed = parseCollaSetSpec(parent)
  if (!parsed.ok) {
    // Law 2 (common/validity.ts): every Pod stays as it is; the status as it was, no phase to set.
    const kept = { status: previous, children: keepAllObserved(request.children), problems: parsed.problems }
    return invalidSpecAnswer(previous, kept, context.now)
  }
  const spec = parsed.value
  const updated = templateRevision(parent.metadata.name, spec.template)
  const ids: TemplateIds = { revision: updated, shape: templateShape(spec.template) }
  const pods = objectsOf(request.children, 'Pod', 'v1')
  const claims = objectsOf(request.children, 'PersistentVolumeClaim', 'v1')
  const plan = pairReplacements(observe(pods), updated)
  settleReadyPairs(plan)
  const { deletes, included, scale } = scaleSet(request, spec, pods, plan, context.now)
  // Replace requests are honoured even while paused: they are operations, neither scale nor update.
  const requests = replaceRequests(plan)
  const rollout = decideRollout(plan, spec, ids, requests, context.now)
  const upgrade = carryOut(rollout, plan, spec, ids, context.now)
  const replacing = [...requests, ...optional(upgrade.replacing)]
  const created = createPods(parent, spec, ids, { pods, claims }, plan, replacing)
  if ('problems' in created) {
    // Over the size budget: no Pod was built, and every one observed stays (law 2).
    const kept = { status: previous, children: keepAllObserved(request.children), problems: created.problems }
    return invalidSpecAnswer(previous, kept, context.now)
  }
  const children = answerChildren(parent, spec, pods.filter(p => !plan.drop.has(p)), created, claims)
  // The members kept: the status counts them, the gate goes through them.
  const released = spec.paused ? new Set<KubeObject>() : deletes.excluded
  const live = plan.members.filter(m => !plan.drop.has(m.pod) && !released.has(m.pod))
  const pairing = new Set([...plan.pairOf.keys(), ...plan.draining.keys(), ...upgrade.holding])
  const update = updateCondition(plan.logical, updated, rollout, spec)
  const input = { live, replacing: pairing, spec, updated, scale, update, nextUpdateMs: rollout.nextMs }
  const status = renderStatus(input, parent, previous, context.now)
  const response: SyncResponse = { status, children }
  // Time is a resync (law 4): a delay ends at a moment no Pod change announces.
  const wakeMs = Math.min(rollout.nextMs ?? Infinity, plan.drainUntilMs ?? Infinity)
  if (wakeMs !== Infinity) {
    response.resyncAfterSeconds = Math.max(1, Math.ceil((wakeMs - context.now.getTime()) / 1000))
  }
  const releases = spec.paused
    ? []
    : [...excludeEffects(deletes), ...includeEffects(included, String(parent.metadata.uid))]
  // A Pod leaving (drained, waiting out a delay) keeps its gate False, as one the rollout holds.
  const gates = gateEffects(live, new Set([...upgrade.holding, ...plan.draining.keys()]), context.now)
  const effects = [...drainEffects(plan, context.now), ...releases, ...upgrade.effects, ...gates]
  return { response, effects }
}

/**
 * Scale: the Pods asked to go or to join, and the `Scale` condition from the Pods as observed
 * (pairs settled), before this sync adds or removes any; then, unless paused, the deletes and the
 * scale-in, each Pod drained first (scale.ts).
 */
function scaleSet (request: SyncRequest, spec: CollaSetSpec, pods: KubeObject[], plan: PodPlan, now: Date): {
  deletes: DeleteRequests, included: Inclusions, scale: ConditionState
} {
  const deletes = deleteRequests(plan, pods, spec)
  const included = inclusions(request, spec, pods)
  const scale = scaleCondition(plan.logical.length, spec, deletes)
  scale.message += includeNote(included)
  if (spec.paused) return { deletes, included, scale }
  const drain = { nowMs: now.getTime(), delaySeconds: spec.scaleStrategy.operationDelaySeconds }
  applyDeletes(plan, deletes, drain)
  scaleDown(plan, spec.replicas, drain)
  if (plan.drainUntilMs !== undefined) {
    scale.message += `; out of traffic, the Pod goes at ${timestamp(new Date(plan.drainUntilMs))} ` +
      `(scaleStrategy.operationDelaySeconds ${drain.delaySeconds})`
  }
  return { deletes, included, scale }
}

/**
 * The children of the answer: the Pods kept (by identity) and created, and the claims, which go by
 * those Pods: a claim whose instance lost its last Pod is judged here (volumes.ts).
 */
function answerChildren (
  parent: KubeObject,
  spec: CollaSetSpec,
  kept: readonly KubeObject[],
  created: readonly KubeObject[],
  claims: readonly KubeObject[]
): KubeObject[] {
  const { volumeClaimTemplates, scaleStrategy } = spec
  const policy = { retention: scaleStrategy.retention, released: scaleStrategy.podToExclude }
  const volumes = answerClaims(claims, [...kept, ...created], volumeClaimTemplates, policy, parent.metadata.namespace)
  return [...kept.map(keepAsObserved), ...created, ...volumes.kept.map(keepAsObserved), ...volumes.created]
    .sort(byName)
}

function optional<T> (value: T | undefined): T[] {
  return value === undefined ? [] : [value]
}

/** The observed Pods that take part in the set (members), and the finished ones, which go. */
interface Observed {
  members: Member[]
  finished: KubeObject[]
}

/**
 * A member is neither terminating nor finished; a finished Pod is dropped; a terminating one is
 * neither, and is kept as observed.
 */
function observe (pods: readonly KubeObject[]): Observed {
  const observed: Observed = { members: [], finished: [] }
  for (const pod of pods) {
    if (isTerminating(pod)) continue
    if (isFinished(pod)) observed.finished.push(pod)
    else observed.members.push(member(pod))
  }
  return observed
}

/**
 * Replacement pairs: origin → its replacement; the first candidate (Ready first, then oldest)
 * wins. Finished Pods go, and so do replacements no longer wanted that are not Ready yet.
 */
function pairReplacements ({ members, finished }: Observed, updated: string): PodPlan {
  const plan: PodPlan = {
    members, drop: new Set(finished), pairOf: new Map(), inPair: new Set(), logical: [], draining: new Map()
  }
  const candidates = members.filter(m => originOf(m.pod) !== undefined).sort(replacementOrder)
  const memberByOrigin = originsNamed(members, candidates)
  for (const replacement of candidates) {
    const origin = memberByOrigin.get(originOf(replacement.pod) as string)
    if (origin === undefined || origin.pod === replacement.pod) continue // The origin is gone: a regular member now.
    // A replacement of a replacement still coming up is no pair: cancelled like a withdrawn one.
    const active = !plan.inPair.has(
      origin.pod
    ) && (wantsReplace(origin.pod) || (revisionOf(origin.pod) !== updated && revisionOf(replacement.pod) === updated))
    if (active && !plan.pairOf.has(origin.pod)) {
      plan.pairOf.set(origin.pod, replacement)
      plan.inPair.add(replacement.pod)
    } else if (!replacement.ready) {
      plan.drop.add(replacement.pod) // Cancelled (or a second one): not Ready yet, so nothing is lost.
    }
  }
  return plan
}

/**
 * The members the candidates name as their origin, by that name (originLabelValue); of two
 * members with the same one, the later. Only those are indexed: a replacement is rare, and an
 * index of every member cost more than the rest of the pairing.
 */
function originsNamed (members: readonly Member[], candidates: readonly Member[]): Map<string, Member> {
  const byOrigin = new Map<string, Member>()
  if (candidates.length === 0) return byOrigin
  const named = new Set(candidates.map(m => originOf(m.pod)))
  for (const m of members) {
    const origin = originLabelValue(m.pod.metadata.name)
    if (named.has(origin)) byOrigin.set(origin, m)
  }
  return byOrigin
}

/** Pairs whose replacement is Ready are done: the origin goes, the replacement takes its place. */
function settleReadyPairs (plan: PodPlan): void {
  const replacements = new Set(plan.inPair)
  for (const m of plan.members) {
    if (replacements.has(m.pod) || plan.drop.has(m.pod)) continue
    const replacement = plan.pairOf.get(m.pod)
    if (replacement !== undefined && replacement.ready) {
      plan.drop.add(m.pod)
      plan.pairOf.delete(m.pod)
      plan.inPair.delete(replacement.pod)
      plan.logical.push(replacement)
    } else {
      plan.logical.push(m)
    }
  }
}

/**
 * The Pods of a sync, sized before they are built (common/answer-size.ts): each is the template
 * with a name, labels and a readiness gate, and brings a claim per claim template (counted with
 * it); the children kept (Pods and claims) weigh about as much.
 */
function newPodFigures (spec: CollaSetSpec, count: number, kept: number): AnswerFigures {
  const templateBytes = specBytes(spec.template)
  const claimBytes = spec.volumeClaimTemplates.reduce((sum, t) => sum + specBytes(t) + CHILD_OVERHEAD_BYTES, 0)
  const bytes = templateBytes + CHILD_OVERHEAD_BYTES + claimBytes
  const parts = podParts(templateBytes, 0, 0)
  const figure: ChildFigure = { what: 'the new Pods', per: 'Pod', count, bytes, total: bytes * count, parts }
  return { figures: [figure], kept: { count: kept, bytes: bytes * kept } }
}

/**
 * New Pods: up to `replicas`, a replacement per replace request, and one rollout Pod at a time.
 * What to create is decided first, each new Pod as the Pod it replaces (undefined: it adds
 * capacity); names only then, as the names taken cost a pass over every Pod and most syncs create
 * nothing.
 */
function createPods (
  parent: KubeObject,
  spec: CollaSetSpec,
  ids: TemplateIds,
  { pods, claims }: { pods: KubeObject[], claims: KubeObject[] },
  plan: PodPlan,
  replacing: Array<KubeObject | undefined>
): KubeObject[] | { problems: string[] } {
  const origins: Array<KubeObject | undefined> = []
  // Paused: no Pod is created to scale (nor removed: sync.ts skips scaleDown).
  if (!spec.paused) for (let i = plan.logical.length; i < spec.replicas; i++) origins.push(undefined)
  origins.push(...replacing)
  if (origins.length === 0) return []
  const oversize = answerSizeProblems(newPodFigures(spec, origins.length, pods.length + claims.length))
  if (oversize.length > 0) return { problems: oversize }
  const { name, namespace } = parent.metadata
  // The CollaSet's name alone seeds the names, so they are the same in every namespace and
  // cluster: an OperationJob written in advance (manifests/examples) can name its targets.
  const { podToDelete, podToExclude, podToInclude } = spec.scaleStrategy
  const held = new Set(takenNames(pods, [...podToDelete, ...podToExclude, ...podToInclude]))
  // A Pod added for capacity takes the instance of claims no Pod holds (volumes.ts), under the
  // instance's name when that is free. The namer hands out no claim's instance: not a free one,
  // nor one whose claims are still being deleted (the new Pod would mount a claim about to go).
  const free = freeInstances(claims, pods.filter(p => !plan.drop.has(p)), spec.volumeClaimTemplates, podToExclude)
  const taken = [...held, ...claims.flatMap(c => c.metadata.labels?.[INSTANCE_LABEL] ?? [])]
  const namer = spec.naming === 'PersistentSequence' ? new SequenceNamer(name, taken) : new PodNamer(name, name, taken)
  return origins.map(origin => {
    const originLabel = origin === undefined ? undefined : originLabelValue(origin.metadata.name)
    const instance = origin === undefined ? free.shift() : undefined
    const podName = instance !== undefined && !held.has(instance) ? instance : namer.next()
    const pod = newPod(podName, namespace, spec, ids, originLabel)
    attachClaims(pod, spec.volumeClaimTemplates, origin, instance)
    return pod
  })
}

/**
 * The Pods that ask to be replaced (to-replace) and have no replacement yet, oldest first, each
 * once. Ordering every Pod costs more than the rest of the sync, so it is done only when some
 * request waits, which a steady set has none of. All of them are ordered, not just the waiting
 * ones: the same order for timestamps from an API server, but even a request with malformed ones
 * gets the answer it always got.
 */
function replaceRequests (plan: PodPlan): Set<KubeObject> {
  const requests = new Set<KubeObject>()
  if (!plan.logical.some(m => awaitsReplacement(plan, m.pod))) return requests
  for (const { pod } of [...plan.logical].sort(byMemberCreation)) {
    if (awaitsReplacement(plan, pod)) requests.add(pod)
  }
  return requests
}

function awaitsReplacement (plan: PodPlan, pod: KubeObject): boolean {
  return wantsReplace(pod) && !plan.pairOf.has(pod)
}

/**
 * The names no new Pod may take: every observed Pod's, every origin a replacement names, every
 * instance a Pod carries (a new Pod's name is its instance: volumes.ts), and every
 * name podToDelete lists (a new Pod under such a name would be deleted at once) or podToExclude
 * lists (a released Pod may still hold it).
 */
function * takenNames (pods: readonly KubeObject[], toDelete: readonly string[]): Generator<string> {
  yield * toDelete
  for (const pod of pods) {
    yield pod.metadata.name
    const origin = originOf(pod)
    if (origin !== undefined) yield origin
    const instance = pod.metadata.labels?.[INSTANCE_LABEL]
    if (instance !== undefined) yield instance
  }
}

/**
 * The readiness gate: True once the containers are ready, unless a lifecycle holds the Pod or the
 * rollout does (`holding`: its update is under way).
 */
function gateEffects (live: readonly Member[], holding: ReadonlySet<KubeObject>, now: Date): Effect[] {
  const effects: Effect[] = []
  // The cheap checks first, the reference (a new object) last: most Pods owe nothing.
  for (const { pod, serving } of live) {
    if (serving || pod.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined || holding.has(pod)) continue
    if (!hasServiceGate(pod) || !containersReady(pod)) continue
    const ref = refTo(pod)
    if (ref === undefined) continue
    effects.push({
      type: 'SetPodCondition',
      target: ref,
      condition: {
        type: SERVICE_READY,
        status: 'True',
        reason: 'ContainersReady',
        message: 'the containers of the Pod are ready',
        lastTransitionTime: timestamp(now)
      }
    })
  }
  return effects
}
