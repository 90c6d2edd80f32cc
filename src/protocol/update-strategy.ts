// Each kind declares, for each child type, the update strategies its answers are safe under
// (`childUpdates` in its index.ts; OnDelete only when it says nothing). Under OnDelete
// Metacontroller never updates a child that exists, so an answer may keep one by its identity
// alone (keepAsObserved, src/k8s/objects.ts). Under InPlace it merges the answer's child over the
// observed one, which only an answer that keeps the child as last applied survives (keepAsApplied);
// under Recreate it deletes a child whose answer differs and creates it again. A controller edited
// to give a child resource a strategy its kind does not declare gets no answer it could act on,
// but a 400 that says why, so that nothing is changed while it stays so.
import { isRecord } from '../k8s/types.js'
import type { KindHooks, UpdateMethod } from './hooks.js'

/** What Metacontroller reads as OnDelete: no strategy, an empty method, or OnDelete itself. */
const ON_DELETE = new Set([undefined, '', 'OnDelete'])

/**
 * The child resources of a CompositeController (the request's `controller`) whose update strategy
 * `kind` does not declare safe, as "<resource>.<apiVersion> (<method>; safe: <methods>)"; none when
 * the controller says nothing.
 */
export function unsafeChildResources (controller: unknown, kind: Pick<KindHooks, 'childUpdates'>): string[] {
  const spec = isRecord(controller) && isRecord(controller.spec) ? controller.spec : {}
  const resources = Array.isArray(spec.childResources) ? spec.childResources.filter(isRecord) : []
  return resources.flatMap(resource => {
    const method = isRecord(resource.updateStrategy) ? resource.updateStrategy.method : undefined
    if (ON_DELETE.has(method as string | undefined)) return []
    const safe = safeMethods(kind, resource.apiVersion, resource.resource)
    if (safe.includes(method as UpdateMethod)) return []
    return [`${String(resource.resource)}.${String(resource.apiVersion)} (${String(method)}; safe: ${safe.join(', ')})`]
  })
}

/** The strategies `kind` declares safe for the child resource `resource` of `apiVersion`: OnDelete, and more. */
function safeMethods (kind: Pick<KindHooks, 'childUpdates'>, apiVersion: unknown, resource: unknown): UpdateMethod[] {
  const declared = Object.entries(kind.childUpdates ?? {})
    .find(([group, updates]) => updates.resource === resource && group.slice(group.indexOf('.') + 1) === apiVersion)
    ?.[1].methods ?? []
  return ['OnDelete', ...declared.filter(m => m !== 'OnDelete')]
}

/** Why a request of `controller` to `kind`'s hooks cannot be answered, or undefined when it can. */
export function updateStrategyProblem (
  controller: unknown, kind: Pick<KindHooks, 'kind' | 'childUpdates'>
): string | undefined {
  const unsafe = unsafeChildResources(controller, kind)
  if (unsafe.length === 0) return undefined
  const name = isRecord(controller) && isRecord(controller.metadata)
    ? String(controller.metadata.name)
    : 'the CompositeController'
  return `${name} gives child resources update strategies the ${kind.kind} hooks' answers are not safe under, ` +
    `which the manifests never do: ${unsafe.join(', ')}`
}
