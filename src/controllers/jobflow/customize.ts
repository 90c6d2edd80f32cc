import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import { JOBTEMPLATE_API_VERSION, writtenSteps } from './spec.js'
import { FLOW_LABEL, JOBFLOW_LABEL } from './job.js'
import { ITEM_INDEX_LABEL } from './fanout.js'
import { JOBFLOWTEMPLATE_API_VERSION } from './flow-templates.js'

/**
 * Asks Metacontroller for the JobTemplates the flows reference, by name, and for the pods of this
 * JobFlow's Jobs but its fan-out items, by the labels each Job's pod template carries (their
 * termination messages are the flows' outputs), in the JobFlow's namespace. A JobTemplate or pod that changes later
 * triggers a sync through its informer.
 */
/**
 * The pods whose outputs no step reads: those of fan-out items, 10,000 of which would weigh on
 * every sync, but for the items of a step that a `forEachFrom` reads.
 */
function unreadItems (flows: unknown[]): { key: string, operator: string, values?: string[] } {
  const fanOut = (f: unknown): f is Record<string, unknown> =>
    isRecord(f) && typeof f.name === 'string' && (f.forEach !== undefined || f.forEachFrom !== undefined)
  const read = new Set(flows.flatMap(f => (isRecord(f) && typeof f.forEachFrom === 'string' ? [f.forEachFrom] : [])))
  const readFanOuts = flows.filter(fanOut).filter(f => read.has(f.name as string))
  if (readFanOuts.length === 0) return { key: ITEM_INDEX_LABEL, operator: 'DoesNotExist' }
  const unread = flows.filter(fanOut).filter(f => !read.has(f.name as string)).map(f => fitName(f.name as string))
  // Every step's Job carries its step's name (job.ts): the pods of the unread fan-out steps are left out.
  if (unread.length === 0) return { key: FLOW_LABEL, operator: 'Exists' }
  return { key: FLOW_LABEL, operator: 'NotIn', values: unread.sort() }
}

export function customizeJobFlow (request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec
  // Exit steps (spec.onExit) have the shape of flows: their templates and pods are asked for too.
  const flows = writtenSteps(spec)
  const names = [...new Set(flows.flatMap(
    f => (isRecord(f) && typeof f.jobTemplateRef === 'string' && f.jobTemplateRef !== '' ? [f.jobTemplateRef] : [])
  ))].sort()
  const namespace = request.parent.metadata.namespace
  const inNamespace = namespace !== undefined ? { namespace } : {}
  const pods = {
    apiVersion: 'v1',
    resource: 'pods',
    ...inNamespace,
    labelSelector: {
      matchLabels: { [JOBFLOW_LABEL]: fitName(request.parent.metadata.name) },
      matchExpressions: [unreadItems(flows)]
    }
  }
  // A JobFlowTemplate's steps name JobTemplates, and templates, that only its spec says: with any
  // template, every JobFlowTemplate and JobTemplate of the namespace is asked for.
  if (flows.some(f => f.flowTemplateRef !== undefined && f.flowTemplateRef !== null)) {
    // Which of their steps read a fan-out's outputs is not known here either: every pod is asked for.
    const { matchExpressions: _, ...everyPod } = pods.labelSelector
    return {
      relatedResources: [
        { apiVersion: JOBFLOWTEMPLATE_API_VERSION, resource: 'jobflowtemplates', ...inNamespace },
        { apiVersion: JOBTEMPLATE_API_VERSION, resource: 'jobtemplates', ...inNamespace },
        { ...pods, labelSelector: everyPod }
      ]
    }
  }
  if (names.length === 0) return { relatedResources: [pods] }
  return {
    relatedResources: [{ apiVersion: JOBTEMPLATE_API_VERSION, resource: 'jobtemplates', ...inNamespace, names }, pods]
  }
}
