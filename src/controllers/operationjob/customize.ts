import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import type { RelatedResourceRule } from '../../protocol/schemas.js'
import { isRecord } from '../../k8s/types.js'
import type { ActionRegistry } from '../../actions/registry.js'
import { actionJob, readTargets } from './spec.js'

/**
 * Asks Metacontroller for the target Pods by name, in the job's namespace, plus what the action
 * declares, each label rule kept to the job's namespace: under hook v2 Metacontroller lists a
 * label rule without a namespace in every namespace (customize/manager.go). An unreadable target
 * list asks for no Pods (the sync hook reports it).
 */
export function customizeOperationJob (request: CustomizeRequest, registry: ActionRegistry): CustomizeResponse {
  const { parent } = request
  const spec = isRecord(parent.spec) ? parent.spec : {}
  const names = readTargets(spec).map(t => t.name)
  const rules: RelatedResourceRule[] = []
  if (names.length > 0) {
    rules.push({
      apiVersion: 'v1',
      resource: 'pods',
      ...(parent.metadata.namespace !== undefined ? { namespace: parent.metadata.namespace } : {}),
      names
    })
  }
  const action = typeof spec.action === 'string' ? registry.get(spec.action) : undefined
  if (action?.handler.relatedResources !== undefined) {
    const namespace = parent.metadata.namespace
    for (const rule of action.handler.relatedResources(actionJob(parent))) {
      const own = rule.labelSelector !== undefined && rule.namespace === undefined &&
        rule.namespaceSelector === undefined && namespace !== undefined
      rules.push(own ? { ...rule, namespace } : rule)
    }
  }
  return { relatedResources: rules }
}
