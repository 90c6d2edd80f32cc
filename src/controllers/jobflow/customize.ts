import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { fitName } from '../../k8s/names.js'
import { JOBTEMPLATE_API_VERSION } from './spec.js'
import { JOBFLOW_LABEL } from './job.js'
import { ITEM_INDEX_LABEL } from './fanout.js'

/**
 * Asks Metacontroller for the JobTemplates the flows reference, by name, and for the pods of this
 * JobFlow's Jobs but its fan-out items, by the labels each Job's pod template carries (their
 * termination messages are the flows' outputs), in the JobFlow's namespace. A JobTemplate or pod that changes later
 * triggers a sync through its informer.
 */
export function customizeJobFlow (request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec
  const flows = isRecord(spec) && Array.isArray(spec.flows) ? spec.flows : []
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
      // A fan-out item's output is read by no step, and 10,000 pods would weigh on every sync.
      matchExpressions: [{ key: ITEM_INDEX_LABEL, operator: 'DoesNotExist' }]
    }
  }
  if (names.length === 0) return { relatedResources: [pods] }
  return {
    relatedResources: [{ apiVersion: JOBTEMPLATE_API_VERSION, resource: 'jobtemplates', ...inNamespace, names }, pods]
  }
}
