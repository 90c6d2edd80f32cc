// A CompositeController resolved against the resource table: its parent and child types, each
// child group's update strategy, and the CompositeController object Metacontroller sends.
import type { KubeObject, OwnerReference } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { groupKey } from '../k8s/objects.js'
import type { UpdateMethod } from '../protocol/hooks.js'
import { describeRef, refOf, type LabelSelector } from './objects.js'
import type { ResourceTable, ResourceType } from './resources.js'
import type { Controller, ControllerConfig } from './types.js'

export const CONTROLLER_UID_LABEL = 'controller-uid'

export function resolveController (resources: ResourceTable, config: ControllerConfig, index: number): Controller {
  const parentType = resources.resolve(config.parent)
  const childTypes = config.children.map(c => resources.resolve(c))
  const childMethods = childUpdateMethods(config, childTypes)
  for (const [group, method] of childMethods) {
    if (method !== 'OnDelete' && method !== 'InPlace') {
      throw new Error(`${group}: the simulator plays the update strategies OnDelete and InPlace, not ${method}`)
    }
  }
  const version = config.hookVersion ?? 'v2'
  const generateSelector = config.generateSelector ?? true
  const name = config.name ?? `${parentType.resource}-controller`
  const hook = (path: string): Record<string, unknown> => ({
    version,
    webhook: { url: `http://jobhooks.jobhooks-system/hooks/${config.hooks.kind}/${path}`, timeout: '10s' }
  })
  const object: KubeObject = {
    apiVersion: 'metacontroller.k8s.io/v1alpha1',
    kind: 'CompositeController',
    metadata: { name, uid: `00000000-0000-4000-9000-${(index + 1).toString(16).padStart(12, '0')}`, generation: 1 },
    spec: {
      generateSelector,
      parentResource: { apiVersion: parentType.apiVersion, resource: parentType.resource },
      childResources: childTypes.map(t => ({
        apiVersion: t.apiVersion,
        resource: t.resource,
        updateStrategy: { method: childMethods.get(groupKey(t.kind, t.apiVersion)) ?? 'OnDelete' }
      })),
      hooks: {
        sync: hook('sync'),
        ...(config.hooks.finalize !== undefined ? { finalize: hook('finalize') } : {}),
        ...(config.hooks.customize !== undefined ? { customize: hook('customize') } : {})
      }
    },
    status: {}
  }
  return { config, hooks: config.hooks, parentType, childTypes, childMethods, version, generateSelector, object }
}

/**
 * The update strategy of each child group of `config` (its `childTypes`, resolved in order);
 * OnDelete where unset.
 */
export function childUpdateMethods (
  config: ControllerConfig, childTypes: readonly ResourceType[]
): Map<string, UpdateMethod> {
  return new Map(childTypes.map((type, i) => [
    groupKey(type.kind, type.apiVersion), config.children[i]?.updateStrategy ?? 'OnDelete'
  ]))
}

/** The selector a parent claims its children with: the generated `controller-uid` one, or its spec's. */
export function parentSelector (controller: Controller, parent: KubeObject): LabelSelector {
  if (controller.generateSelector) return { matchLabels: { [CONTROLLER_UID_LABEL]: parent.metadata.uid as string } }
  const selector = isRecord(parent.spec) ? parent.spec.selector : undefined
  if (!isRecord(selector)) {
    throw new Error(`${describeRef(refOf(parent))} has no spec.selector and generateSelector is off`)
  }
  return selector
}

/** The controller ownerReference Metacontroller puts on the children it creates or adopts. */
export function ownerReference (parent: KubeObject): OwnerReference {
  return {
    apiVersion: parent.apiVersion,
    kind: parent.kind,
    name: parent.metadata.name,
    uid: parent.metadata.uid as string,
    controller: true,
    blockOwnerDeletion: true
  }
}
