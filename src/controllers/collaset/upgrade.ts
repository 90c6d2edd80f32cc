// Carrying out the rollout's decision (rollout.ts) for one sync: a replacement is a new Pod
// (createPods in sync.ts makes it); an in-place update is the Pod's own lifecycle (inplace.ts);
// a Recreate takes the Pod out of traffic, then leaves it out of the answer once it is not Ready,
// so that Metacontroller deletes it and the count brings a new Pod of the updated revision.
import type { KubeObject } from '../../k8s/types.js'
import { refTo, type Effect } from '../../effects/types.js'
import { hasServiceGate } from '../../k8s/pods.js'
import { SERVICE_READY } from '../../k8s/labels.js'
import { timestamp } from '../../k8s/time.js'
import type { CollaSetSpec } from './spec.js'
import type { Member, PodPlan } from './members.js'
import type { RolloutDecision } from './rollout.js'
import { revisionOf, type TemplateIds } from './pods.js'
import { heldForUpdate, inPlaceEffects, inPlaceUnderWay, RECREATE_REASON } from './inplace.js'

export interface Upgrade {
  /** The Pod whose replacement this sync creates, if any. */
  replacing?: KubeObject
  effects: Effect[]
  /** Pods whose service-ready condition the rollout holds False this sync: the gate leaves them be. */
  holding: Set<KubeObject>
}

/**
 * The Pods patched to `updated` in place and not back yet: their gate stays False. A Pod held
 * for an update that no longer goes on (paused, say) gets its gate back.
 */
function inPlaceHeld (plan: PodPlan, updated: string): Set<KubeObject> {
  const held = plan.logical.filter(m => revisionOf(m.pod) === updated && inPlaceUnderWay(m.pod, updated))
  return new Set(held.map(m => m.pod))
}

/**
 * Recreate: out of traffic first (the condition False, reason Recreate); once the Pod is not Ready
 * (or has no gate to wait on), it is dropped and no longer counted, so createPods makes its successor.
 */
function recreate (origin: Member, plan: PodPlan, revision: string, now: Date): Effect[] {
  const { pod } = origin
  if (!hasServiceGate(pod) || !origin.ready) {
    plan.drop.add(pod)
    plan.logical = plan.logical.filter(m => m.pod !== pod)
    return []
  }
  const ref = refTo(pod)
  if (ref === undefined || heldForUpdate(pod)) return []
  return [{
    type: 'SetPodCondition',
    target: ref,
    condition: {
      type: SERVICE_READY,
      status: 'False',
      reason: RECREATE_REASON,
      message: `the Pod leaves traffic to be recreated at revision ${revision}`,
      lastTransitionTime: timestamp(now)
    }
  }]
}

/** This sync's part of the rollout: what to create, the effects owed, and the gates held. */
export function carryOut (
  decision: RolloutDecision,
  plan: PodPlan,
  spec: CollaSetSpec,
  ids: TemplateIds,
  now: Date
): Upgrade {
  const updated = ids.revision
  const holding = inPlaceHeld(plan, updated)
  const { origin, method } = decision
  if (origin === undefined) return { effects: [], holding }
  switch (method) {
    case 'Replace':
      return { replacing: origin.pod, effects: [], holding }
    case 'InPlace':
      holding.add(origin.pod)
      return { effects: inPlaceEffects(origin, spec, ids, now), holding }
    case 'Recreate':
      holding.add(origin.pod)
      return { effects: recreate(origin, plan, updated, now), holding }
    default:
      return { effects: [], holding }
  }
}
