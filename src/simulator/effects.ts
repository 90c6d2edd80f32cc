// The simulator's effects executor: applies the hooks' effects to the in-memory store the way
// the API server would answer the real executor's calls (src/effects/executor.ts):
//
// - InjectEphemeralContainers: a strategic-merge patch of `pods/ephemeralcontainers` with a UID
//   precondition. A Pod that is gone, or another Pod of the same name, is `gone`; a container
//   already there unchanged is a no-op; one already there but different is refused (ephemeral
//   containers cannot be changed), as is a target container the Pod does not have.
// - SetPodCondition: a strategic-merge patch of `pods/status` with a UID precondition; the
//   condition merges on `type` (the fields sent replace that condition's), and
//   the kubelet's Ready follows at once (Ready = containers ready and every readiness gate True).
// - Delete: a background delete with a UID precondition; the garbage collector then removes what
//   the object owned.
// - SetPodLabels: a strategic-merge patch of the Pod's labels (null removes one), UID-guarded.
// - UpdatePodInPlace: a strategic-merge patch of a Pod's containers' images (merged on name),
//   labels and annotations, UID-guarded; the kubelet (collaset.ts) restarts the changed containers.
// - ResizePod: the `pods/resize` subresource: the containers' resources merged on their name,
//   UID-guarded (the kubelet, collaset.ts, then reports them).
// - ReleaseClaim: a strategic-merge patch removing a claim's controller-uid label and its owner
//   reference to the CollaSet, UID-guarded.
// - StopJobFlow: a JSON merge patch of a JobFlow's spec.activeDeadlineSeconds and annotations,
//   UID-guarded.
// - Evict: the eviction API. A PodDisruptionBudget selecting the Pod refuses (HTTP 429, `failed`)
//   when the eviction would leave fewer healthy (Ready) Pods than it wants; a Pod that is not
//   Ready is evicted only while the budget is met without it (the API server's default
//   `unhealthyPodEvictionPolicy: IfHealthyBudget`). Then the Pod is deleted.
//
// As the real executor does, effects act only within their parent's reach (src/effects/scope.ts)
// and only for a parent the store has with the request's UID.
//
// Every call is logged with the simulated time, for scenario assertions.
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { Effect, EffectExecutor, EffectOutcome, ObjectRef as EffectRef } from '../effects/types.js'
import { withinReach } from '../effects/scope.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { deepEqual, describeRef, kubeTime, matchesSelector, type ObjectRef } from './objects.js'
import { withReadiness } from './readiness.js'
import { isReady } from '../k8s/pods.js'
import type { ObjectStore } from './store.js'

export interface EffectHost {
  store: ObjectStore
  seconds: () => number
  /** The simulated clock, in ms: the kubelet stamps the conditions it changes with it. */
  nowMs?: () => number
  /** Deletes the object as the API server does (finalizers first), records it and collects garbage. */
  remove: (ref: ObjectRef) => boolean
  /** Containers were added to a Pod: the kubelet's cue. */
  injected: (pod: KubeObject, containers: EphemeralContainer[]) => void
}

export interface AppliedEffect {
  seconds: number
  /** The parent whose hook asked for it. */
  parent?: EffectRef
  effect: Effect
  result: EffectOutcome['result']
  message?: string
}

export class SimulatorExecutor implements EffectExecutor {
  readonly mode = 'cluster' as const
  readonly log: AppliedEffect[] = []

  constructor (private readonly host: EffectHost) {}

  async apply (parent: EffectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    return this.applyNow(parent, effects)
  }

  /** The same, synchronously: the 'direct' transport calls it in-process. */
  applyNow (parent: EffectRef | undefined, effects: Effect[]): EffectOutcome[] {
    const { refused } = withinReach(parent, effects)
    const unknown = parent !== undefined && this.host.store.get(parent)?.metadata.uid !== parent.uid
    return effects.map(effect => {
      const outcome = refused.get(effect) ??
        (unknown ? { effect, result: 'refused' as const, message: 'the parent is unknown' } : this.applyOne(effect))
      this.log.push({
        seconds: this.host.seconds(),
        ...(parent !== undefined ? { parent } : {}),
        effect,
        result: outcome.result,
        ...(outcome.message !== undefined ? { message: outcome.message } : {})
      })
      return outcome
    })
  }

