// What Metacontroller v4.17.2 would send a parent's sync hook, read from a real cluster: the
// children it would claim and the related objects its customize rules select. The rules of the
// in-process simulator decide, through the functions it exports (object keys, rule checks, rule
// matching), so that the preview and the simulator build the same request from the same objects;
// here the objects come from the API server, fetched as narrowly as each rule allows.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { controllerOf } from '../k8s/objects.js'
import { selectorString, type LabelSelector } from '../k8s/selectors.js'
import type { RelatedResourceRule } from '../protocol/schemas.js'
import { childUpdateMethods, CONTROLLER_UID_LABEL } from '../simulator/controller.js'
import { objectKey, relatedRuleMatches, ruleProblem } from '../simulator/related.js'
import type { Controller } from '../simulator/types.js'
import { compositeControllerFromManifest, controllerFromManifest } from '../simulator/controllers.js'
import type { ResourceType } from '../simulator/resources.js'
import type { LiveCluster } from './live-cluster.js'

/** The CompositeController of manifests/controllers/ for `resource`, with its types as the API server names them. */
export async function liveController (cluster: LiveCluster, resource: string): Promise<Controller> {
  const config = controllerFromManifest(resource)
  const childTypes = await Promise.all(config.children.map(async type => await cluster.resolve(type)))
  return {
    config,
    hooks: config.hooks,
    parentType: await cluster.resolve(config.parent),
    childTypes,
    childMethods: childUpdateMethods(config, childTypes),
    version: config.hookVersion ?? 'v2',
    generateSelector: config.generateSelector ?? true,
    // Sent as the request's `controller`, as Metacontroller sends its CompositeController.
    object: compositeControllerFromManifest(resource) as KubeObject
  }
}

/**
 * The selector Metacontroller claims children with: `controller-uid=<uid>` when it generates one, else the parent's
 * spec.selector.
 */
export function parentSelector (controller: Controller, parent: KubeObject): LabelSelector | string {
  if (controller.generateSelector) return { matchLabels: { [CONTROLLER_UID_LABEL]: parent.metadata.uid as string } }
  const selector = isRecord(parent.spec) ? parent.spec.selector : undefined
  if (isRecord(selector)) return selector
  return `${parent.kind} ${parent.metadata.name} has no spec.selector and generateSelector is off`
}

/**
 * The children a sync would see: the parent's selector goes into the list request, and of what
 * matches, those the parent controls, and orphans, which Metacontroller adopts first (unless the
 * parent is being deleted). One group per child type, empty ones too.
 */
export async function claimChildren (
  cluster: LiveCluster, controller: Controller, parent: KubeObject, selector: LabelSelector
): Promise<{ children: ObjectMap, adopted: KubeObject[] }> {
  const children: ObjectMap = {}
  const adopted: KubeObject[] = []
  const namespace = controller.parentType.namespaced ? parent.metadata.namespace : undefined
  for (const type of controller.childTypes) {
    const group: Record<string, KubeObject> = {}
    children[`${type.kind}.${type.apiVersion}`] = group
    for (const object of await cluster.list(type, namespace, selectorString(selector))) {
      const owner = controllerOf(object)
      if (owner !== undefined && owner.uid !== parent.metadata.uid) continue
      if (owner === undefined) {
        if (parent.metadata.deletionTimestamp !== undefined) continue
        adopted.push(object)
      }
      group[objectKey(controller, parent, object)] = object
    }
  }
  return { children, adopted }
}

/**
 * The related objects of `rules`, one group per rule, as the simulator selects them; `context`
 * holds objects of the manifest that stand in for the cluster's (JobTemplates and JobFlowTemplates
 * about to be applied). A rule Metacontroller refuses fails the sync: its message is returned instead.
 */
export async function relatedObjects (
  cluster: LiveCluster, controller: Controller, parent: KubeObject, rules: RelatedResourceRule[], context: KubeObject[]
): Promise<ObjectMap | string> {
  const related: ObjectMap = {}
  for (const rule of rules) {
    const problem = ruleProblem(controller, parent, rule)
    if (problem !== undefined) return `customize: ${problem}`
    const type = await cluster.resolve(rule)
    const group = (related[`${type.kind}.${type.apiVersion}`] ??= {})
    const { objects, namespaceLabels } = await candidates(cluster, controller, parent, rule, type)
    const fromManifest = context.filter(o => o.apiVersion === type.apiVersion && o.kind === type.kind)
    const replaced = new Set(fromManifest.map(o => `${o.metadata.namespace ?? ''}/${o.metadata.name}`))
    const kept = objects.filter(o => !replaced.has(`${o.metadata.namespace ?? ''}/${o.metadata.name}`))
    for (const object of [...kept, ...fromManifest]) {
      if (!relatedRuleMatches(controller, parent, rule, type, object, namespaceLabels)) continue
      // v1 requests of a namespaced parent drop what lies outside its namespace.
      const outside = object.metadata.namespace !== parent.metadata.namespace
      if (controller.version === 'v1' && controller.parentType.namespaced && outside) continue
      group[objectKey(controller, parent, object)] = object
    }
  }
  return related
}

/**
 * What a rule could select, read as narrowly as it allows: named objects one GET each where
 * their namespace is known, else a list with the rule's label selector, in the parent's namespace
 * for a label rule of a namespaced parent (where the simulator looks), in each selected namespace
 * for a namespaceSelector. The rule itself still decides, object by object.
 */
async function candidates (
  cluster: LiveCluster, controller: Controller, parent: KubeObject, rule: RelatedResourceRule, type: ResourceType
): Promise<{ objects: KubeObject[], namespaceLabels: (name: string) => Record<string, string> | undefined }> {
  const parentNamespace = controller.parentType.namespaced ? parent.metadata.namespace : undefined
  const labels = rule.labelSelector === undefined ? '' : selectorString(rule.labelSelector as LabelSelector)
  const none = (): undefined => undefined
  if (rule.names !== undefined) {
    const namespace = rule.namespace ?? (controller.version === 'v1' ? parentNamespace : undefined)
    if (!type.namespaced || namespace !== undefined) {
      const found = await Promise.all(rule.names.map(async name => await cluster.get(type, namespace, name)))
      return { objects: found.filter(o => o !== undefined), namespaceLabels: none }
    }
    return { objects: await cluster.list(type, undefined), namespaceLabels: none }
  }
  if (rule.namespaceSelector !== undefined && type.namespaced) {
    const namespaceType = await cluster.resolve({ apiVersion: 'v1', resource: 'namespaces' })
    const namespaceLabels = selectorString(rule.namespaceSelector as LabelSelector)
    const namespaces = await cluster.list(namespaceType, undefined, namespaceLabels)
    const lists = await Promise.all(namespaces.map(async ns => await cluster.list(type, ns.metadata.name, labels)))
    const objects = lists.flat()
    const byName = new Map(namespaces.map(ns => [ns.metadata.name, ns.metadata.labels ?? {}]))
    return { objects, namespaceLabels: name => byName.get(name) }
  }
  const namespace = rule.namespace ?? parentNamespace
  return { objects: await cluster.list(type, type.namespaced ? namespace : undefined, labels), namespaceLabels: none }
}
