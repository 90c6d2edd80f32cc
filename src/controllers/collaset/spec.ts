// Reading a CollaSet's spec. Everything that makes it unusable is collected, not thrown: the
// hook then keeps every Pod as it is and reports the problems in status (law 2).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { selectorMatches, selectorProblems, type LabelSelector } from '../../k8s/selectors.js'
import { MAX_OBJECT_NAME } from '../../k8s/names.js'
import { optionalWholeNumber, type Parsed } from '../common/parsed.js'
import { parseClaimTemplates, parseRetention, type ClaimRetention, type ClaimTemplate } from './volumes.js'

/** The most Pods one CollaSet may ask for: a bound that keeps a typo from flooding a namespace. */
export const MAX_REPLICAS = 10000

/** The longest `updateStrategy.operationDelaySeconds`: a day, so a typo cannot stall a rollout for years. */
export const MAX_OPERATION_DELAY_SECONDS = 86400

/**
 * kuperator's `updateStrategy.podUpgradePolicy`: how a Pod takes a new template. In place (its
 * images patched, inplace.ts) when only images and metadata changed, else replaced, new Pod first
 * (`InPlaceIfPossible`, the default); in place or not at all (`InPlaceOnly`); always replaced
 * (`Replace`); always deleted first, then made anew (`Recreate`).
 */
export type PodUpgradePolicy = 'InPlaceIfPossible' | 'InPlaceOnly' | 'Replace' | 'Recreate'
const UPGRADE_POLICIES: readonly PodUpgradePolicy[] = ['InPlaceIfPossible', 'InPlaceOnly', 'Replace', 'Recreate']

/** kuperator's `updateStrategy`: which Pods a rollout may touch, how, and how fast. */
export interface UpdateStrategy {
  podUpgradePolicy: PodUpgradePolicy
  /** `rollingUpdate.byPartition.partition`: Pods kept at an older revision; undefined updates all. */
  partition?: number
  /** `rollingUpdate.byLabel` is set: only Pods labelled UPDATE_INCLUDED_LABEL are updated. */
  byLabel: boolean
  /** Seconds from one Pod's update (its replacement Ready) to the next one's start; 0: none. */
  operationDelaySeconds: number
}

/** kuperator's `scaleStrategy`: Pods to delete or release by name, and the pause before a Pod goes. */
export interface ScaleStrategy {
  /** `podToDelete`: names of the set's Pods to delete (a replacement comes when `replicas` wants one). */
  podToDelete: string[]
  /** `podToExclude`: names of the set's Pods to release (the set stops owning them). */
  podToExclude: string[]
  /** `podToInclude`: names of Pods of the namespace to adopt (include.ts). */
  podToInclude: string[]
  /** Seconds a Pod chosen to go stays out of traffic before it is deleted; 0: none. */
  operationDelaySeconds: number
  /** `persistentVolumeClaimRetentionPolicy`, defaults filled in (volumes.ts). */
  retention: ClaimRetention
}

/** The most names `scaleStrategy.podToDelete` may list. */
export const MAX_POD_NAMES = 1000

/**
 * kuperator's `namingStrategy.podNamingSuffixPolicy`: `Random` (the default; here a stable hash,
 * never random: law 3) or `PersistentSequence` (`<collaset>-<ordinal>`).
 */
export type PodNamingSuffixPolicy = 'Random' | 'PersistentSequence'
const NAMING_POLICIES: readonly PodNamingSuffixPolicy[] = ['Random', 'PersistentSequence']

export interface CollaSetSpec {
  replicas: number
  naming: PodNamingSuffixPolicy
  scaleStrategy: ScaleStrategy
  /** While true, no Pod is created or removed to scale, and none is updated. */
  paused: boolean
  updateStrategy: UpdateStrategy
  selector: LabelSelector
  /** The PodTemplateSpec: `metadata` (labels, annotations) and `spec`. */
  template: {
    metadata: { labels: Record<string, string>, annotations?: Record<string, string> },
    spec: Record<string, unknown>
  }
  /** `volumeClaimTemplates`: a claim per Pod instance and template (volumes.ts). */
  volumeClaimTemplates: ClaimTemplate[]
}

