import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { JOBFLOW_TEMPLATE_API } from './spec.js'

/**
 * Asks Metacontroller for the JobFlowTemplate spec.jobFlowTemplateRef names, in the CronJobFlow's
 * namespace, and for nothing when the runs are written out: a template that changes (or appears)
 * later triggers a sync through its informer.
 */
export function customizeCronJobFlow (request: CustomizeRequest): CustomizeResponse {
  const spec = isRecord(request.parent.spec) ? request.parent.spec : {}
  const ref = isRecord(spec.jobFlowTemplateRef) ? spec.jobFlowTemplateRef : undefined
  if (ref === undefined || typeof ref.name !== 'string' || ref.name === '') return { relatedResources: [] }
  const namespace = request.parent.metadata.namespace
  return {
    relatedResources: [{
      apiVersion: JOBFLOW_TEMPLATE_API,
      resource: 'jobflowtemplates',
      ...(namespace !== undefined ? { namespace } : {}),
      names: [ref.name]
    }]
  }
}
