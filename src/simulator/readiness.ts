// Pod conditions as the kubelet keeps them: Ready is containers ready AND every readiness gate's
// condition True. Shared by the Pod kubelet (collaset.ts) and the effects executor (effects.ts).
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'

export type Conditions = Array<Record<string, unknown>>

export function conditionsOf (pod: KubeObject): Conditions {
  const status = isRecord(pod.status) ? pod.status : {}
  return Array.isArray(status.conditions) ? status.conditions.filter(isRecord) : []
}

export function setCondition (list: Conditions, type: string, status: 'True' | 'False', time?: string): Conditions {
  const old = list.find(c => c.type === type)
  if (old !== undefined && old.status === status) return list
  const next: Record<string, unknown> = { type, status }
  if (time !== undefined) next.lastTransitionTime = time
  return old === undefined ? [...list, next] : list.map(c => (c === old ? next : c))
}

/** The Pod with its Ready condition recomputed: containers ready and every readiness gate True. */
export function withReadiness (pod: KubeObject, time?: string): KubeObject {
  const list = conditionsOf(pod)
  const spec = isRecord(pod.spec) ? pod.spec : {}
  const gates = Array.isArray(spec.readinessGates) ? spec.readinessGates.filter(isRecord).map(g => g.conditionType) : []
  const containers = list.find(c => c.type === 'ContainersReady')?.status === 'True'
  const gated = gates.every(type => list.find(c => c.type === type)?.status === 'True')
  const status = isRecord(pod.status) ? pod.status : {}
  const conditions = setCondition(list, 'Ready', containers && gated ? 'True' : 'False', time)
  return { ...pod, status: { ...status, conditions } }
}
