import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import { isRecord } from '../../k8s/types.js'
import { plainSelector, selectorProblems, type LabelSelector } from '../../k8s/selectors.js'

/**
 * Asks Metacontroller for the Pods the selector matches. The rule carries no `namespace`:
 * Metacontroller refuses a rule with both `labelSelector` and `namespace`, and a label rule of a
 * namespaced parent already lists only the parent's namespace. An invalid selector asks for
 * nothing (the sync hook reports it).
 */
export function customizeEphemeralJob (request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec
  const selector = isRecord(spec) ? spec.selector : undefined
  if (selectorProblems(selector, 'spec.selector').length > 0) return { relatedResources: [] }
  return { relatedResources: [{ apiVersion: 'v1', resource: 'pods', labelSelector: plainSelector(selector as LabelSelector) }] }
}
