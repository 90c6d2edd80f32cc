// The rollout of a template change: which Pod of an older revision gets its replacement next, and
// what holds the others back. kuperator's update strategy (KusionStack kube-api
// apps/v1alpha1/collaset_types.go; the choice of Pods after kube-xset synccontrols/x_update.go):
// `spec.paused`, `updateStrategy.rollingUpdate.byPartition.partition` (Pods kept at an older
// revision), `.byLabel` (only labelled Pods), `updateStrategy.operationDelaySeconds` (a pause
// between one Pod's update and the next); and how the Pod takes the template
// (`updateStrategy.podUpgradePolicy`: in place, replaced or recreated; upgrade.ts carries it out).
// One Pod at a time: none starts while another's update is under way.
import type { KubeObject } from '../../k8s/types.js'
import { byCreation } from '../../k8s/pods.js'
import { originOf, wantsReplace } from '../../k8s/labels.js'
import { timestamp } from '../../k8s/time.js'
import type { CollaSetSpec } from './spec.js'
import { byReadiness, readyTime, rolloutOrder, type Member, type PodPlan } from './members.js'
import { revisionOf, UPDATE_INCLUDED_LABEL, type TemplateIds } from './pods.js'
import { heldForUpdate, inPlaceKind, inPlaceRecord } from './inplace.js'
import type { ConditionState } from './status.js'

/** Why no Pod of an older revision is started this sync. */
export type RolloutHold = 'Paused' | 'Partitioned' | 'ByLabel' | 'OperationDelay' | 'InPlaceImpossible'

/** How the origin takes the updated template. */
export type RolloutMethod = 'InPlace' | 'Replace' | 'Recreate'

export interface RolloutDecision {
  /** The Pod this sync updates (or goes on updating), and how. */
  origin?: Member
  method?: RolloutMethod
  hold?: RolloutHold
  /** Under `InPlaceImpossible`: the Pod next in line, which cannot take the template in place. */
  blocked?: KubeObject
  /** While `OperationDelay` holds: when the next Pod may start (ms since the epoch). */
  nextMs?: number
}

/**
 * kuperator's order of Pods to update: the updated revision first, then those being rolled, then
 * not Ready, then the one Ready last (a Ready time not known first), then the newest, then by name.
 * Under a partition the first `replicas - partition` in this order are updated, the rest kept.
 */
function updateOrder (updated: string, rolling: ReadonlySet<KubeObject>): (a: Member, b: Member) => number {
  return (a, b) => {
    const au = revisionOf(a.pod) === updated
    if (au !== (revisionOf(b.pod) === updated)) return au ? -1 : 1
    const ar = rolling.has(a.pod)
    if (ar !== rolling.has(b.pod)) return ar ? -1 : 1
    return byReadiness(a, b) || -byCreation(a.pod, b.pod)
  }
}

/** The Pods the partition lets the rollout touch; undefined: all of them. */
function partitionAllows (
  plan: PodPlan,
  spec: CollaSetSpec,
  updated: string,
  rolling: ReadonlySet<KubeObject>
): ReadonlySet<KubeObject> | undefined {
  const partition = spec.updateStrategy.partition ?? 0
  const wanted = spec.replicas - partition
  // As kuperator: fewer Pods than it would update, and it updates them all.
  if (partition === 0 || plan.logical.length < wanted) return undefined
  if (wanted <= 0) return new Set()
  const ordered = [...plan.logical].sort(updateOrder(updated, rolling))
  return new Set(ordered.slice(0, wanted).map(m => m.pod))
}

/**
 * When the next Pod may start under `operationDelaySeconds`: that long after the last replacement
 * of the updated revision became Ready (its Ready condition's lastTransitionTime, as observed).
 */
function nextUpdateMs (logical: readonly Member[], updated: string, spec: CollaSetSpec): number | undefined {
  const delaySeconds = spec.updateStrategy.operationDelaySeconds
  if (delaySeconds === 0) return undefined
  const recreated = spec.updateStrategy.podUpgradePolicy === 'Recreate'
  let last: number | undefined
  for (const { pod, ready } of logical) {
    if (!ready || revisionOf(pod) !== updated) continue
    if (!recreated && originOf(pod) === undefined && inPlaceRecord(pod)?.revision !== updated) continue
    const at = readyTime(pod)
    if (!Number.isNaN(at) && (last === undefined || at > last)) last = at
  }
  return last === undefined ? undefined : last + delaySeconds * 1000
}

/** How a Pod takes the template under the policy; undefined: it cannot (InPlaceOnly, another shape). */
function methodFor (pod: KubeObject, spec: CollaSetSpec, shape: string): RolloutMethod | undefined {
  switch (spec.updateStrategy.podUpgradePolicy) {
    case 'Replace': return 'Replace'
    case 'Recreate': return 'Recreate'
    case 'InPlaceIfPossible': return inPlaceKind(pod, spec, shape) !== undefined ? 'InPlace' : 'Replace'
    case 'InPlaceOnly': return inPlaceKind(pod, spec, shape) !== undefined ? 'InPlace' : undefined
  }
}

