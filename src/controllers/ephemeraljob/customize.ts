import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { plainSelector, selectorProblems, type LabelSelector } from '../../k8s/selectors.js'

/**
 * Asks Metacontroller for the Pods the selector matches in the job's namespace. The rule names
 * the namespace: under hook v2 Metacontroller lists a label rule without one in every namespace
 * (customize/manager.go), and the request would carry every matching Pod of the cluster. An
 * invalid selector asks for nothing (the sync hook reports it).
 */
export function customizeEphemeralJob (request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec
  const selector = isRecord(spec) ? spec.selector : undefined
  if (selectorProblems(selector, 'spec.selector').length > 0) return { relatedResources: [] }
  const namespace = request.parent.metadata.namespace
  return {
    relatedResources: [{
      apiVersion: 'v1',
      resource: 'pods',
      ...(namespace !== undefined ? { namespace } : {}),
      labelSelector: plainSelector(selector as LabelSelector)
    }]
  }
}
