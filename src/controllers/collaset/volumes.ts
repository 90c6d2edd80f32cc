// CollaSet volumes (kuperator's `spec.volumeClaimTemplates` and
// `scaleStrategy.persistentVolumeClaimRetentionPolicy`): one PersistentVolumeClaim per Pod
// *instance* and claim template, named StatefulSet style, mounted by the Pod under the template's
// name. A replacement inherits its origin's instance, so it mounts the origin's claims. The claims
// are children of the CollaSet (OnDelete: a claim's spec is all but immutable), answered by
// identity once they exist. docs/collaset.md, "Volumes".
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { fitName, isDnsLabel, MAX_OBJECT_NAME } from '../../k8s/names.js'
import { originLabelValue } from '../../k8s/labels.js'

/**
 * The instance a Pod is: a replacement carries its origin's, a new Pod its own name's (fitted to a
 * label value). Set only on the Pods of a CollaSet with claim templates: a Pod without it is its
 * own instance (instanceOf).
 */
export const INSTANCE_LABEL = 'jobhooks.io/instance-id'

/** kuperator's (and StatefulSet's) PersistentVolumeClaimRetentionPolicyType. */
export type RetentionPolicy = 'Retain' | 'Delete'

/** `scaleStrategy.persistentVolumeClaimRetentionPolicy`, defaults filled in. */
export interface ClaimRetention {
  whenScaled: RetentionPolicy
  whenDeleted: RetentionPolicy
}

/** One entry of `spec.volumeClaimTemplates`: its name (the Pod's volume) and the rest as written. */
export interface ClaimTemplate {
  name: string
  labels: Record<string, string>
  annotations: Record<string, string>
  spec: Record<string, unknown>
}

/** The most claim templates a CollaSet may list: a bound on the children one Pod brings. */
export const MAX_CLAIM_TEMPLATES = 16

const POLICIES: readonly RetentionPolicy[] = ['Retain', 'Delete']

function stringMap (value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return {}
  if (!isRecord(value) || !Object.values(value).every(v => typeof v === 'string')) return undefined
  return value as Record<string, string>
}

/** One claim template, or a problem naming it. */
function parseClaimTemplate (value: unknown, where: string, problems: string[]): ClaimTemplate | undefined {
  if (!isRecord(value)) {
    problems.push(`${where} must be an object (got ${JSON.stringify(value)?.slice(0, 100)})`)
    return undefined
  }
  const metadata = isRecord(value.metadata) ? value.metadata : {}
  const name = metadata.name
  if (typeof name !== 'string' || !isDnsLabel(name)) {
    problems.push(`${where}.metadata.name must be a DNS label (got ${JSON.stringify(name)})`)
    return undefined
  }
  const labels = stringMap(metadata.labels)
  const annotations = stringMap(metadata.annotations)
  if (labels === undefined || annotations === undefined) {
    problems.push(`${where}.metadata.labels and .annotations must map names to strings`)
    return undefined
  }
  if (!isRecord(value.spec)) {
    problems.push(`${where}.spec must be an object (a PersistentVolumeClaimSpec)`)
    return undefined
  }
  return { name, labels, annotations, spec: value.spec }
}

/** `spec.volumeClaimTemplates`: problems pushed (not a list, no name, a name twice), never thrown. */
export function parseClaimTemplates (value: unknown, problems: string[]): ClaimTemplate[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.length > MAX_CLAIM_TEMPLATES) {
    problems.push(`spec.volumeClaimTemplates must list at most ${MAX_CLAIM_TEMPLATES} claim templates`)
    return []
  }
  const templates: ClaimTemplate[] = []
  const names = new Set<string>()
  value.forEach((entry, i) => {
    const template = parseClaimTemplate(entry, `spec.volumeClaimTemplates[${i}]`, problems)
    if (template === undefined) return
    if (names.has(template.name)) problems.push(`spec.volumeClaimTemplates names "${template.name}" twice`)
    names.add(template.name)
    templates.push(template)
  })
  return templates
}

