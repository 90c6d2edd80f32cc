// kuperator's `scaleStrategy.podToInclude`: adopt Pods of the namespace into the set. A CollaSet
// sees only the Pods it owns, so the customize hook asks Metacontroller for the named Pods
// (related objects), and the sync labels each one it may take with the set's `controller-uid`:
// the label Metacontroller claims children by (generateSelector), so its next claim adopts the
// Pod (adds the owner reference) and the Pod is a member from then on, counted like any other.
// A Pod is taken only when it could have been made by the set: not terminating nor finished, no
// controller of its own (Metacontroller would not adopt it), labels the set's selector matches.
import type { CustomizeRequest, CustomizeResponse, SyncRequest } from '../../protocol/hooks.js'
import type { KubeObject } from '../../k8s/types.js'
import type { Effect } from '../../effects/types.js'
import { objectsOf } from '../../k8s/objects.js'
import { isFinished, isTerminating } from '../../k8s/pods.js'
import { selectorMatches } from '../../k8s/selectors.js'
import type { CollaSetSpec } from './spec.js'
import { parseCollaSetSpec } from './spec.js'
import { claimLabelEffects } from './pods.js'

/** Asks for the Pods podToInclude names, in the set's namespace; nothing when it names none. */
export function customizeCollaSet (request: CustomizeRequest): CustomizeResponse {
  const { parent } = request
  const parsed = parseCollaSetSpec(parent)
  const names = parsed.ok ? parsed.value.scaleStrategy.podToInclude : []
  if (names.length === 0) return { relatedResources: [] }
  const namespace = parent.metadata.namespace
  const where = namespace !== undefined ? { namespace } : {}
  return { relatedResources: [{ apiVersion: 'v1', resource: 'pods', ...where, names }] }
}

/** What the sync found of the Pods podToInclude names. */
export interface Inclusions {
  /** The Pods labelled this sync (or already labelled, waiting for Metacontroller to adopt them). */
  including: KubeObject[]
  /** Why a named Pod is not taken, by name. */
  refused: Map<string, string>
}

/** Why the Pod cannot join the set, if it cannot. */
function refusal (pod: KubeObject, spec: CollaSetSpec, uid: string): string | undefined {
  if (isTerminating(pod) || isFinished(pod)) return 'it is finished or going'
  const owner = (pod.metadata.ownerReferences ?? []).find(o => o.controller === true)
  if (owner !== undefined && owner.uid !== uid) return `it is controlled by ${owner.kind} ${owner.name}`
  if (!selectorMatches(spec.selector, pod.metadata.labels ?? {})) return 'spec.selector does not match its labels'
  return undefined
}

/** The named Pods the set takes, and why it takes no other; `children` are the Pods it owns already. */
export function inclusions (request: SyncRequest, spec: CollaSetSpec, children: readonly KubeObject[]): Inclusions {
  const result: Inclusions = { including: [], refused: new Map() }
  if (spec.scaleStrategy.podToInclude.length === 0) return result
  const uid = String(request.parent.metadata.uid ?? '')
  const owned = new Set(children.map(p => p.metadata.name))
  const found = new Map(objectsOf(request.related, 'Pod', 'v1').map(p => [p.metadata.name, p]))
  for (const name of spec.scaleStrategy.podToInclude) {
    if (owned.has(name)) continue
    const pod = found.get(name)
    const why = pod === undefined ? 'no such Pod' : refusal(pod, spec, uid)
    if (why !== undefined) result.refused.set(name, why)
    else result.including.push(pod as KubeObject)
  }
  return result
}

/** The label that has Metacontroller adopt each Pod taken. */
export function includeEffects (found: Inclusions, uid: string): Effect[] {
  return claimLabelEffects(found.including, uid)
}

/** What the Scale condition adds about podToInclude. */
export function includeNote (found: Inclusions): string {
  const notes: string[] = []
  const including = found.including.map(p => p.metadata.name).sort()
  if (including.length > 0) notes.push(`including ${including.join(', ')} (podToInclude)`)
  const refused = [...found.refused].sort(([a], [b]) => a.localeCompare(b)).map(([name, why]) => `${name}: ${why}`)
  if (refused.length > 0) notes.push(`spec.scaleStrategy.podToInclude cannot take ${refused.join('; ')}`)
  return notes.length === 0 ? '' : `; ${notes.join('; ')}`
}
