// The hooks return a child that exists by its identity only (keepAsObserved, src/k8s/objects.ts),
// which is all Metacontroller needs under the update strategy OnDelete: it never updates a child
// that exists. Under any other strategy it would apply that identity over the child (InPlace) or
// delete the child to create it again from it (Recreate). Our CompositeControllers declare
// OnDelete for every child resource; a controller edited to say otherwise gets no answer it could
// act on, but a 400 that says why, so that nothing is changed while it stays so.
import { isRecord } from '../k8s/types.js'

const ON_DELETE = new Set([undefined, '', 'OnDelete'])

/**
 * The child resources of a CompositeController (the request's `controller`) whose update strategy
 * is not OnDelete, as "<resource>.<apiVersion> (<method>)"; none when the controller says nothing.
 */
export function updatingChildResources (controller: unknown): string[] {
  const spec = isRecord(controller) && isRecord(controller.spec) ? controller.spec : {}
  const resources = Array.isArray(spec.childResources) ? spec.childResources.filter(isRecord) : []
  return resources.flatMap(resource => {
    const method = isRecord(resource.updateStrategy) ? resource.updateStrategy.method : undefined
    if (ON_DELETE.has(method as string | undefined)) return []
    return [`${String(resource.resource)}.${String(resource.apiVersion)} (${String(method)})`]
  })
}

/** Why a request of `controller` cannot be answered, or undefined when it can. */
export function updateStrategyProblem (controller: unknown): string | undefined {
  const updating = updatingChildResources(controller)
  if (updating.length === 0) return undefined
  const name = isRecord(controller) && isRecord(controller.metadata) ? String(controller.metadata.name) : 'the CompositeController'
  return `${name} must give every child resource the update strategy OnDelete, as the manifests do: the hooks return a child that exists by its identity only, which Metacontroller would apply over ${updating.join(', ')}`
}
