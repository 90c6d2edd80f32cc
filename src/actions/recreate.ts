// The built-in `Recreate` action: evicts the target Pod through the eviction API, so that
// PodDisruptionBudgets hold, and succeeds once the Pod's workload has it back and Ready.
// Registered with PodOpsLifecycle: the Pod is out of traffic before it is evicted.
//
// - The eviction is an effect, owed again on every sync while the target Pod exists: a
//   PodDisruptionBudget refusal (HTTP 429) shows in the job's EffectsApplied condition and is
//   retried, it does not fail the target. The deadline still bounds the wait.
// - "Back" is read from the Pod's controller (its ownerReference with controller: true): when the
//   action evicts, it remembers how many Pods the controller should have Ready with the target
//   counted (`ReadyBefore`: the others Ready then, plus one), and succeeds once the controller has
//   that many Ready Pods other than the evicted one. This holds for workloads that recreate under
//   the same name (StatefulSet) and under a new one (ReplicaSet, CollaSet); extraInfo.NewPod names
//   the Pod that came back (the same name when there is one, else the controller's newest Ready Pod).
// - A Pod without a controller would never come back: the target fails with NoController before
//   anything is evicted.
// - Nothing to undo on release: an eviction cannot be taken back (the lifecycle gives the Pod's
//   traffic back if the Pod is still there).
import type { KubeObject } from '../k8s/types.js'
import { objectsOf } from '../k8s/objects.js'
import { refTo } from '../effects/types.js'
import { byCreation, isReady, isTerminating } from '../controllers/collaset/pods.js'
import type { ActionContext, ActionHandler, ActionTarget, OperateResult, ProgressResult } from './registry.js'
import { POD_UID, sameTargetPod } from './pods.js'
import { NEW_POD } from './replace.js'

export const RECREATE_ACTION = 'Recreate'
/** extraInfo keys: the controller (`<Kind>/<name>`) and its UID, and the Ready count to get back to. */
export const CONTROLLER = 'Controller'
export const CONTROLLER_UID = 'ControllerUID'
export const READY_BEFORE = 'ReadyBefore'

function controllerOf (pod: KubeObject): { kind: string, name: string, uid: string } | undefined {
  const refs = Array.isArray(pod.metadata.ownerReferences) ? pod.metadata.ownerReferences : []
  const owner = refs.find(r => r.controller === true)
  return owner === undefined ? undefined : { kind: owner.kind, name: owner.name, uid: owner.uid }
}

/** The live Pods of the controller `uid` in the job's namespace, other than the evicted one. */
function siblings (context: ActionContext, controllerUid: string, evictedUid: string | undefined): KubeObject[] {
  const namespace = context.job.namespace
  return objectsOf(context.related, 'Pod', 'v1').filter(p =>
    (namespace === undefined || p.metadata.namespace === namespace) &&
    p.metadata.uid !== evictedUid && !isTerminating(p) &&
    controllerOf(p)?.uid === controllerUid)
}

function operate (target: ActionTarget, context: ActionContext): OperateResult {
  const pod = sameTargetPod(target)
  if (pod === undefined) return { effects: [] } // Evicted already, or gone: progress decides.
  const owner = controllerOf(pod)
  if (owner === undefined) {
    return { effects: [], error: { reason: 'NoController', message: `Pod ${pod.metadata.name} has no controller to bring it back: Recreate evicts Pods of workloads only` } }
  }
  const known = target.detail.extraInfo
  const extraInfo: Record<string, string> = {
    ...(typeof pod.metadata.uid === 'string' ? { [POD_UID]: pod.metadata.uid } : {}),
    [CONTROLLER]: `${owner.kind}/${owner.name}`,
    [CONTROLLER_UID]: owner.uid,
    [READY_BEFORE]: known?.[READY_BEFORE] ?? String(siblings(context, owner.uid, pod.metadata.uid).filter(isReady).length + 1)
  }
  const ref = refTo(pod)
  if (isTerminating(pod) || ref === undefined) return { effects: [], extraInfo }
  return { effects: [{ type: 'Evict', target: ref }], extraInfo }
}

function progress (target: ActionTarget, context: ActionContext): ProgressResult {
  const pod = sameTargetPod(target)
  const info = target.detail.extraInfo ?? {}
  if (pod !== undefined) return { progress: 'Processing' }
  const controllerUid = info[CONTROLLER_UID]
  const wanted = Number(info[READY_BEFORE])
  if (controllerUid === undefined || !Number.isInteger(wanted)) {
    // Gone before it was ever evicted: nothing says whose Pod it was.
    return { progress: 'Failed', error: { reason: 'PodNotFound', message: `Pod ${target.name} does not exist` } }
  }
  const ready = siblings(context, controllerUid, info[POD_UID]).filter(isReady)
  if (ready.length < wanted) return { progress: 'Processing' }
  const back = ready.find(p => p.metadata.name === target.name) ?? [...ready].sort(byCreation).at(-1)
  return { progress: 'Succeeded', ...(back !== undefined ? { extraInfo: { [NEW_POD]: back.metadata.name } } : {}) }
}

export const recreateAction: ActionHandler = {
  // Every Pod of the job's namespace: the controller's Pods, whatever their names (a label
  // selector without a namespace selects in the job's namespace; an empty one selects all).
  relatedResources: () => [{ apiVersion: 'v1', resource: 'pods', labelSelector: {} }],
  operate,
  progress,
  release: () => ({ effects: [] })
}
