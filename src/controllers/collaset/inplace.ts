// In-place updates of CollaSet Pods (kuperator's `podUpgradePolicy` InPlaceIfPossible and
// InPlaceOnly): a change of the containers' images, and of the template's labels and
// annotations, is written onto the running Pod instead of replacing it; its name, UID and IP stay.
// Everything here is read from the observed Pod, so a sync can pick up where the last one left:
// - which Pods can take it: the annotation jobhooks.io/template-shape, set when the Pod was made,
//   hashes its template with the images left out; a template with the same shape differs in
//   images (or metadata) only, the one thing Kubernetes lets change on a running Pod's spec
//   (its second part leaves resources out too: those a kubelet may resize, resize.ts);
// - the lifecycle: the Pod leaves traffic first (its service-ready condition False, reason
//   InPlaceUpdate), is patched once it is not Ready (UpdatePodInPlace), and comes back (the
//   condition True) once every changed container runs again and is ready;
// - what "runs again" means: the annotation jobhooks.io/in-place-update, written with the patch,
//   records each changed container's image, imageID and restart count before it. A container is
//   updated when its status shows the new image, another imageID or a restart since (a kubelet
//   may report the image under a longer name, and a new tag may hold the same image).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { refTo, type Effect, type PodImage } from '../../effects/types.js'
import {
  hasServiceGate, podContainers, podContainerStatuses, recordsOf, serviceReadyCondition
} from '../../k8s/pods.js'
import { SERVICE_READY } from '../../k8s/labels.js'
import { shortHash } from '../../k8s/names.js'
import { timestamp } from '../../k8s/time.js'
import type { CollaSetSpec } from './spec.js'
import type { Member } from './members.js'
import { canonicalJson, podLabels, revisionOf, TEMPLATE_SHAPE_ANNOTATION, type TemplateIds } from './pods.js'
import { kubeletResizes, resizable, resizeEffect, resizeSettled } from './resize.js'

/** What the Pod's changed containers ran before its last in-place update, and the revision it went to. */
export const IN_PLACE_ANNOTATION = 'jobhooks.io/in-place-update'
/** The service-ready condition's reason while the rollout holds the Pod out of traffic to update it. */
export const IN_PLACE_REASON = 'InPlaceUpdate'

/** A container as it ran before the update: what tells a restart with the new image. */
interface ContainerBefore {
  image?: string
  imageID?: string
  restartCount: number
}

/** The annotation's content. */
export interface InPlaceRecord {
  revision: string
  containers: Record<string, ContainerBefore>
}

/** The template's Pod spec hashed with the named fields of each container left out. */
function hashWithout (template: CollaSetSpec['template'], fields: readonly string[]): string {
  const containers = Array.isArray(template.spec.containers) ? template.spec.containers : []
  const without = containers.map(c => {
    if (!isRecord(c)) return c
    const rest = { ...c }
    for (const field of fields) delete rest[field]
    return rest
  })
  return shortHash(canonicalJson({ ...template.spec, containers: without }))
}

/**
 * The shape of a template, `<images>/<resize>`: its Pod spec hashed with each container's image
 * left out, then with its image and resources left out. Equal first parts: only images differ;
 * equal second parts: only images and resources.
 */
export function templateShape (template: CollaSetSpec['template']): string {
  return `${hashWithout(template, ['image'])}/${hashWithout(template, ['image', 'resources'])}`
}

/** What an in-place update of the Pod to a template of `shape` would change, if it can be made at all. */
export type InPlaceKind = 'Images' | 'Resize'

/**
 * How the Pod can take the template (of `shape`) in place: its images alone (the same first part),
 * or a resize as well (the same second part, on a kubelet that resizes, within what a resize may
 * change); undefined: not in place.
 */
export function inPlaceKind (pod: KubeObject, spec: CollaSetSpec, shape: string): InPlaceKind | undefined {
  const [images, resize] = shape.split('/')
  const [podImages, podResize] = (pod.metadata.annotations?.[TEMPLATE_SHAPE_ANNOTATION] ?? '').split('/')
  if (podImages !== undefined && podImages === images) return 'Images'
  const sameShape = podResize !== undefined && podResize === resize
  return sameShape && kubeletResizes(pod) && resizable(pod, spec) ? 'Resize' : undefined
}

function containerStatuses (pod: KubeObject): Map<string, Record<string, unknown>> {
  return new Map(podContainerStatuses(pod).map(s => [String(s.name), s]))
}

/** The record on the Pod, if it holds a well-formed one. */
export function inPlaceRecord (pod: KubeObject): InPlaceRecord | undefined {
  const text = pod.metadata.annotations?.[IN_PLACE_ANNOTATION]
  if (text === undefined || text.length > 16384) return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (!isRecord(value) || typeof value.revision !== 'string' || !isRecord(value.containers)) return undefined
    return value as unknown as InPlaceRecord
  } catch {
    return undefined
  }
}