  private applyOne (effect: Effect): EffectOutcome {
    const { apiVersion, kind, namespace, name, uid } = effect.target
    const ref: ObjectRef = { apiVersion, kind, name, ...(namespace !== undefined ? { namespace } : {}) }
    const current = this.host.store.get(ref)
    if (current === undefined) return { effect, result: 'gone', message: `${describeRef(ref)} not found` }
    if (current.metadata.uid !== uid) {
      const message = `${describeRef(ref)} is another object now (uid ${String(current.metadata.uid)}, not ${uid})`
      return { effect, result: 'gone', message }
    }
    switch (effect.type) {
      case 'Delete': {
        this.host.remove(ref)
        return { effect, result: 'applied' }
      }
      case 'SetPodLabels':
        return this.label(effect, current)
      case 'Evict': {
        const refusal = this.disruptionRefusal(current)
        if (refusal !== undefined) {
          return { effect, result: 'failed', message: `HTTP 429: ${refusal}`, disruptionBudget: refusal }
        }
        this.host.remove(ref)
        return { effect, result: 'applied' }
      }
      case 'SetPodCondition': {
        const status = isRecord(current.status) ? current.status : {}
        const list = Array.isArray(status.conditions) ? status.conditions.filter(isRecord) : []
        const old = list.find(c => c.type === effect.condition.type)
        // As the API server merges the patch: the fields sent replace those of the same type.
        const merged = { ...old, ...effect.condition }
        const next = old === undefined ? [...list, merged] : list.map(c => (c === old ? merged : c))
        if (deepEqual(next, list)) return { effect, result: 'applied' }
        // The kubelet recomputes Ready at once, stamping the change as it does (CollaSet's delay reads it).
        const time = this.host.nowMs === undefined ? undefined : kubeTime(this.host.nowMs())
        const pod = withReadiness({ ...current, status: { ...status, conditions: next } }, time)
        this.host.store.updateStatus(ref, pod.status)
        return { effect, result: 'applied' }
      }
      case 'InjectEphemeralContainers':
        return this.inject(effect, current)
      case 'UpdatePodInPlace':
        return this.updateInPlace(effect, current)
      case 'ResizePod':
        return this.resize(effect, current)
      case 'ReleaseClaim': {
        const labels = { ...current.metadata.labels }
        delete labels['controller-uid']
        const ownerReferences = (current.metadata.ownerReferences ?? []).filter(r => r.uid !== effect.ownerUid)
        this.host.store.update({ ...current, metadata: { ...current.metadata, labels, ownerReferences } })
        return { effect, result: 'applied' }
      }
      case 'StopJobFlow': {
        const { activeDeadlineSeconds } = effect
        const spec = { ...(isRecord(current.spec) ? current.spec : {}), activeDeadlineSeconds }
        const annotations = { ...current.metadata.annotations, ...effect.annotations }
        this.host.store.update({ ...current, metadata: { ...current.metadata, annotations }, spec })
        return { effect, result: 'applied' }
      }
    }
  }

  /** The `pods/ephemeralcontainers` patch: new containers added, existing ones unchanged or refused. */
  private inject (effect: Extract<Effect, { type: 'InjectEphemeralContainers' }>, current: KubeObject): EffectOutcome {
    const name = effect.target.name
    const spec = isRecord(current.spec) ? current.spec : {}
    const existing = Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers as EphemeralContainer[] : []
    const declared = Array.isArray(spec.containers) ? spec.containers as Array<{ name: string }> : []
    const regular = new Set(declared.map(c => c.name))
    const added: EphemeralContainer[] = []
    for (const container of effect.containers) {
      const same = existing.find(c => c.name === container.name)
      if (same !== undefined) {
        const message = `Pod ${name}: ephemeral container ${container.name} exists and cannot be changed`
        if (!deepEqual(same, container)) return { effect, result: 'failed', message }
        continue
      }
      if (container.targetContainerName !== undefined && !regular.has(container.targetContainerName)) {
        const message = `Pod ${name}: no container ${container.targetContainerName} to target`
        return { effect, result: 'failed', message }
      }
      added.push(container)
    }
    if (added.length === 0) return { effect, result: 'applied' }
    const ephemeralContainers = [...existing, ...added]
    const pod = this.host.store.update({ ...current, spec: { ...spec, ephemeralContainers } })
    this.host.injected(pod, added)
    return { effect, result: 'applied' }
  }

