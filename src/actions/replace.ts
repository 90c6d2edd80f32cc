// The built-in `Replace` action: asks the CollaSet that owns a target Pod to replace it, new Pod
// first (docs/operationjob.md, "Replace"). The request is the label jobhooks.io/to-replace=true on the Pod
// (an effect: the Pod is not ours); the CollaSet brings up a Pod labelled
// jobhooks.io/replace-origin=<target> and drops the target once that Pod is Ready.
//
// - extraInfo.NewPod names the replacement as soon as it is seen.
// - Success: the target is gone (or terminating) and the replacement is Ready and serving. The
//   target deleted by hand before its replacement is Ready is not success: the job waits for the
//   replacement (kuperator#271). Gone with no replacement ever seen fails with PodNotFound.
// - A replacement Pod is not replaced in turn: the target waits, with extraInfo saying why
//   (kuperator#289), until its deadline.
// - Two jobs on one Pod put the same label on it and so converge on one replacement.
// - Release (failure, deadline, deletion of the job) removes the label: the CollaSet cancels and
//   drops the replacement unless it is Ready already.
// Not in a PodOpsLifecycle: the CollaSet keeps capacity by bringing the new Pod up first.
import type { KubeObject } from '../k8s/types.js'
import { controllerOf, objectsOf } from '../k8s/objects.js'
import { originOf, REPLACE_ORIGIN_LABEL, TO_REPLACE_LABEL, wantsReplace } from '../k8s/labels.js'
import { byCreation, isAvailable, isFinished, isTerminating } from '../k8s/pods.js'
import { originLabelValue } from '../k8s/labels.js'
import type {
  ActionContext,
  ActionPlugin,
  ActionTarget,
  OperateResult,
  ProgressResult,
  ReleaseResult
} from './types.js'
import { refTo } from '../effects/types.js'
import { NEW_POD, POD_UID, sameTargetPod } from './pods.js'

/** extraInfo key: the replacement Pod's name. */
/** extraInfo key set while the target is itself a replacement Pod (and so is not replaced). */
export const NOT_ALLOWED_TO_REPLACE_NEW_POD = 'NotAllowedToReplaceNewPod'
const COLLASET_API_GROUP = 'jobhooks.io'

/** Whether a CollaSet controls the Pod. */
function isCollaSetPod (pod: KubeObject): boolean {
  const owner = controllerOf(pod)
  return owner?.kind === 'CollaSet' && owner.apiVersion.split('/')[0] === COLLASET_API_GROUP
}

/** The target's replacement among the related Pods: Ready ones first, then the oldest. */
function replacementOf (target: ActionTarget, context: ActionContext): KubeObject | undefined {
  const label = originLabelValue(target.name)
  const namespace = context.job.namespace
  return objectsOf(context.related, 'Pod', 'v1')
    .filter(
      p =>
        originOf(p) === label &&
        p.metadata.name !== target.name &&
        (namespace === undefined || p.metadata.namespace === namespace)
    )
    .filter(p => !isTerminating(p) && !isFinished(p))
    .sort((a, b) => (isAvailable(a) === isAvailable(b) ? byCreation(a, b) : isAvailable(a) ? -1 : 1))[0]
}

function operate (target: ActionTarget): OperateResult {
  const pod = sameTargetPod(target)
  // Gone: progress decides between waiting for the replacement and PodNotFound.
  if (pod === undefined || isTerminating(pod)) return { effects: [] }
  const extraInfo: Record<string, string> = typeof pod.metadata.uid === 'string' ? { [POD_UID]: pod.metadata.uid } : {}
  if (originOf(pod) !== undefined) {
    extraInfo[NOT_ALLOWED_TO_REPLACE_NEW_POD] =
      `Pod ${pod.metadata.name} is itself the replacement of ${originOf(pod) as string}: ` +
      'it is not replaced until that replacement is over'
    return { effects: [], extraInfo }
  }
  extraInfo[NOT_ALLOWED_TO_REPLACE_NEW_POD] = ''
  if (!isCollaSetPod(pod)) {
    const message = `Pod ${pod.metadata.name} is not controlled by a CollaSet: ` +
      'Replace needs a CollaSet to bring up the new Pod'
    return { effects: [], extraInfo, error: { reason: 'NotCollaSetPod', message } }
  }
  const ref = refTo(pod)
  if (wantsReplace(pod) || ref === undefined) return { effects: [], extraInfo }
  return { effects: [{ type: 'SetPodLabels', target: ref, labels: { [TO_REPLACE_LABEL]: 'true' } }], extraInfo }
}

function progress (target: ActionTarget, context: ActionContext): ProgressResult {
  const replacement = replacementOf(target, context)
  const extraInfo = replacement !== undefined ? { [NEW_POD]: replacement.metadata.name } : undefined
  const pod = sameTargetPod(target)
  if (pod !== undefined && !isTerminating(pod)) {
    return { progress: 'Processing', ...(extraInfo !== undefined ? { extraInfo } : {}) }
  }
  // The target is gone or going: success only through a replacement that serves.
  const newPod = replacement?.metadata.name ?? target.detail.extraInfo?.[NEW_POD]
  if (newPod === undefined) {
    return {
      progress: 'Failed',
      error: { reason: 'PodNotFound', message: `Pod ${target.name} is gone and no replacement Pod was seen` }
    }
  }
  const current = replacement ?? objectsOf(context.related, 'Pod', 'v1').find(p => p.metadata.name === newPod)
  if (current !== undefined && isAvailable(current)) return { progress: 'Succeeded', extraInfo: { [NEW_POD]: newPod } }
  return { progress: 'Processing', extraInfo: { [NEW_POD]: newPod } }
}

function release (target: ActionTarget): ReleaseResult {
  const pod = sameTargetPod(target)
  if (pod === undefined || isTerminating(pod) || !wantsReplace(pod)) return { effects: [] }
  const ref = refTo(pod)
  if (ref === undefined) return { effects: [] }
  return { effects: [{ type: 'SetPodLabels', target: ref, labels: { [TO_REPLACE_LABEL]: null } }] }
}

export const replaceAction: ActionPlugin = {
  name: 'Replace',
  handler: {
    // The replacements: Pods whose replace-origin label names a target. A label selector without a
    // namespace selects in the job's namespace.
    relatedResources: job => {
      const values = [...new Set(job.targets.map(originLabelValue))].sort()
      if (values.length === 0) return []
      return [
        {
          apiVersion: 'v1',
          resource: 'pods',
          labelSelector: { matchExpressions: [{ key: REPLACE_ORIGIN_LABEL, operator: 'In', values }] }
        }
      ]
    },
    operate,
    progress,
    release
  }
}