function decided (origin: Member, spec: CollaSetSpec, shape: string): RolloutDecision {
  const method = methodFor(origin.pod, spec, shape)
  return method === undefined ? { hold: 'InPlaceImpossible', blocked: origin.pod } : { origin, method }
}

/**
 * The Pods whose update is under way, so no other starts: replacement pairs (but those a replace
 * request opened), Pods updated in place and not back in traffic and Ready yet, and under
 * Recreate a new Pod not Ready yet.
 */
function underWay (plan: PodPlan, spec: CollaSetSpec, updated: string): Set<KubeObject> {
  const busy = new Set([...plan.pairOf.keys()].filter(origin => !wantsReplace(origin)))
  const recreate = spec.updateStrategy.podUpgradePolicy === 'Recreate'
  for (const m of plan.logical) {
    if (revisionOf(m.pod) !== updated) continue
    const inPlace = heldForUpdate(m.pod) || (!m.ready && inPlaceRecord(m.pod)?.revision === updated)
    if (inPlace || (recreate && !m.ready && originOf(m.pod) === undefined)) busy.add(m.pod)
  }
  return busy
}

/**
 * The next Pod to update, if any: one at a time (none while another's update is under way; a Pod
 * taken out of traffic for its update by an earlier sync goes on first), of an older revision,
 * not paired nor asking for a replacement already (`requests`), allowed by byLabel or the
 * partition, not within the delay; not Ready first, then oldest. Then how, by the policy.
 */
export function decideRollout (
  plan: PodPlan,
  spec: CollaSetSpec,
  ids: TemplateIds,
  requests: ReadonlySet<KubeObject>,
  now: Date
): RolloutDecision {
  if (spec.paused) return { hold: 'Paused' }
  const updated = ids.revision
  const stale = plan.logical.filter(
    m => revisionOf(m.pod) !== updated && !plan.pairOf.has(m.pod) && !requests.has(m.pod)
  )
  const resumed = stale.find(m => heldForUpdate(m.pod))
  if (resumed !== undefined) return decided(resumed, spec, ids.shape)
  const busy = underWay(plan, spec, updated)
  if (stale.length === 0 || busy.size > 0) return {}
  const { byLabel } = spec.updateStrategy
  const allowed = byLabel ? undefined : partitionAllows(plan, spec, updated, busy)
  const eligible = stale.filter(m => byLabel
    ? m.pod.metadata.labels?.[UPDATE_INCLUDED_LABEL] !== undefined
    : allowed === undefined || allowed.has(m.pod))
  if (eligible.length === 0) return { hold: byLabel ? 'ByLabel' : 'Partitioned' }
  const nextMs = nextUpdateMs(plan.logical, updated, spec)
  if (nextMs !== undefined && nextMs > now.getTime()) return { hold: 'OperationDelay', nextMs }
  const origin = eligible.sort(rolloutOrder)[0]
  return origin === undefined ? {} : decided(origin, spec, ids.shape)
}

/** `Update`: whether the rollout has Pods left to update, and what holds it. */
export function updateCondition (
  logical: readonly Member[],
  updated: string,
  decision: RolloutDecision,
  spec: CollaSetSpec
): ConditionState {
  const done = logical.filter(m => revisionOf(m.pod) === updated).length
  const counted = `${done} of ${logical.length} Pods run revision ${updated}`
  if (decision.hold === 'Paused') {
    return { status: 'False', reason: 'Paused', message: `spec.paused: no Pod is updated (${counted})` }
  }
  if (done === logical.length) {
    return { status: 'True', reason: 'Updated', message: `every Pod runs revision ${updated}` }
  }
  const kept = logical.length - done
  const pods = `${kept} Pod${kept === 1 ? '' : 's'}`
  switch (decision.hold) {
    case 'Partitioned':
      return {
        status: 'True',
        reason: 'Partitioned',
        message: `partition ${spec.updateStrategy.partition ?? 0} keeps ${pods} at an older revision (${counted})`
      }
    case 'ByLabel':
      return {
        status: 'True',
        reason: 'ByLabel',
        message: `${pods} of an older revision wait for the label ${UPDATE_INCLUDED_LABEL} (${counted})`
      }
    case 'InPlaceImpossible':
      return {
        status: 'False',
        reason: 'InPlaceImpossible',
        message: `podUpgradePolicy InPlaceOnly: Pod ${decision.blocked?.metadata.name ?? ''} cannot take revision ` +
          `${updated} in place (its template changed beyond images, or the Pod predates in-place updates); ` +
          `replace it or choose another policy (${counted})`
      }
    case 'OperationDelay':
      return {
        status: 'False',
        reason: 'OperationDelay',
        message: `operationDelaySeconds ${spec.updateStrategy.operationDelaySeconds}: the next Pod is updated at ` +
          `${timestamp(new Date(decision.nextMs ?? 0))} (${counted})`
      }
    default:
      return { status: 'False', reason: 'Updating', message: counted }
  }
}
