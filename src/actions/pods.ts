// What actions share about their target Pods.
import type { KubeObject } from '../k8s/types.js'
import type { ActionTarget, TargetError } from './types.js'

/** extraInfo key: the Pod that replaced the target (Replace), or that its workload brought back (Recreate). */
export const NEW_POD = 'NewPod'
/** extraInfo key: the UID of the target Pod when it was first operated. */
export const POD_UID = 'PodUID'

/**
 * The target's Pod, as long as it is the Pod the action first operated: a Pod of the same name
 * with another UID (its workload made it anew) is not the target.
 */
export function sameTargetPod (target: ActionTarget): KubeObject | undefined {
  const uid = target.detail.extraInfo?.[POD_UID]
  if (target.pod === undefined) return undefined
  return uid === undefined || target.pod.metadata.uid === uid ? target.pod : undefined
}

/** Why the target's Pod is not there to be operated (missing, or another Pod of the same name), or undefined. */
export function targetGone (target: ActionTarget): TargetError | undefined {
  if (target.pod === undefined) return { reason: 'PodNotFound', message: `Pod ${target.name} does not exist` }
  if (sameTargetPod(target) === undefined) {
    return { reason: 'PodNotFound', message: `Pod ${target.name} was replaced by another Pod of the same name` }
  }
  return undefined
}
