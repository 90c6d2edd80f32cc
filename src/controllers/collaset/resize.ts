// In-place resize of CollaSet Pods: a template change of the containers' `resources` only (and of
// images) is made through the Pod's `resize` subresource, where the cluster resizes Pods in place
// (Kubernetes 1.33 and later: beta and on by default in 1.33 and 1.34, GA in 1.35). Which nodes
// do is read from the Pod, never assumed: a kubelet that resizes reports each container's
// `resources` in its status; one that does not (older, or the feature off) reports none, and
// such a Pod is replaced instead. The resize is done once the kubelet reports the new resources
// and no resize is pending or in progress (conditions PodResizePending, PodResizeInProgress).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import type { Effect, ObjectRef } from '../../effects/types.js'
import { findCondition } from '../../k8s/conditions.js'
import { podContainers, podContainerStatuses, recordsOf } from '../../k8s/pods.js'
import { sameResources } from '../../k8s/quantity.js'
import type { CollaSetSpec } from './spec.js'

/** The Pod's kubelet resizes in place: every container's status reports its resources. */
export function kubeletResizes (pod: KubeObject): boolean {
  const statuses = podContainerStatuses(pod)
  return statuses.length > 0 && statuses.every(s => isRecord(s.resources))
}

type Containers = Array<Record<string, unknown>>

function part (resources: unknown, name: 'requests' | 'limits'): Record<string, unknown> {
  return isRecord(resources) && isRecord(resources[name]) ? resources[name] : {}
}

/**
 * The Pod's QoS class as Kubernetes derives it from its containers: Guaranteed (every container
 * limits cpu and memory and requests no other amount), BestEffort (no container asks anything),
 * Burstable otherwise. A resize may not change it.
 */
export function qosClass (containers: Containers): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  let any = false
  let guaranteed = true
  for (const { resources } of containers) {
    const requests = part(resources, 'requests')
    const limits = part(resources, 'limits')
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true
    for (const name of ['cpu', 'memory']) {
      const limit = limits[name]
      const request = requests[name] ?? limit
      if (limit === undefined || !sameResources({ requests: { x: request } }, { requests: { x: limit } })) {
        guaranteed = false
      }
    }
  }
  if (!any) return 'BestEffort'
  return guaranteed ? 'Guaranteed' : 'Burstable'
}

/** Amounts other than cpu and memory, which no resize may change. */
function fixedAmounts (resources: unknown): Record<string, unknown> {
  const fixed: Record<string, unknown> = {}
  for (const name of ['requests', 'limits'] as const) {
    const amounts = { ...part(resources, name) }
    delete amounts.cpu
    delete amounts.memory
    fixed[name] = amounts
  }
  return fixed
}

/**
 * Whether Kubernetes lets the Pod's containers take the template's resources by a resize: only
 * cpu and memory change, and the Pod's QoS class stays.
 */
export function resizable (pod: KubeObject, spec: CollaSetSpec): boolean {
  const current = podContainers(pod)
  const wanted = recordsOf(spec.template.spec.containers)
  if (qosClass(current) !== qosClass(wanted)) return false
  const byName = new Map(wanted.map(c => [String(c.name), c.resources]))
  return current.every(c => sameResources(fixedAmounts(c.resources), fixedAmounts(byName.get(String(c.name)))))
}

/** The resize the template asks of the Pod: each container whose resources differ, with the template's. */
export function resizeEffect (pod: KubeObject, spec: CollaSetSpec, target: ObjectRef): Effect | undefined {
  const wanted = new Map(recordsOf(spec.template.spec.containers).map(c => [String(c.name), c.resources]))
  const containers: Array<{ name: string, resources: Record<string, unknown> }> = []
  for (const c of podContainers(pod)) {
    const name = String(c.name)
    if (!wanted.has(name) || sameResources(c.resources, wanted.get(name))) continue
    const resources = wanted.get(name)
    containers.push({ name, resources: isRecord(resources) ? resources : {} })
  }
  return containers.length === 0 ? undefined : { type: 'ResizePod', target, containers }
}

/** No resize of the Pod waits: none pending or in progress, and each reported resources as the spec's. */
export function resizeSettled (pod: KubeObject): boolean {
  const conditions = isRecord(pod.status) ? pod.status.conditions : undefined
  for (const type of ['PodResizePending', 'PodResizeInProgress']) {
    if (findCondition(conditions, type)?.status === 'True') return false
  }
  const specs = new Map(podContainers(pod).map(c => [String(c.name), c]))
  return podContainerStatuses(pod).every(s =>
    !isRecord(s.resources) || sameResources(s.resources, specs.get(String(s.name))?.resources))
}
