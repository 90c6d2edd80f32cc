// Building the Job of one node: the DaemonJob's JobSpec with its globals and script, pinned to
// the node by a required node affinity on the node's name (not `nodeName`, so that the scheduler
// still checks that the pod fits there).
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { Affinity, PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js'
import type { KubeObject, ObjectMeta } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { childName, fitName } from '../../k8s/names.js'
import { rememberedFor } from '../../k8s/derived.js'
import { applyGlobalParams } from '../common/global-params.js'
import { runScriptInPod } from '../../scripts/configmap.js'
import { takeJobTtl } from '../common/job-ttl.js'
import { enqueueJob } from '../common/queue.js'
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
export function buildNodeJob (
  parent: KubeObject,
  node: string,
  spec: DaemonJobSpec,
  scriptsConfigMap: string | undefined
): KubeObject | string {
  return nodeJobBuilder(parent, spec, scriptsConfigMap)(node)
}

/**
 * What builds the Jobs of many nodes: `buildNodeJob` for each node, answer for answer. Everything
 * that does not depend on the node (the JobSpec, the pod template with its globals, restart policy
 * and script) is copied from the spec once, on the first call, and shared by every Job it
 * returns: answers are serialised, never changed, and the Jobs of thousands of new nodes would
 * otherwise make two deep copies of the template each. Each Job gets its own objects on the path
 * to what differs: its metadata and labels, its template's metadata, its pod spec's top level
 * and the node affinity that pins it.
 */
export function nodeJobBuilder (
  parent: KubeObject,
  spec: DaemonJobSpec,
  scriptsConfigMap: string | undefined
): (node: string) => KubeObject | string {
  const daemonJob = fitName(parent.metadata.name)
  const namespace = parent.metadata.namespace
  const annotations = spec.globalParams.annotations
  const annotated = Object.keys(annotations).length > 0
  let shared: SharedJobParts | string | undefined
  return node => {
    shared ??= sharedJobParts(spec, scriptsConfigMap)
    if (typeof shared === 'string') return shared
    const ids = { [DAEMONJOB_LABEL]: daemonJob, [NODE_LABEL]: fitName(node) }
    const { job, ttlLabels, queueLabels, template, pod, affinity } = shared
    const podSpec: PodSpec = { ...pod }
    // The key is there already (pinned for a placeholder node), so it keeps its place.
    podSpec.affinity = pinnedAffinity(affinity, node)
    const metadata: ObjectMeta = { name: nodeJobName(parent.metadata.name, node) }
    if (namespace !== undefined) metadata.namespace = namespace
    metadata.labels = { ...spec.globalParams.labels, ...ids, ...ttlLabels, ...queueLabels }
    if (annotated) metadata.annotations = annotations
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata,
      spec: {
        ...job,
        template: {
          ...template,
          metadata: { ...template.metadata, labels: { ...template.metadata?.labels, ...ids } },
          spec: podSpec
        }
      }
    }
  }
}

/** The parts of every node's Job that do not depend on the node, each copied once. */
interface SharedJobParts {
  /** The JobSpec; its `template` is replaced in every Job. */
  job: JobSpec
  /** The label that carries the JobSpec's TTL, which the service applies (common/job-ttl.ts). */
  ttlLabels: Record<string, string>
  /** Kueue's labels, when the DaemonJob names a queue (its Jobs are then created suspended). */
  queueLabels: Record<string, string>
  /** The pod template with the globals, before the Job's labels are added. */
  template: PodTemplateSpec
  /** The pod spec as every Job carries it, pinned to a placeholder: `affinity` is replaced. */
  pod: PodSpec
  /** The pod's affinity before pinning. */
  affinity: Affinity | undefined
}

/**
 * Builds the pod as `buildNodeJob` always did (globals, restart policy, pin, script, in that
 * order, so its keys come in the same order) for a node with no name, and keeps what the pin
 * replaced. A problem with the script is returned instead.
 */
function sharedJobParts (spec: DaemonJobSpec, scriptsConfigMap: string | undefined): SharedJobParts | string {
  const job = structuredClone(spec.job)
  const ttlLabels = takeJobTtl(job)
  const queueLabels: Record<string, string> = {}
  enqueueJob(queueLabels, job, spec)
  const template = podTemplate(spec)
  const pod = template.spec as PodSpec
  // Outcomes come from the Job's conditions, so OnFailure works too; Never keeps every failed
  // attempt's pod for its logs.
  pod.restartPolicy ??= 'Never'
  const affinity = pod.affinity
  pinToNode(pod, '')
  if (spec.script !== undefined && scriptsConfigMap !== undefined) {
    const problem = runScriptInPod(pod, scriptsConfigMap, spec.script)
    if (problem !== undefined) return problem
  }
  return { job, ttlLabels, queueLabels, template, pod, affinity }
}

/**
 * Adds `metadata.name In [node]` to every required node-selector term of the pod (terms are
 * ORed, so every one must carry it), or a term of its own when the pod has none.
 */
export function pinToNode (pod: PodSpec, node: string): void {
  pod.affinity = pinnedAffinity(pod.affinity, node)
}

/** `affinity` pinned to `node` (see pinToNode), sharing what the pin does not change. */
function pinnedAffinity (given: Affinity | undefined, node: string): Affinity {
  const pin = { key: NAME_FIELD, operator: 'In', values: [node] }
  const affinity = given ?? {}
  const nodeAffinity = affinity.nodeAffinity ?? {}
  const terms = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []
  const pinned = terms.length === 0
    ? [{ matchFields: [pin] }]
    : terms.map(term => ({ ...term, matchFields: [...(term.matchFields ?? []), pin] }))
  return {
    ...affinity,
    nodeAffinity: {
      ...nodeAffinity,
      requiredDuringSchedulingIgnoredDuringExecution: {
        ...nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
        nodeSelectorTerms: pinned
      }
    }
  }
}

/**
 * The node a Job of ours runs on: the name it is pinned to, else its node label, else
 * undefined. Read from the Job, so a Job whose node is gone is still known by its node.
 */
export const nodeOfJob = rememberedFor(readNodeOfJob)

function readNodeOfJob (job: KubeObject): string | undefined {
  const template = isRecord(job.spec) && isRecord(job.spec.template) ? job.spec.template : undefined
  const pod = isRecord(template?.spec) ? template.spec as unknown as PodSpec : undefined
  const required = pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
  for (const term of required?.nodeSelectorTerms ?? []) {
    // Ours is the last one: a term of the template may pin a name of its own before it. A loop
    // from the end, not a filter: this runs for each of thousands of Jobs, twice a sync.
    const fields = term.matchFields ?? []
    for (let i = fields.length - 1; i >= 0; i--) {
      const r = fields[i]
      if (r?.key !== NAME_FIELD || r.operator !== 'In' || r.values?.length !== 1) continue
      if (r.values[0] !== undefined) return r.values[0]
      break
    }
  }
  return job.metadata.labels?.[NODE_LABEL]
}
