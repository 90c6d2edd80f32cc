// The label and condition protocol between the kinds: how OperationJob's actions ask a CollaSet for
// a replacement, how a replacement names its origin, how a PodOpsLifecycle holds a Pod, and the
// readiness gate that takes a Pod out of traffic; and the template a JobFlow was made of.
// CollaSet, OperationJob, the actions, CronJobFlow and the plugin speak it; none of them owns it.
import type { KubeObject } from './types.js'
import { fitName } from './names.js'

/** The readiness gate CollaSet Pods carry; its condition says whether the Pod may serve. */
export const SERVICE_READY = 'jobhooks.io/service-ready'
/** Set to `true` (by OperationJob's Replace, or by hand) to ask the CollaSet for a replacement Pod. */
export const TO_REPLACE_LABEL = 'jobhooks.io/to-replace'
/** On a replacement Pod: the name of the Pod it replaces (`originLabelValue`). */
export const REPLACE_ORIGIN_LABEL = 'jobhooks.io/replace-origin'
/**
 * Present while a PodOpsLifecycle holds the Pod (OperationJob's lock; the value names the job):
 * the lifecycle owns the readiness gate then, and the CollaSet leaves the condition alone.
 */
export const OPS_LIFECYCLE_LABEL = 'jobhooks.io/ops-lifecycle'
/**
 * On a JobFlow made of a JobFlowTemplate (`kubectl jobhooks submit --from`, a CronJobFlow's
 * `jobFlowTemplateRef`): the template's name, so that `kubectl get jf -l` finds its runs.
 */
export const JOBFLOW_TEMPLATE_LABEL = 'jobhooks.io/jobflow-template'

/** The replace-origin label value naming Pod `name`: a label value, so fitted to 63 characters. */
export function originLabelValue (name: string): string {
  return fitName(name)
}

export function wantsReplace (pod: KubeObject): boolean {
  return pod.metadata.labels?.[TO_REPLACE_LABEL] === 'true'
}

export function originOf (pod: KubeObject): string | undefined {
  return pod.metadata.labels?.[REPLACE_ORIGIN_LABEL]
}
