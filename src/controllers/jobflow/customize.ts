import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { JOBTEMPLATE_API_VERSION } from './spec.js'

/**
 * Asks Metacontroller for the JobTemplates the flows reference, by name, in the JobFlow's
 * namespace. A JobTemplate created or edited later triggers a sync through its informer.
 */
export function customizeJobFlow (request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec
  const flows = isRecord(spec) && Array.isArray(spec.flows) ? spec.flows : []
  const names = [...new Set(flows.flatMap(
    f => (isRecord(f) && typeof f.jobTemplateRef === 'string' && f.jobTemplateRef !== '' ? [f.jobTemplateRef] : [])
  ))].sort()
  if (names.length === 0) return { relatedResources: [] }
  const namespace = request.parent.metadata.namespace
  return {
    relatedResources: [{
      apiVersion: JOBTEMPLATE_API_VERSION,
      resource: 'jobtemplates',
      ...(namespace !== undefined ? { namespace } : {}),
      names
    }]
  }
}