function parsePolicy (value: unknown, where: string, fallback: RetentionPolicy, problems: string[]): RetentionPolicy {
  if (value === undefined || value === null) return fallback
  if (POLICIES.includes(value as RetentionPolicy)) return value as RetentionPolicy
  problems.push(`${where} must be Retain or Delete (got ${JSON.stringify(value)})`)
  return fallback
}

/**
 * `scaleStrategy.persistentVolumeClaimRetentionPolicy`. whenScaled defaults to Retain
 * (StatefulSet's, and kuperator's documented default), whenDeleted to Delete (kuperator's
 * policy type default): a claim is a child, and the garbage collector takes it with the
 * CollaSet. `whenDeleted: Retain`: the finalize hook releases the claims first (finalize.ts).
 */
export function parseRetention (value: unknown, problems: string[]): ClaimRetention {
  const where = 'spec.scaleStrategy.persistentVolumeClaimRetentionPolicy'
  if (value !== undefined && value !== null && !isRecord(value)) {
    problems.push(`${where} must be an object (got ${JSON.stringify(value)})`)
    return { whenScaled: 'Retain', whenDeleted: 'Delete' }
  }
  const policy = isRecord(value) ? value : {}
  const whenScaled = parsePolicy(policy.whenScaled, `${where}.whenScaled`, 'Retain', problems)
  const whenDeleted = parsePolicy(policy.whenDeleted, `${where}.whenDeleted`, 'Delete', problems)
  return { whenScaled, whenDeleted }
}

/** The instance of a Pod: its label, else its own name (a Pod made before claim templates were). */
function instanceOf (pod: KubeObject): string {
  return pod.metadata.labels?.[INSTANCE_LABEL] ?? originLabelValue(pod.metadata.name)
}

/** The claim of `template` for `instance`: `<template>-<instance>`, as StatefulSet names them. */
export function claimName (template: string, instance: string): string {
  return fitName(`${template}-${instance}`, MAX_OBJECT_NAME)
}

/**
 * `instances` and the instances of the Pods `scaleStrategy.podToExclude` names (by name: a
 * released Pod is no longer observed): a released Pod keeps using its claims, so they are
 * neither deleted nor handed to a new Pod while its name is listed.
 */
function releasedInstances (instances: Iterable<string>, released: readonly string[]): Set<string> {
  const held = new Set(instances)
  for (const name of released) held.add(originLabelValue(name))
  return held
}

/**
 * The instances whose claims no Pod holds (kept under whenScaled: Retain, or left by a Pod this
 * sync drops: a Recreate, a Pod deleted by hand), in name order: a Pod added for capacity takes
 * one, so its data comes back as a StatefulSet's does. None without claim templates.
 */
export function freeInstances (
  claims: readonly KubeObject[],
  pods: readonly KubeObject[],
  templates: readonly ClaimTemplate[],
  released: readonly string[]
): string[] {
  if (templates.length === 0) return []
  const held = releasedInstances(pods.map(instanceOf), released)
  const free = new Set<string>()
  for (const claim of claims) {
    const instance = claim.metadata.labels?.[INSTANCE_LABEL]
    if (instance !== undefined && claim.metadata.deletionTimestamp === undefined && !held.has(instance)) {
      free.add(instance)
    }
  }
  return [...free].sort()
}

/**
 * Gives a new Pod its instance (`instance`, else its own name) and mounts its claims: a volume per
 * claim template, under the template's name, in place of a template volume of that name
 * (StatefulSet's precedence). A replacement (`origin`) takes the origin's instance, and, when the
 * origin runs on a node, a
 * required affinity to that node: its ReadWriteOnce volumes attach to one node at a time, and the
 * replacement comes up while the origin still runs.
 */
