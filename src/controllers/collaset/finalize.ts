// The CollaSet finalize hook: what must happen before a CollaSet goes. Its Pods and claims are
// its children, so the garbage collector takes them with it; under
// `scaleStrategy.persistentVolumeClaimRetentionPolicy.whenDeleted: Retain` (StatefulSet's and
// kuperator's) the claims must outlive it, so they are released first: each claim's owner
// reference to the CollaSet and its `controller-uid` label are removed (the ReleaseClaim effect:
// Metacontroller, as Kubernetes' ClaimObject, releases nothing of a parent being deleted), and
// the claim is no child any more. The CollaSet is finalized once no claim is left among them. Nothing else changes:
// every child is answered as observed and the status stays as it was.
import type { HookContext, SyncAnswer, SyncRequest } from '../../protocol/hooks.js'
import { refTo, type Effect } from '../../effects/types.js'
import { isRecord } from '../../k8s/types.js'
import { keepAllObserved, objectsOf } from '../../k8s/objects.js'
import { parseRetention } from './volumes.js'

/** How soon finalize is called again while claims wait for Metacontroller to release them. */
export const RELEASE_RETRY_SECONDS = 5

/**
 * The retention policy as written, whatever else the spec says: a CollaSet deleted with a spec
 * the sync refuses still keeps the claims it asked to keep.
 */
function retainsClaims (spec: unknown): boolean {
  const strategy = isRecord(spec) && isRecord(spec.scaleStrategy) ? spec.scaleStrategy : {}
  return parseRetention(strategy.persistentVolumeClaimRetentionPolicy, []).whenDeleted === 'Retain'
}

export function finalizeCollaSet (request: SyncRequest, _context: HookContext): SyncAnswer {
  const { parent } = request
  const status = isRecord(parent.status) ? parent.status : {}
  const children = keepAllObserved(request.children)
  const claims = retainsClaims(parent.spec) ? objectsOf(request.children, 'PersistentVolumeClaim', 'v1') : []
  const effects: Effect[] = []
  for (const claim of claims) {
    const ref = refTo(claim)
    if (ref !== undefined) effects.push({ type: 'ReleaseClaim', target: ref, ownerUid: String(parent.metadata.uid) })
  }
  const finalized = claims.length === 0
  return {
    response: { status, children, finalized, ...(finalized ? {} : { resyncAfterSeconds: RELEASE_RETRY_SECONDS }) },
    effects
  }
}
