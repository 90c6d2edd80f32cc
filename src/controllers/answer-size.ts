// What a sync call's answer may weigh, from its request alone, before the hook runs: the wire
// budgets the calls in flight by the answers they will give, not only by the bodies they bring.
import type { SyncRequest } from '../protocol/hooks.js'
import { isRecord } from '../k8s/types.js'
import { objectsOf } from '../k8s/objects.js'
import { copiesBytes, MAX_ANSWER_BYTES } from './common/answer-size.js'
import { jobFlowNewBytes } from './jobflow/answer-size.js'
import { daemonJobNewBytes } from './daemonjob/answer-size.js'

/**
 * At most how many bytes the children a sync of `kind` creates may add to its answer, beyond the
 * children the request brings (kept as they came): the spec's templates times what multiplies
 * them. Never more than MAX_ANSWER_BYTES, since a hook answers a larger one `Invalid`, small.
 * EphemeralJob and OperationJob create no children: 0. Pure and cheap: the spec's JSON length
 * once per template, a count of the children and Nodes.
 */
export function expectedNewChildBytes (kind: string, request: SyncRequest): number {
  return Math.min(MAX_ANSWER_BYTES, newChildBytes(kind, request))
}

function newChildBytes (kind: string, request: SyncRequest): number {
  if (kind === 'jobflow') return jobFlowNewBytes(request)
  if (kind === 'daemonjob') return daemonJobNewBytes(request)
  if (kind === 'collaset') return collaSetNewBytes(request)
  return 0
}

/** A copy of the template for each replica without a Pod, and one more for a rollout. */
function collaSetNewBytes (request: SyncRequest): number {
  const spec = isRecord(request.parent.spec) ? request.parent.spec : {}
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1
  const pods = objectsOf(request.children, 'Pod', 'v1').length
  return copiesBytes(spec.template, undefined, Math.max(0, replicas - pods) + 1)
}