function stringMap (value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined
  return Object.values(value).every(v => typeof v === 'string') ? value as Record<string, string> : undefined
}

function optionalRecord (value: unknown, where: string, problems: string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {}
  if (isRecord(value)) return value
  problems.push(`${where} must be an object (got ${JSON.stringify(value)})`)
  return {}
}

/** `spec.updateStrategy`, kuperator's fields; problems pushed, never thrown. */
function parseUpdateStrategy (value: unknown, problems: string[]): UpdateStrategy {
  const strategy = optionalRecord(value, 'spec.updateStrategy', problems)
  const rolling = optionalRecord(strategy.rollingUpdate, 'spec.updateStrategy.rollingUpdate', problems)
  const byPartition = optionalRecord(
    rolling.byPartition, 'spec.updateStrategy.rollingUpdate.byPartition', problems
  )
  const partition = optionalWholeNumber(
    byPartition.partition, 'spec.updateStrategy.rollingUpdate.byPartition.partition', 0, MAX_REPLICAS, problems
  )
  const byLabel = rolling.byLabel !== undefined && rolling.byLabel !== null
  optionalRecord(rolling.byLabel, 'spec.updateStrategy.rollingUpdate.byLabel', problems)
  const operationDelaySeconds = optionalWholeNumber(
    strategy.operationDelaySeconds, 'spec.updateStrategy.operationDelaySeconds', 0, MAX_OPERATION_DELAY_SECONDS,
    problems
  ) ?? 0
  const podUpgradePolicy = parseUpgradePolicy(strategy.podUpgradePolicy, problems)
  return { podUpgradePolicy, ...(partition !== undefined ? { partition } : {}), byLabel, operationDelaySeconds }
}

function parseUpgradePolicy (value: unknown, problems: string[]): PodUpgradePolicy {
  if (value === undefined || value === null) return 'InPlaceIfPossible'
  if (UPGRADE_POLICIES.includes(value as PodUpgradePolicy)) return value as PodUpgradePolicy
  problems.push(`spec.updateStrategy.podUpgradePolicy must be one of ${UPGRADE_POLICIES.join(', ')} (got ${
    JSON.stringify(value)})`)
  return 'InPlaceIfPossible'
}

/** A list of Pod names, or a problem naming the field. */
function podNames (value: unknown, where: string, problems: string[]): string[] {
  if (value === undefined || value === null) return []
  const ok = Array.isArray(value) && value.length <= MAX_POD_NAMES &&
    value.every(v => typeof v === 'string' && v.length > 0 && v.length <= MAX_OBJECT_NAME)
  if (ok) return value as string[]
  problems.push(`${where} must list at most ${MAX_POD_NAMES} Pod names (got ${JSON.stringify(value).slice(0, 200)})`)
  return []
}

/** `spec.scaleStrategy`, kuperator's fields; problems pushed, never thrown. */
function parseScaleStrategy (value: unknown, problems: string[]): ScaleStrategy {
  const strategy = optionalRecord(value, 'spec.scaleStrategy', problems)
  const podToInclude = podNames(strategy.podToInclude, 'spec.scaleStrategy.podToInclude', problems)
  const podToExclude = podNames(strategy.podToExclude, 'spec.scaleStrategy.podToExclude', problems)
  const both = podToInclude.filter(name => podToExclude.includes(name))
  if (both.length > 0) {
    problems.push(`spec.scaleStrategy: podToInclude and podToExclude both name ${both.slice(0, 5).join(', ')}`)
  }
  const operationDelaySeconds = optionalWholeNumber(
    strategy.operationDelaySeconds, 'spec.scaleStrategy.operationDelaySeconds', 0, MAX_OPERATION_DELAY_SECONDS,
    problems
  ) ?? 0
  return {
    podToDelete: podNames(strategy.podToDelete, 'spec.scaleStrategy.podToDelete', problems),
    podToExclude,
    podToInclude,
    operationDelaySeconds,
    retention: parseRetention(strategy.persistentVolumeClaimRetentionPolicy, problems)
  }
}

