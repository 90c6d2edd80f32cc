// Reading a CollaSet's spec. Everything that makes it unusable is collected, not thrown: the
// hook then keeps every Pod as it is and reports the problems in status (law 2).
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { selectorMatches, selectorProblems, type LabelSelector } from '../../k8s/selectors.js'
import { optionalWholeNumber, type Parsed } from '../common/parsed.js'

/** The most Pods one CollaSet may ask for: a bound that keeps a typo from flooding a namespace. */
export const MAX_REPLICAS = 10000

export interface CollaSetSpec {
  replicas: number
  selector: LabelSelector
  /** The PodTemplateSpec: `metadata` (labels, annotations) and `spec`. */
  template: {
    metadata: { labels: Record<string, string>, annotations?: Record<string, string> },
    spec: Record<string, unknown>
  }
}

function stringMap (value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined
  return Object.values(value).every(v => typeof v === 'string') ? value as Record<string, string> : undefined
}

export function parseCollaSetSpec (parent: KubeObject): Parsed<CollaSetSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is missing'] }
  const problems: string[] = []
  const replicas = optionalWholeNumber(spec.replicas, 'spec.replicas', 0, MAX_REPLICAS, problems) ?? 1
  const selectorIssues = spec.selector === undefined
    ? ['spec.selector is required']
    : selectorProblems(
      spec.selector,
      'spec.selector'
    )
  problems.push(...selectorIssues)
  const template = spec.template
  let labels: Record<string, string> = {}
  let annotations: Record<string, string> | undefined
  let podSpec: Record<string, unknown> = {}
  if (!isRecord(template)) {
    problems.push('spec.template is required')
  } else {
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
  }
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
      selector: spec.selector as LabelSelector,
      template: { metadata: { labels, ...(annotations !== undefined ? { annotations } : {}) }, spec: podSpec }
    }
  }
}
