import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import type { RelatedResourceRule } from '../../protocol/schemas.js'
import { isRecord } from '../../k8s/types.js'
import type { ActionRegistry } from '../../actions/registry.js'
import { actionJob, readTargets } from './spec.js'

/**
 * Asks Metacontroller for the target Pods by name, in the job's namespace (`names` with
 * `namespace` is allowed; only `labelSelector` with `namespace` is refused), plus what the action
 * declares. An unreadable target list asks for no Pods (the sync hook reports it).
 */
export function customizeOperationJob (request: CustomizeRequest, registry: ActionRegistry): CustomizeResponse {
  const { parent } = request
  const spec = isRecord(parent.spec) ? parent.spec : {}
  const names = readTargets(spec).map(t => t.name)
  const rules: RelatedResourceRule[] = []
  if (names.length > 0) {
    rules.push({ apiVersion: 'v1', resource: 'pods', ...(parent.metadata.namespace !== undefined ? { namespace: parent.metadata.namespace } : {}), names })
  }
  const action = typeof spec.action === 'string' ? registry.get(spec.action) : undefined
  if (action?.handler.relatedResources !== undefined) rules.push(...action.handler.relatedResources(actionJob(parent)))
  return { relatedResources: rules }
}