  /**
   * The Pod's containers with `changes` merged in by name, as a strategic merge does; a change to a
   * container the Pod lacks is refused (the API server refuses a new container on a running Pod).
   */
  private mergedContainers (
    current: KubeObject,
    changes: ReadonlyArray<{ name: string } & Record<string, unknown>>
  ): { containers: Array<Record<string, unknown>> } | { missing: string } {
    const spec = isRecord(current.spec) ? current.spec : {}
    const declared = Array.isArray(spec.containers) ? spec.containers.filter(isRecord) : []
    const missing = changes.find(c => !declared.some(d => d.name === c.name))
    if (missing !== undefined) return { missing: missing.name }
    return { containers: declared.map(c => ({ ...c, ...changes.find(change => change.name === c.name) })) }
  }

  /** The Pod patch of an in-place update: images merged on the container's name, metadata by key. */
  private updateInPlace (effect: Extract<Effect, { type: 'UpdatePodInPlace' }>, current: KubeObject): EffectOutcome {
    const merged = this.mergedContainers(current, effect.images.map(({ name, image }) => ({ name, image })))
    if ('missing' in merged) {
      const message = `HTTP 422: Pod ${current.metadata.name}: no container ${merged.missing}`
      return { effect, result: 'failed', message }
    }
    const metadata = {
      ...current.metadata,
      labels: { ...current.metadata.labels, ...effect.labels },
      annotations: { ...current.metadata.annotations, ...effect.annotations }
    }
    const next = { ...current, metadata, spec: { ...(current.spec as object), containers: merged.containers } }
    if (!deepEqual(next, current)) this.host.store.update(next)
    return { effect, result: 'applied' }
  }

  /** Labels merged by key, null removing one. */
  private label (effect: Extract<Effect, { type: 'SetPodLabels' }>, current: KubeObject): EffectOutcome {
    const labels: Record<string, string> = { ...current.metadata.labels }
    for (const [key, value] of Object.entries(effect.labels)) {
      if (value === null) delete labels[key]
      else labels[key] = value
    }
    if (!deepEqual(labels, current.metadata.labels ?? {})) {
      this.host.store.update({ ...current, metadata: { ...current.metadata, labels } })
    }
    return { effect, result: 'applied' }
  }

  /** The `pods/resize` patch: each named container's resources replaced; an unknown container refused. */
  private resize (effect: Extract<Effect, { type: 'ResizePod' }>, current: KubeObject): EffectOutcome {
    const merged = this.mergedContainers(current, effect.containers)
    if ('missing' in merged) {
      const message = `HTTP 422: Pod ${current.metadata.name}: no container ${merged.missing}`
      return { effect, result: 'failed', message }
    }
    const next = { ...current, spec: { ...(current.spec as object), containers: merged.containers } }
    if (!deepEqual(next, current)) this.host.store.update(next)
    return { effect, result: 'applied' }
  }

  /** Why a PodDisruptionBudget refuses to let `pod` go, if one does. */
  private disruptionRefusal (pod: KubeObject): string | undefined {
    for (const pdb of this.host.store.list('policy/v1', 'PodDisruptionBudget')) {
      if (pdb.metadata.namespace !== pod.metadata.namespace || !isRecord(pdb.spec)) continue
      const selector = pdb.spec.selector as Parameters<typeof matchesSelector>[0]
      if (!matchesSelector(selector, pod.metadata.labels)) continue
      const selected = this.host.store.list('v1', 'Pod').filter(p => p.metadata.namespace === pod.metadata.namespace &&
        p.metadata.deletionTimestamp === undefined && matchesSelector(selector, p.metadata.labels))
      const healthy = selected.filter(isReady).length
      const desired = typeof pdb.spec.minAvailable === 'number'
        ? pdb.spec.minAvailable
        : selected.length - (typeof pdb.spec.maxUnavailable === 'number' ? pdb.spec.maxUnavailable : 0)
      const left = isReady(pod) ? healthy - 1 : healthy
      if (left < desired) {
        return `Cannot evict pod as it would violate the pod's disruption budget ${pdb.metadata.name} ` +
          `(healthy ${healthy}, desired ${desired})`
      }
    }
    return undefined
  }
}
