import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'

/**
 * Asks Metacontroller for every Node (a cluster-scoped related resource; the empty selector
 * selects them all). A Node added, cordoned or tainted later triggers a sync through its informer.
 */
export function customizeDaemonJob (_request: CustomizeRequest): CustomizeResponse {
  return { relatedResources: [{ apiVersion: 'v1', resource: 'nodes', labelSelector: {} }] }
}