/** Whether a container's status shows it running the image of the update, as the record tells. */
function restarted (status: Record<string, unknown> | undefined, image: unknown, before: ContainerBefore): boolean {
  if (status === undefined || status.ready !== true) return false
  if (status.image === image) return true
  if (typeof status.imageID === 'string' && status.imageID !== '' && status.imageID !== before.imageID) return true
  return typeof status.restartCount === 'number' && status.restartCount > before.restartCount
}

/** The Pod's last in-place update, to the revision it carries now, has every changed container back and ready. */
export function inPlaceDone (pod: KubeObject): boolean {
  const record = inPlaceRecord(pod)
  if (record === undefined || record.revision !== revisionOf(pod) || !resizeSettled(pod)) return false
  const statuses = containerStatuses(pod)
  const specs = new Map(podContainers(pod).map(c => [String(c.name), c]))
  return Object.entries(record.containers).every(([name, before]) =>
    restarted(statuses.get(name), specs.get(name)?.image, before))
}

/** The service-ready condition's reason while the rollout holds the Pod out of traffic to recreate it. */
export const RECREATE_REASON = 'Recreate'

/** The rollout took the Pod out of traffic to update it in place (its service-ready condition says so). */
function heldForInPlace (pod: KubeObject): boolean {
  const gate = serviceReadyCondition(pod)
  return gate?.status === 'False' && gate.reason === IN_PLACE_REASON
}

/** The rollout took the Pod out of traffic to update it, in place or by recreating it. */
export function heldForUpdate (pod: KubeObject): boolean {
  const gate = serviceReadyCondition(pod)
  return gate?.status === 'False' && (gate.reason === IN_PLACE_REASON || gate.reason === RECREATE_REASON)
}

/**
 * An in-place update under way: held out of traffic for it and not done at `updated`, or (a Pod
 * without the gate) patched to `updated` with containers not back yet.
 */
export function inPlaceUnderWay (pod: KubeObject, updated: string): boolean {
  const done = revisionOf(pod) === updated && inPlaceDone(pod)
  if (heldForInPlace(pod)) return !done
  return revisionOf(pod) === updated && inPlaceRecord(pod)?.revision === updated && !done
}

/** The containers whose image the template changes, with their place in the Pod's list. */
function changedImages (pod: KubeObject, spec: CollaSetSpec): PodImage[] {
  const wanted = new Map(recordsOf(spec.template.spec.containers).map(c => [String(c.name), c.image]))
  const changed: PodImage[] = []
  podContainers(pod).forEach((c, index) => {
    const image = wanted.get(String(c.name))
    if (typeof image === 'string' && image !== c.image) changed.push({ index, name: String(c.name), image })
  })
  return changed
}

function recordOf (pod: KubeObject, changed: readonly PodImage[], revision: string): InPlaceRecord {
  const statuses = containerStatuses(pod)
  const containers: Record<string, ContainerBefore> = {}
  for (const { name } of changed) {
    const status = statuses.get(name)
    containers[name] = {
      ...(typeof status?.image === 'string' ? { image: status.image } : {}),
      ...(typeof status?.imageID === 'string' ? { imageID: status.imageID } : {}),
      restartCount: typeof status?.restartCount === 'number' ? status.restartCount : 0
    }
  }
  return { revision, containers }
}

/**
 * The effects of one sync's step of the in-place update of `origin` to `ids`: out of traffic first
 * (the condition False); once the Pod is not Ready (or has no gate to wait on), its resize if the
 * resources change (resize.ts), then, once its spec has them, the patch of images and metadata,
 * which moves it to the revision (so a Pod is never labelled with a revision its spec lacks).
 */
export function inPlaceEffects (origin: Member, spec: CollaSetSpec, ids: TemplateIds, now: Date): Effect[] {
  const revision = ids.revision
  const { pod } = origin
  const ref = refTo(pod)
  if (ref === undefined) return []
  const effects: Effect[] = []
  const gated = hasServiceGate(pod)
  if (gated && !heldForInPlace(pod)) {
    effects.push({
      type: 'SetPodCondition',
      target: ref,
      condition: {
        type: SERVICE_READY,
        status: 'False',
        reason: IN_PLACE_REASON,
        message: `the Pod leaves traffic for an in-place update to revision ${revision}`,
        lastTransitionTime: timestamp(now)
      }
    })
  }
  if (gated && origin.ready) return effects
  const resize = resizeEffect(pod, spec, ref)
  if (resize !== undefined) return [...effects, resize]
  const images = changedImages(pod, spec)
  const annotations = {
    ...spec.template.metadata.annotations,
    [TEMPLATE_SHAPE_ANNOTATION]: ids.shape,
    [IN_PLACE_ANNOTATION]: JSON.stringify(recordOf(pod, images, revision))
  }
  effects.push({ type: 'UpdatePodInPlace', target: ref, images, labels: podLabels(spec, revision), annotations })
  return effects
}