export function attachClaims (
  pod: KubeObject,
  templates: readonly ClaimTemplate[],
  origin?: KubeObject,
  reused?: string
): void {
  if (templates.length === 0) return
  const instance = origin !== undefined ? instanceOf(origin) : reused ?? originLabelValue(pod.metadata.name)
  pod.metadata.labels = { ...pod.metadata.labels, [INSTANCE_LABEL]: instance }
  const spec = pod.spec as Record<string, unknown>
  const names = new Set(templates.map(t => t.name))
  const volumes = Array.isArray(spec.volumes)
    ? spec.volumes.filter(v => !(isRecord(v) && names.has(v.name as string)))
    : []
  for (const t of templates) {
    volumes.push({ name: t.name, persistentVolumeClaim: { claimName: claimName(t.name, instance) } })
  }
  spec.volumes = volumes
  const node = isRecord(origin?.spec) ? origin.spec.nodeName : undefined
  if (typeof node === 'string' && node !== '') pinToNode(spec, node)
}

/**
 * Adds `metadata.name In [node]` to every required node selector term (terms are ORed, so each
 * must carry it), or makes the one term.
 */
function pinToNode (spec: Record<string, unknown>, node: string): void {
  const field = { key: 'metadata.name', operator: 'In', values: [node] }
  const affinity = isRecord(spec.affinity) ? spec.affinity : {}
  const nodeAffinity = isRecord(affinity.nodeAffinity) ? affinity.nodeAffinity : {}
  const required = isRecord(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)
    ? nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
    : {}
  const terms = Array.isArray(required.nodeSelectorTerms) && required.nodeSelectorTerms.length > 0
    ? required.nodeSelectorTerms.filter(isRecord)
    : [{}]
  const pinned = terms.map(t => ({
    ...t, matchFields: [...(Array.isArray(t.matchFields) ? t.matchFields : []), field]
  }))
  const requiredPinned = { ...required, nodeSelectorTerms: pinned }
  spec.affinity = {
    ...affinity,
    nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: requiredPinned }
  }
}

/** A new claim of `template` for `instance`, in the CollaSet's namespace. */
function newClaim (template: ClaimTemplate, instance: string, namespace: string | undefined): KubeObject {
  const metadata: KubeObject['metadata'] = {
    name: claimName(template.name, instance),
    labels: { ...template.labels, [INSTANCE_LABEL]: instance }
  }
  if (namespace !== undefined) metadata.namespace = namespace
  if (Object.keys(template.annotations).length > 0) metadata.annotations = { ...template.annotations }
  return { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata, spec: structuredClone(template.spec) }
}

/**
 * The claims the answer holds, given the Pods it holds: each observed claim whose instance still
 * has a Pod, or any under `whenScaled: Retain`, or one without an instance label (not ours to
 * judge: kept); and a new claim for each Pod with an instance label and each template it lacks.
 * Under `whenScaled: Delete` a claim whose instance has no Pod left is left out: Metacontroller
 * deletes it (the API server holds it until no Pod mounts it: pvc-protection).
 */
export function answerClaims (
  observed: readonly KubeObject[],
  pods: readonly KubeObject[],
  templates: readonly ClaimTemplate[],
  { retention, released }: { retention: ClaimRetention, released: readonly string[] },
  namespace: string | undefined
): { kept: KubeObject[], created: KubeObject[] } {
  const instances = new Set<string>()
  for (const pod of pods) {
    const label = pod.metadata.labels?.[INSTANCE_LABEL]
    if (label !== undefined) instances.add(label)
  }
  const held = releasedInstances(instances, released)
  const kept = observed.filter(claim => {
    const instance = claim.metadata.labels?.[INSTANCE_LABEL]
    return instance === undefined || retention.whenScaled === 'Retain' || held.has(instance)
  })
  const names = new Set(observed.map(c => c.metadata.name))
  const created: KubeObject[] = []
  for (const instance of [...instances].sort()) {
    for (const t of templates) {
      if (!names.has(claimName(t.name, instance))) created.push(newClaim(t, instance, namespace))
    }
  }
  return { kept, created }
}
