// CollaSet Pods: their names, the template revision, and new Pods from the template. What a Pod's
// labels and conditions say is the shared Pod contract (src/k8s/pods.ts, src/k8s/labels.ts).
import { createHash } from 'node:crypto'
import type { KubeObject } from '../../k8s/types.js'
import { refTo, type Effect } from '../../effects/types.js'
import { isRecord } from '../../k8s/types.js'
import { REPLACE_ORIGIN_LABEL, SERVICE_READY, TO_REPLACE_LABEL } from '../../k8s/labels.js'
import { fitName, isDnsLabel, MAX_OBJECT_NAME, shortHash } from '../../k8s/names.js'
import type { CollaSetSpec } from './spec.js'

/** The annotation that names a Pod's template shape (inplace.ts, which owns its meaning). */
export const TEMPLATE_SHAPE_ANNOTATION = 'jobhooks.io/template-shape'

/** A hash of the template the Pod was made from. */
export const REVISION_LABEL = 'jobhooks.io/revision'
/**
 * Under `updateStrategy.rollingUpdate.byLabel`, only Pods carrying this label (any value) are
 * updated: kuperator's `collaset.kusionstack.io/update-included`, in our own prefix.
 */
export const UPDATE_INCLUDED_LABEL = 'jobhooks.io/update-included'

/**
 * A Pod carrying this label (any value) is deleted, as if named in `scaleStrategy.podToDelete`:
 * kuperator's `collaset.kusionstack.io/to-delete`, in our own prefix.
 */
export const TO_DELETE_LABEL = 'jobhooks.io/to-delete'

/**
 * The label Metacontroller claims a CollaSet's Pods by (its CompositeController has
 * `generateSelector: true`): `controller-uid=<CollaSet uid>`. A Pod without it is released.
 */
export const CONTROLLER_UID_LABEL = 'controller-uid'

/**
 * Sets each Pod's `controller-uid` label to `value` (null: removes it) where it is not so already:
 * how a Pod joins a set (Metacontroller adopts an orphan that matches) or leaves it (Metacontroller
 * releases an owned Pod that no longer matches).
 */
export function claimLabelEffects (pods: Iterable<KubeObject>, value: string | null): Effect[] {
  const effects: Effect[] = []
  for (const pod of pods) {
    const ref = refTo(pod)
    if (ref === undefined || (pod.metadata.labels?.[CONTROLLER_UID_LABEL] ?? null) === value) continue
    effects.push({ type: 'SetPodLabels', target: ref, labels: { [CONTROLLER_UID_LABEL]: value } })
  }
  return effects
}

const SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
export const SUFFIX_LENGTH = 5

/** JSON with object keys sorted: the same template always hashes the same, whatever the key order. */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (isRecord(value)) {
    const members = Object.keys(value).sort().filter(k => value[k] !== undefined)
    return `{${members.map(k => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The revision of a template: `<collaset>-<10 hex digits of its hash>`, fitted to a label value. */
export function templateRevision (collaset: string, template: CollaSetSpec['template']): string {
  return fitName(`${collaset}-${shortHash(canonicalJson(template))}`)
}

/** Five lowercase letters or digits from a stable hash of `key`. */
export function nameSuffix (key: string): string {
  const digest = createHash('sha256').update(key).digest()
  let suffix = ''
  for (let i = 0; i < SUFFIX_LENGTH; i++) suffix += SUFFIX_ALPHABET[(digest[i] as number) % SUFFIX_ALPHABET.length]
  return suffix
}

/**
 * Hands out Pod names `<collaset>-<suffix>`: the suffix hashes the CollaSet's identity (its name) and a slot
 * number, and the first slot whose name no observed Pod holds (nor names as a replace origin, nor
 * was handed out in this sync) wins. A function of observed state: never random.
 */
export class PodNamer {
  private readonly used: Set<string>
  private slot = 0
  private readonly prefix: string

  constructor (private readonly identity: string, collaset: string, used: Iterable<string>) {
    this.used = new Set(used)
    this.prefix = fitName(collaset, MAX_OBJECT_NAME - SUFFIX_LENGTH - 1)
  }

  next (): string {
    for (;;) {
      const name = `${this.prefix}-${nameSuffix(`${this.identity}#${this.slot++}`)}`
      if (!this.used.has(name)) {
        this.used.add(name)
        return name
      }
    }
  }
}

/**
 * Hands out Pod names `<collaset>-<ordinal>` under kuperator's PersistentSequence policy: the
 * lowest ordinal whose name no observed Pod holds (nor names as a replace origin, nor was handed
 * out in this sync), so an ordinal comes back once its Pod is gone.
 */
export class SequenceNamer {
  private readonly used: Set<string>
  private ordinal = 0
  private readonly prefix: string

  constructor (collaset: string, used: Iterable<string>) {
    this.used = new Set(used)
    this.prefix = fitName(collaset, MAX_OBJECT_NAME - MAX_ORDINAL_DIGITS - 1)
  }

  next (): string {
    for (;;) {
      const name = `${this.prefix}-${this.ordinal++}`
      if (!this.used.has(name)) {
        this.used.add(name)
        return name
      }
    }
  }
}

/** Digits of the greatest ordinal a set of MAX_REPLICAS Pods (and its replacements) can reach. */
const MAX_ORDINAL_DIGITS = 6

export function revisionOf (pod: KubeObject): string | undefined {
  return pod.metadata.labels?.[REVISION_LABEL]
}

/**
 * The labels a Pod of `revision` carries: the template's and the revision, never a request the
 * template might hold (to-replace, replace-origin, to-delete: those are set on one Pod, by hand).
 */
export function podLabels (spec: CollaSetSpec, revision: string): Record<string, string> {
  const labels: Record<string, string> = { ...spec.template.metadata.labels, [REVISION_LABEL]: revision }
  delete labels[TO_REPLACE_LABEL]
  delete labels[REPLACE_ORIGIN_LABEL]
  delete labels[TO_DELETE_LABEL]
  return labels
}

/** What names the template a Pod is made from: its revision and its shape (inplace.ts). */
export interface TemplateIds {
  revision: string
  shape: string
}

/**
 * A new Pod from the template: its labels plus the revision (and the origin it replaces), the
 * template's shape (which in-place updates it may take later), and the readiness gate.
 */
export function newPod (
  name: string,
  namespace: string | undefined,
  spec: CollaSetSpec,
  ids: TemplateIds,
  origin?: string
): KubeObject {
  const labels = podLabels(spec, ids.revision)
  if (origin !== undefined) labels[REPLACE_ORIGIN_LABEL] = origin
  const podSpec = structuredClone(spec.template.spec)
  const gates = Array.isArray(podSpec.readinessGates) ? podSpec.readinessGates.filter(isRecord) : []
  if (!gates.some(g => g.conditionType === SERVICE_READY)) gates.push({ conditionType: SERVICE_READY })
  podSpec.readinessGates = gates
  // PersistentSequence: the Pod's hostname is its name (a DNS label, or the kubelet refuses it).
  if (spec.naming === 'PersistentSequence' && isDnsLabel(name)) podSpec.hostname = name
  const metadata: KubeObject['metadata'] = { name, labels }
  if (namespace !== undefined) metadata.namespace = namespace
  metadata.annotations = { ...spec.template.metadata.annotations, [TEMPLATE_SHAPE_ANNOTATION]: ids.shape }
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec: podSpec }
}
