// Building the Job of one node: the DaemonJob's JobSpec with its globals and script, pinned to
// the node by a required node affinity on the node's name (not `nodeName`, so that the scheduler
// still checks that the pod fits there).
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { childName, fitName } from '../../k8s/names.js'
import { applyGlobalParams } from '../common/global-params.js'
import { runScriptInPod } from '../../scripts/configmap.js'
import type { DaemonJobSpec } from './spec.js'

export const DAEMONJOB_LABEL = 'jobhooks.io/daemonjob'
export const NODE_LABEL = 'jobhooks.io/node'
const NAME_FIELD = 'metadata.name'

/** The name of a node's Job: `<daemonjob>-<node>`, shortened with a hash when longer than 63. */
export function nodeJobName (daemonJob: string, node: string): string {
  return childName(daemonJob, node)
}

/** The pod template as every node's Job carries it before pinning: globals merged, a fresh copy. */
export function podTemplate (spec: DaemonJobSpec): PodTemplateSpec {
  const template = structuredClone(spec.job.template)
  applyGlobalParams(template, spec.globalParams)
  return template
}

/**
 * The Job of `node`. Returns a problem instead when the script cannot run in the template (no
 * such container), which makes the spec invalid.
 */
export function buildNodeJob (parent: KubeObject, node: string, spec: DaemonJobSpec, scriptsConfigMap: string | undefined): KubeObject | string {
  const jobSpec: JobSpec = { ...structuredClone(spec.job), template: podTemplate(spec) }
  const ids = { [DAEMONJOB_LABEL]: fitName(parent.metadata.name), [NODE_LABEL]: fitName(node) }
  const template = jobSpec.template
  template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...ids } }
  const pod = template.spec as PodSpec
  // Outcomes come from the Job's conditions, so OnFailure works too; Never keeps every failed
  // attempt's pod for its logs.
  pod.restartPolicy ??= 'Never'
  pinToNode(pod, node)
  if (spec.script !== undefined && scriptsConfigMap !== undefined) {
    const problem = runScriptInPod(pod, scriptsConfigMap, spec.script)
    if (problem !== undefined) return problem
  }
  const annotations = spec.globalParams.annotations
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: nodeJobName(parent.metadata.name, node),
      ...(parent.metadata.namespace !== undefined ? { namespace: parent.metadata.namespace } : {}),
      labels: { ...spec.globalParams.labels, ...ids },
      ...(Object.keys(annotations).length > 0 ? { annotations } : {})
    },
    spec: jobSpec
  }
}

/**
 * Adds `metadata.name In [node]` to every required node-selector term of the pod (terms are
 * ORed, so every one must carry it), or a term of its own when the pod has none.
 */
export function pinToNode (pod: PodSpec, node: string): void {
  const pin = { key: NAME_FIELD, operator: 'In', values: [node] }
  const affinity = pod.affinity ?? {}
  const nodeAffinity = affinity.nodeAffinity ?? {}
  const terms = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  const pinned = terms.length === 0
    ? [{ matchFields: [pin] }]
    : terms.map(term => ({ ...term, matchFields: [...(term.matchFields ?? []), pin] }))
  pod.affinity = {
    ...affinity,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: { ...nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, nodeSelectorTerms: pinned }
    }
  }
}

/**
 * The node a Job of ours runs on: the name it is pinned to, else its node label, else
 * undefined. Read from the Job, so a Job whose node is gone is still known by its node.
 */
export function nodeOfJob (job: KubeObject): string | undefined {
  const template = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template : undefined
  const pod = isRecord(template?.spec) ? template.spec as unknown as PodSpec : undefined
  for (const term of pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []) {
    // Ours is the last one: a term of the template may pin a name of its own before it.
    const pin = (term.matchFields ?? []).filter(r => r.key === NAME_FIELD && r.operator === 'In' && r.values?.length === 1).at(-1)
    if (pin?.values?.[0] !== undefined) return pin.values[0]
  }
  return job.metadata.labels?.[NODE_LABEL]
}
