import type { CustomizeRequest, CustomizeResponse } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import type { LabelSelector } from '../../k8s/selectors.js'
import { isLabelKey, isLabelValue } from '../../k8s/names.js'
import { parseDaemonJobSpec } from './spec.js'
import { podTemplate } from './job.js'

/**
 * Asks Metacontroller for the Nodes a Job could run on: those with the labels of the pod's
 * `nodeSelector`, or every Node when it has none (a cluster-scoped related resource; the empty
 * selector selects them all). A request carries each Node whole, so on a large cluster asking
 * for fewer is what keeps it small. A Node that gains or loses the labels, or is added, cordoned
 * or tainted later, triggers a sync through Metacontroller's Node informer, which tells a parent
 * of the objects it selected before a change as well as after.
 */
export function customizeDaemonJob (request: CustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [{ apiVersion: 'v1', resource: 'nodes', labelSelector: nodeLabelSelector(request.parent) }]
  }
}

/**
 * The pod's `nodeSelector` as a label selector. Empty — every Node — when there is none, or when
 * the spec or a label in it cannot be read: the sync then says what is wrong, and a selector the
 * API server would refuse would make Metacontroller fail the parent instead.
 */
export function nodeLabelSelector (parent: KubeObject): LabelSelector {
  const parsed = parseDaemonJobSpec(parent)
  if (!parsed.ok) return {}
  const nodeSelector: unknown = podTemplate(parsed.value).spec?.nodeSelector
  if (nodeSelector === null || typeof nodeSelector !== 'object') return {}
  const entries = Object.entries(nodeSelector as Record<string, unknown>)
  if (entries.length === 0 || !entries.every(
    ([key, value]) => isLabelKey(key) && typeof value === 'string' && isLabelValue(value)
  )) return {}
  return {
    matchLabels: Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as Record<string, string>
  }
}