/** `spec.namingStrategy.podNamingSuffixPolicy`; problems pushed, never thrown. */
function parseNaming (value: unknown, problems: string[]): PodNamingSuffixPolicy {
  const strategy = optionalRecord(value, 'spec.namingStrategy', problems)
  const policy = strategy.podNamingSuffixPolicy
  if (policy === undefined || policy === null) return 'Random'
  if (NAMING_POLICIES.includes(policy as PodNamingSuffixPolicy)) return policy as PodNamingSuffixPolicy
  problems.push(`spec.namingStrategy.podNamingSuffixPolicy must be Random or PersistentSequence (got ${
    JSON.stringify(policy)})`)
  return 'Random'
}

function parsePaused (value: unknown, problems: string[]): boolean {
  if (value === undefined || value === null) return false
  if (typeof value === 'boolean') return value
  problems.push(`spec.paused must be true or false (got ${JSON.stringify(value)})`)
  return false
}

/** `spec.template`: its labels, annotations and Pod spec; problems pushed, never thrown. */
function parseTemplate (template: unknown, problems: string[]): {
  labels: Record<string, string>, annotations?: Record<string, string>, podSpec: Record<string, unknown>
} {
  let labels: Record<string, string> = {}
  let annotations: Record<string, string> | undefined
  let podSpec: Record<string, unknown> = {}
  if (!isRecord(template)) {
    problems.push('spec.template is required')
    return { labels, podSpec }
  }
  const metadata = isRecord(template.metadata) ? template.metadata : {}
  const l = metadata.labels === undefined ? {} : stringMap(metadata.labels)
  if (l === undefined) problems.push('spec.template.metadata.labels must map names to strings')
  else labels = l
  if (metadata.annotations !== undefined) {
    annotations = stringMap(metadata.annotations)
    if (annotations === undefined) problems.push('spec.template.metadata.annotations must map names to strings')
  }
  if (!isRecord(template.spec) || !Array.isArray(template.spec.containers) || template.spec.containers.length === 0) {
    problems.push('spec.template.spec.containers must list at least one container')
  } else {
    podSpec = template.spec
  }
  return { labels, ...(annotations !== undefined ? { annotations } : {}), podSpec }
}

export function parseCollaSetSpec (parent: KubeObject): Parsed<CollaSetSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is missing'] }
  const problems: string[] = []
  const replicas = optionalWholeNumber(spec.replicas, 'spec.replicas', 0, MAX_REPLICAS, problems) ?? 1
  const paused = parsePaused(spec.paused, problems)
  const updateStrategy = parseUpdateStrategy(spec.updateStrategy, problems)
  const scaleStrategy = parseScaleStrategy(spec.scaleStrategy, problems)
  const naming = parseNaming(spec.namingStrategy, problems)
  const selectorIssues = spec.selector === undefined
    ? ['spec.selector is required']
    : selectorProblems(
      spec.selector,
      'spec.selector'
    )
  problems.push(...selectorIssues)
  const volumeClaimTemplates = parseClaimTemplates(spec.volumeClaimTemplates, problems)
  const template = spec.template
  const { labels, annotations, podSpec } = parseTemplate(template, problems)
  if (selectorIssues.length === 0 && isRecord(template)) {
    const selector = spec.selector as LabelSelector
    const empty = (selector.matchLabels === undefined || Object.keys(selector.matchLabels).length === 0) &&
      (selector.matchExpressions === undefined || selector.matchExpressions.length === 0)
    if (empty) problems.push('spec.selector must not be empty: it would select every Pod of the namespace')
    else if (!selectorMatches(selector, labels)) {
      problems.push(
        'spec.selector does not match spec.template.metadata.labels'
      )
    }
  }
  if (problems.length > 0) return { ok: false, problems }
  return {
    ok: true,
    value: {
      replicas,
      naming,
      scaleStrategy,
      paused,
      updateStrategy,
      selector: spec.selector as LabelSelector,
      template: { metadata: { labels, ...(annotations !== undefined ? { annotations } : {}) }, spec: podSpec },
      volumeClaimTemplates
    }
  }
}
