// Related objects, as Metacontroller finds them: customize is called once per (parent uid,
// generation) and its rules cached for a while; each rule selects objects by names, namespace,
// labels or namespace labels (customize/manager.go), keyed as the hook version and the parent's
// scope say.
import type { KubeObject, ObjectMap } from '../k8s/types.js'
import type { RelatedResourceRule } from '../protocol/schemas.js'
import { matchesSelector } from './objects.js'
import type { ResourceType } from './resources.js'
import type { HookTransport } from './transport.js'
import type { Controller, ControllerScope } from './types.js'
import type { World } from './world.js'

interface CachedCustomize {
  generation: number
  rules: RelatedResourceRule[]
  expiresAt: number
}

export class RelatedObjects {
  private readonly customizeCache = new Map<string, CachedCustomize>()

  constructor (
    private readonly world: World,
    private readonly transport: HookTransport,
    private readonly cacheMs: number
  ) {}

  /** The related objects of a sync request, or why there are none (a customize failure, a bad rule). */
  async of (controller: Controller, parent: KubeObject): Promise<ObjectMap | string> {
    const related: ObjectMap = {}
    const rules = await this.rules(controller, parent)
    if (typeof rules === 'string') return rules
    for (const rule of rules) {
      const type = this.world.resources.byResource(rule.apiVersion, rule.resource)
      if (type === undefined) return `customize: unknown related resource ${rule.resource} in ${rule.apiVersion}`
      const group = (related[`${type.kind}.${type.apiVersion}`] ??= {})
      const problem = ruleProblem(controller, parent, rule)
      if (problem !== undefined) return `customize: ${problem}`
      for (const object of this.world.store.view(type.apiVersion, type.kind)) {
        if (!this.matches(controller, parent, rule, type, object)) continue
        // v1 requests of a namespaced parent drop what lies outside its namespace.
        const outside = object.metadata.namespace !== parent.metadata.namespace
        if (controller.version === 'v1' && controller.parentType.namespaced && outside) continue
        group[objectKey(controller, parent, object)] = object
      }
    }
    return related
  }

  /** The parent's rules while its cached customize answer holds. */
  cached (parent: KubeObject): RelatedResourceRule[] | undefined {
    const cached = this.customizeCache.get(parent.metadata.uid as string)
    const generation = parent.metadata.generation ?? 0
    const stale = cached === undefined || cached.generation !== generation || cached.expiresAt <= this.world.clock.nowMs
    if (stale) return undefined
    return cached.rules
  }

  /** A parent is gone: so is its cached answer. */
  forget (uid: string): void {
    this.customizeCache.delete(uid)
  }

  /** Whether `object` is selected by a related rule of `parent`. */
  matches (
    controller: Controller, parent: KubeObject, rule: RelatedResourceRule, type: ResourceType, object: KubeObject
  ): boolean {
    const namespaceLabels = (name: string): Record<string, string> | undefined =>
      this.world.store.get({ apiVersion: 'v1', kind: 'Namespace', name })?.metadata.labels
    return relatedRuleMatches(controller, parent, rule, type, object, namespaceLabels)
  }

  private async rules (controller: Controller, parent: KubeObject): Promise<RelatedResourceRule[] | string> {
    const customize = controller.hooks.customize
    if (customize === undefined) return []
    const uid = parent.metadata.uid as string
    const cached = this.cached(parent)
    if (cached !== undefined) return cached
    const answer = await this.transport.callCustomize(controller, { controller: controller.object, parent })
    if (!answer.ok) return `customize hook failed: ${answer.error}`
    this.customizeCache.set(uid, {
      generation: parent.metadata.generation ?? 0,
      rules: answer.value.relatedResources,
      expiresAt: this.world.clock.nowMs + this.cacheMs
    })
    return answer.value.relatedResources
  }
}

/** `name` or `namespace/name`, as the hook version and the parent's scope decide. */
export function objectKey (controller: ControllerScope, parent: KubeObject, object: KubeObject): string {
  const namespace = object.metadata.namespace
  if (namespace === undefined) return object.metadata.name
  if (controller.version === 'v2') return `${namespace}/${object.metadata.name}`
  const byName = controller.parentType.namespaced && parent.metadata.namespace !== undefined
  return byName ? object.metadata.name : `${namespace}/${object.metadata.name}`
}

/**
 * Whether `object` (of `type`) is selected by a related rule of `parent`; `namespaceLabels` gives
 * the labels of a Namespace, for rules with a namespaceSelector.
 */
export function relatedRuleMatches (
  controller: ControllerScope, parent: KubeObject, rule: RelatedResourceRule,
  type: Pick<ResourceType, 'apiVersion' | 'kind' | 'namespaced'>, object: KubeObject,
  namespaceLabels: (name: string) => Record<string, string> | undefined
): boolean {
  if (object.apiVersion !== type.apiVersion || object.kind !== type.kind) return false
  const parentNamespace = controller.parentType.namespaced ? parent.metadata.namespace : undefined
  // customize/manager.go determineSelectionType: names (with or without a namespace), a namespace
  // alone, a labelSelector with a namespace, a namespaceSelector, or a labelSelector alone.
  if (rule.names !== undefined || (rule.namespace !== undefined && rule.labelSelector === undefined)) {
    const namespace = rule.namespace ?? (controller.version === 'v1' ? parentNamespace : undefined)
    if (type.namespaced && namespace !== undefined && object.metadata.namespace !== namespace) return false
    return rule.names === undefined || rule.names.includes(object.metadata.name)
  }
  if (type.namespaced) {
    if (rule.namespaceSelector !== undefined) {
      if (!matchesSelector(rule.namespaceSelector, namespaceLabels(object.metadata.namespace ?? ''))) return false
    } else if (rule.namespace !== undefined) {
      if (object.metadata.namespace !== rule.namespace) return false
    } else if (
      controller.version === 'v1' && parentNamespace !== undefined && object.metadata.namespace !== parentNamespace
    ) {
      // A label rule alone lists the parent's namespace under v1, every namespace under v2.
      return false
    }
  }
  return matchesSelector(rule.labelSelector, object.metadata.labels)
}

/** What Metacontroller refuses in a related rule. */
export function ruleProblem (
  controller: ControllerScope, parent: KubeObject, rule: RelatedResourceRule
): string | undefined {
  if (rule.names !== undefined && (rule.labelSelector !== undefined || rule.namespaceSelector !== undefined)) {
    return `rule for ${rule.resource}: names cannot be combined with labelSelector or namespaceSelector`
  }
  if (rule.namespace !== undefined && rule.namespaceSelector !== undefined) {
    return `rule for ${rule.resource}: namespace cannot be combined with namespaceSelector`
  }
  const namespaced = controller.parentType.namespaced
  if (namespaced && controller.version === 'v1') {
    if (rule.namespace !== undefined && rule.namespace !== parent.metadata.namespace) {
      return `requested related object namespace ${rule.namespace} differs from parent object namespace ` +
        `${parent.metadata.namespace ?? ''}`
    }
    if (rule.namespaceSelector !== undefined) {
      return `rule for ${rule.resource}: namespaceSelector needs hook version v2 or a cluster-scoped parent`
    }
  }
  return undefined
}
