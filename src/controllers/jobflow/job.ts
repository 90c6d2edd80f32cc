// Building the Job of one flow from its template, the flow's globals, shared volumes and script.
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import { argumentEnv } from './arguments.js'
import type { KubeObject } from '../../k8s/types.js'
import { appendEnv, applyGlobalParams, applySharedVolumes } from '../common/global-params.js'
import { runScriptInPod } from '../../scripts/configmap.js'
import { fitName } from '../../k8s/names.js'
import { takeJobTtl } from '../common/job-ttl.js'
import { enqueueJob } from '../common/queue.js'
import type { JobFlowPlan, PlannedFlow } from './fanout.js'
import { outputEnv } from './outputs.js'
import { itemEnv } from './fanout.js'
import { exitEnv, type DagEnd } from './exit.js'

export const JOBFLOW_LABEL = 'jobhooks.io/jobflow'
export const FLOW_LABEL = 'jobhooks.io/flow'
/** On Jobs made from a JobTemplate: the template's name, for `kubectl get jobs -l`. */
export const JOB_TEMPLATE_LABEL = 'jobhooks.io/job-template'

export interface JobIdentity {
  name: string
  namespace: string | undefined
  /** Labels that tie the Job to its JobFlow and flow. */
  labels: Record<string, string>
}

/** What a flow's Job is built with besides its template: the scripts ConfigMap, its dependencies' outputs. */
export interface JobInputs {
  scriptsConfigMap: string | undefined
  /** Each dependency's output ('' without one), by flow name. */
  outputs: ReadonlyMap<string, string>
  /** The Job's own activeDeadlineSeconds under the flow's deadline (deadline.ts). */
  deadlineSeconds?: number
  /** How the DAG ended: an exit step's Job is told (exit.ts). */
  dag?: DagEnd
}

/**
 * The desired Job of `flow`. `template` is the flow's JobSpec (inline or from its JobTemplate);
 * it is copied, never changed. Returns the Job, or a problem that makes the spec invalid. The
 * containers the flow names were checked with its template (spec.ts jobSpecProblems).
 */
export function buildFlowJob (
  id: JobIdentity,
  flow: PlannedFlow,
  template: JobSpec,
  spec: JobFlowPlan,
  { scriptsConfigMap, outputs, deadlineSeconds, dag }: JobInputs
): KubeObject | string {
  const jobSpec = structuredClone(template)
  if (deadlineSeconds !== undefined) jobSpec.activeDeadlineSeconds = deadlineSeconds
  // The service deletes the Job after its TTL, once its outcome is in the JobFlow's status.
  const ttlLabels = takeJobTtl(jobSpec)
  const podTemplate = jobSpec.template
  podTemplate.metadata = { ...podTemplate.metadata, labels: { ...podTemplate.metadata?.labels, ...id.labels } }
  applyGlobalParams(podTemplate, spec.globalParams)
  applySharedVolumes(podTemplate, spec.shareVolumes, [...spec.shareVolumeMounts, ...flow.shareVolumeMounts])
  const pod = podTemplate.spec
  if (pod === undefined) return `flow ${JSON.stringify(flow.name)}: the Job template has no pod spec`
  // Outcomes come from the Job's conditions, so OnFailure works too; Never is the default
  // because then every failed attempt leaves a pod behind to read the logs of.
  pod.restartPolicy ??= 'Never'
  appendEnv(pod, [
    ...argumentEnv(flow.args ?? spec.arguments), ...outputEnv(outputs),
    ...(flow.item !== undefined ? itemEnv(flow.item) : []),
    ...(flow.exit === true && dag !== undefined ? exitEnv(dag) : [])
  ])
  if (flow.script !== undefined && scriptsConfigMap !== undefined) {
    const problem = runScriptInPod(pod, scriptsConfigMap, flow.script)
    if (problem !== undefined) return `flow ${JSON.stringify(flow.name)}: ${problem}`
  }
  const labels = { ...spec.globalParams.labels, ...id.labels, ...ttlLabels }
  if (flow.jobTemplateRef !== undefined) labels[JOB_TEMPLATE_LABEL] = fitName(flow.jobTemplateRef)
  const queueName = flow.queueName ?? spec.queueName
  enqueueJob(labels, jobSpec, { queueName, priorityClassName: spec.priorityClassName })
  const annotations = spec.globalParams.annotations
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: id.name,
      ...(id.namespace !== undefined ? { namespace: id.namespace } : {}),
      labels,
      ...(Object.keys(annotations).length > 0 ? { annotations } : {})
    },
    spec: jobSpec
  }
}
