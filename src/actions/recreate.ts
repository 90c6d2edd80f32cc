// The built-in `Recreate` action: evicts the target Pod through the eviction API, so that
// PodDisruptionBudgets hold, and succeeds once the Pod's workload has it back and Ready.
// Registered with PodOpsLifecycle: the Pod is out of traffic before it is evicted.
//
// - The eviction is an effect, owed again on every sync while the target Pod exists: a
//   PodDisruptionBudget refusal (HTTP 429) shows in the job's EffectsApplied condition and is
//   retried, it does not fail the target. The deadline still bounds the wait.
// - "Back" is read from the Pod's controller (its ownerReference with controller: true): a Ready
//   Pod of that controller with the target's name and another UID (StatefulSet, CollaSet), or one
//   created after every Pod the controller had while the target was still there and not yet
//   terminating (`LatestCreation`, moved forward only when a newer Pod shows up before the
//   eviction, so a scale-up during a PodDisruptionBudget wait is not taken for the Pod coming
//   back, and frozen once the Pod terminates, so its replacement is).
//   Kubernetes times have whole seconds, and a workload may make the replacement in the very
//   second its newest Pod was made (kwok does, and so does a busy ReplicaSet right after a
//   scale-up): the UIDs of the Pods made in that second are remembered too
//   (`LatestCreationPods`), and a Pod of that second that is not among them is the one back.
//   extraInfo.NewPod names the Pod that came back.
// - A Pod without a controller would never come back: the target fails with NoController before
//   anything is evicted.
// - Nothing to undo on release: an eviction cannot be taken back (the lifecycle gives the Pod's
//   traffic back if the Pod is still there).
import type { KubeObject } from '../k8s/types.js'
import { controllerOf, objectsOf } from '../k8s/objects.js'
import { refTo } from '../effects/types.js'
import { byCreation, isReady, isTerminating } from '../k8s/pods.js'
import type { ActionContext, ActionPlugin, ActionTarget, OperateResult, ProgressResult } from './types.js'
import { NEW_POD, POD_UID, sameTargetPod } from './pods.js'

/**
 * extraInfo keys: the controller (`<Kind>/<name>`) and its UID, and its newest Pod's creation
 * while the target was there.
 */
export const CONTROLLER = 'Controller'
export const CONTROLLER_UID = 'ControllerUID'
export const LATEST_CREATION = 'LatestCreation'
/** extraInfo key: the UIDs, space-separated, of the controller's other Pods made in the second of LatestCreation. */
export const LATEST_CREATION_PODS = 'LatestCreationPods'

const creationOf = (pod: KubeObject): string => pod.metadata.creationTimestamp ?? ''

/** The UIDs a LatestCreationPods value names; undefined when the status has none (written before it was kept). */
function uidsIn (value: string | undefined): Set<string> | undefined {
  return value === undefined ? undefined : new Set(value.split(' ').filter(uid => uid !== ''))
}

/** The live Pods of the controller `uid` in the job's namespace, other than the evicted one. */
function siblings (context: ActionContext, controllerUid: string, evictedUid: string | undefined): KubeObject[] {
  const namespace = context.job.namespace
  return objectsOf(context.related, 'Pod', 'v1').filter(p =>
    (namespace === undefined || p.metadata.namespace === namespace) &&
    p.metadata.uid !== evictedUid && !isTerminating(p) &&
    controllerOf(p)?.uid === controllerUid)
}

/**
 * What Recreate remembers from the target's first sync on (so that an older copy of the job's
 * status still has it): the Pod's UID, its controller, and the newest creation among the
 * controller's Pods while the target was there and not yet going — a Pod the workload makes after
 * the eviction is newer than that.
 */
function observe (target: ActionTarget, context: ActionContext): Record<string, string> | undefined {
  const pod = sameTargetPod(target)
  const owner = pod === undefined ? undefined : controllerOf(pod)
  if (pod === undefined || owner === undefined || isTerminating(pod)) return undefined
  const others = siblings(context, owner.uid, pod.metadata.uid)
  const info = target.detail.extraInfo ?? {}
  const known = info[LATEST_CREATION] ?? ''
  const latest = [known, creationOf(pod), ...others.map(creationOf)].reduce((a, b) => (b > a ? b : a))
  // Pods of the newest second seen before, kept while that second stays the newest.
  const madeThen = new Set(latest === known ? uidsIn(info[LATEST_CREATION_PODS]) : [])
  for (const other of others) {
    if (creationOf(other) === latest && typeof other.metadata.uid === 'string') madeThen.add(other.metadata.uid)
  }
  return {
    ...(typeof pod.metadata.uid === 'string' ? { [POD_UID]: pod.metadata.uid } : {}),
    [CONTROLLER]: `${owner.kind}/${owner.name}`,
    [CONTROLLER_UID]: owner.uid,
    [LATEST_CREATION]: latest,
    [LATEST_CREATION_PODS]: [...madeThen].join(' ')
  }
}

function operate (target: ActionTarget): OperateResult {
  const pod = sameTargetPod(target)
  if (pod === undefined) return { effects: [] } // Evicted already, or gone: progress decides.
  if (controllerOf(pod) === undefined) {
    return {
      effects: [],
      error: {
        reason: 'NoController',
        message: `Pod ${pod.metadata.name} has no controller to bring it back: Recreate evicts Pods of workloads only`
      }
    }
  }
  const ref = refTo(pod)
  if (isTerminating(pod) || ref === undefined) return { effects: [] }
  return { effects: [{ type: 'Evict', target: ref }] }
}

function progress (target: ActionTarget, context: ActionContext): ProgressResult {
  const pod = sameTargetPod(target)
  const info = target.detail.extraInfo ?? {}
  if (pod !== undefined) return { progress: 'Processing' }
  const controllerUid = info[CONTROLLER_UID]
  const latest = info[LATEST_CREATION]
  if (controllerUid === undefined || latest === undefined) {
    // Gone before it was ever operated: nothing says whose Pod it was.
    return { progress: 'Failed', error: { reason: 'PodNotFound', message: `Pod ${target.name} does not exist` } }
  }
  const ready = siblings(context, controllerUid, info[POD_UID]).filter(isReady)
  const madeThen = uidsIn(info[LATEST_CREATION_PODS])
  const madeSince = (p: KubeObject): boolean => creationOf(p) > latest ||
    (madeThen !== undefined && creationOf(p) === latest && !madeThen.has(p.metadata.uid ?? ''))
  const back = ready.find(p => p.metadata.name === target.name) ?? ready.filter(madeSince).sort(byCreation)[0]
  if (back === undefined) return { progress: 'Processing' }
  return { progress: 'Succeeded', extraInfo: { [NEW_POD]: back.metadata.name } }
}

export const recreateAction: ActionPlugin = {
  name: 'Recreate',
  // The Pod goes away: its traffic goes first.
  podOpsLifecycle: true,
  handler: {
    // Every Pod of the job's namespace: the controller's Pods, whatever their names (a label
    // selector without a namespace selects in the job's namespace; an empty one selects all).
    relatedResources: () => [{ apiVersion: 'v1', resource: 'pods', labelSelector: {} }],
    observe,
    operate,
    progress,
    release: () => ({ effects: [] })
  }
}
