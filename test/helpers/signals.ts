// The chart's signals as the tests read them: kube-state-metrics' CustomResourceStateMetrics
// configuration (charts/jobhooks/files/kube-state-metrics.yaml), where each path it reads resolves
// on an object, and the metrics it exports. The unit tier holds it to the statuses the hooks answer
// on the fixtures (test/charts/signals.test.ts), the end-to-end tier to objects of a real API
// server (test/e2e/examples.e2e.ts): a path that resolves on none would be a series that never
// appears, and kube-state-metrics says so only in its log.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'

export const CHART_FILES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'charts', 'jobhooks', 'files')

export function chartFile (name: string): string {
  return readFileSync(join(CHART_FILES, name), 'utf8')
}

type Path = Array<string | number>

interface EachConfig {
  path?: Path
  valueFrom?: Path
  labelName?: string
  list?: string[]
  labelsFromPath?: Record<string, Path>
  nilIsZero?: boolean
}

export interface MetricConfig {
  name: string
  commonLabels?: Record<string, string>
  labelsFromPath?: Record<string, Path>
  each: { type: 'Gauge' | 'StateSet' | 'Info', gauge?: EachConfig, stateSet?: EachConfig, info?: EachConfig }
}

export interface ResourceConfig {
  groupVersionKind: { group: string, version: string, kind: string }
  metricNamePrefix: string
  labelsFromPath: Record<string, Path>
  metrics: MetricConfig[]
}

export function ksmResources (text = chartFile('kube-state-metrics.yaml')): ResourceConfig[] {
  const config = parse(text)
  if (config?.kind !== 'CustomResourceStateMetrics') throw new Error('not a CustomResourceStateMetrics configuration')
  return config.spec.resources
}

/** The full name of a metric of a resource, as kube-state-metrics exports it. */
export function metricName (resource: ResourceConfig, metric: MetricConfig): string {
  return `${resource.metricNamePrefix}_${metric.name}`
}

export function eachOf (metric: MetricConfig): EachConfig {
  const each = { Gauge: metric.each.gauge, StateSet: metric.each.stateSet, Info: metric.each.info }[metric.each.type]
  if (each === undefined) throw new Error(`${metric.name}: no settings for type ${metric.each.type}`)
  return each
}

/** The labels a metric's series carry, and the values of those whose values the configuration fixes. */
export function metricLabels (resource: ResourceConfig, metric: MetricConfig): Map<string, Set<string> | undefined> {
  const each = eachOf(metric)
  const labels = new Map<string, Set<string> | undefined>()
  for (const name of Object.keys({ ...resource.labelsFromPath, ...metric.labelsFromPath, ...each.labelsFromPath })) {
    labels.set(name, undefined)
  }
  if (each.labelName !== undefined) labels.set(each.labelName, new Set(each.list))
  for (const [name, value] of Object.entries(metric.commonLabels ?? {})) {
    labels.set(name, new Set([...(labels.get(name) ?? []), value]))
  }
  return labels
}

/** Every metric the configuration exports, by name, with its labels (metrics of one name merged). */
export function ksmMetrics (resources = ksmResources()): Map<string, Map<string, Set<string> | undefined>> {
  const metrics = new Map<string, Map<string, Set<string> | undefined>>()
  for (const resource of resources) {
    for (const metric of resource.metrics) {
      const name = metricName(resource, metric)
      const merged = metrics.get(name) ?? new Map<string, Set<string> | undefined>()
      for (const [label, values] of metricLabels(resource, metric)) {
        const known = merged.get(label)
        merged.set(label, values === undefined || (merged.has(label) && known === undefined)
          ? undefined
          : new Set([...(known ?? []), ...values]))
      }
      metrics.set(name, merged)
    }
  }
  return metrics
}

function resolve (value: unknown, path: Path): unknown {
  return path.reduce<unknown>(
    (v, key) => (v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[key] : undefined),
    value
  )
}

const present = (value: unknown): boolean => value !== undefined && value !== null

/** What kube-state-metrics can make a gauge's value of: a number, a boolean, or an RFC 3339 time. */
function gaugeValueProblem (value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return undefined
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    return undefined
  }
  return `${JSON.stringify(value)} is not a number or an RFC 3339 time`
}

/** One path the configuration reads, named for messages: `jobhooks_jobflow_step_info: status.jobs[].phase`. */
export interface PathCheck {
  key: string
  /** The values it reads on an object (none where it does not resolve). */
  read: (object: unknown) => unknown[]
  /** What is wrong with a value it read, if anything (a StateSet's value missing from its list). */
  problem?: (value: unknown) => string | undefined
  /** The path of a count kube-state-metrics reads as 0 where it is absent (nilIsZero). */
  zeroWhenAbsent?: Path
}

const dotted = (path: Path): string => path.join('.')

/** The paths one metric reads: its base path, and the value and labels relative to each element of it. */
function metricPaths (resource: ResourceConfig, metric: MetricConfig): PathCheck[] {
  const name = metricName(resource, metric)
  const each = eachOf(metric)
  const base = each.path ?? []
  const elements = (object: unknown): unknown[] => {
    const value = resolve(object, base)
    if (!present(value)) return []
    return Array.isArray(value) ? value : [value]
  }
  const inner = Array.isArray(base) && base.length > 0 ? `${dotted(base)}[].` : ''
  const checks: PathCheck[] = [{
    key: `${name}: ${dotted(base)}`,
    read: object => base.length === 0 ? [object] : elements(object),
    ...(each.nilIsZero === true && each.valueFrom === undefined ? { zeroWhenAbsent: base } : {}),
    problem: metric.each.type === 'StateSet'
      ? v => (each.list ?? []).includes(v as string) ? undefined : `${JSON.stringify(v)} is not in its list`
      : metric.each.type === 'Gauge' && each.valueFrom === undefined ? gaugeValueProblem : undefined
  }]
  if (each.valueFrom !== undefined) {
    const from = each.valueFrom
    checks.push({
      key: `${name}: ${inner}${dotted(from)}`,
      read: object => elements(object).map(e => resolve(e, from)).filter(present),
      problem: gaugeValueProblem
    })
  }
  for (const [label, path] of Object.entries({ ...metric.labelsFromPath, ...each.labelsFromPath })) {
    checks.push({
      key: `${name}: label ${label} from ${inner}${dotted(path)}`,
      read: object => elements(object).map(e => resolve(e, path)).filter(present)
    })
  }
  return checks
}

/** Every path the configuration reads on objects of `kind`, its resource-wide labels first. */
export function pathChecks (resource: ResourceConfig): PathCheck[] {
  const labels = Object.entries(resource.labelsFromPath).map(([label, path]): PathCheck => ({
    key: `${resource.metricNamePrefix}: label ${label} from ${dotted(path)}`,
    read: object => [resolve(object, path)].filter(present)
  }))
  return [...labels, ...resource.metrics.flatMap(m => metricPaths(resource, m))]
}

/**
 * For each path of `resource`, the problems found on `objects`: `never resolves` when it resolves on
 * none of them (but for a count read as 0 when absent that `absentOk` admits), and every value it
 * read that the metric could not use.
 */
export function unresolvedPaths (
  resource: ResourceConfig,
  objects: readonly unknown[],
  absentOk: (path: Path) => boolean = () => false
): string[] {
  const problems: string[] = []
  for (const check of pathChecks(resource)) {
    const values = objects.flatMap(o => check.read(o))
    const admitted = check.zeroWhenAbsent !== undefined && absentOk(check.zeroWhenAbsent)
    if (values.length === 0 && !admitted) problems.push(`${check.key}: never resolves`)
    for (const value of values) {
      const problem = check.problem?.(value)
      if (problem !== undefined) problems.push(`${check.key}: ${problem}`)
    }
  }
  return [...new Set(problems)]
}

/**
 * Whether the served version of a CRD declares `path`: the API server drops every field its schema
 * does not, so a path outside it never resolves on a real object.
 */
export function schemaDeclares (crd: any, path: Path): boolean {
  const version = crd.spec.versions.find((v: any) => v.served === true && v.storage === true)
  let schema = version?.schema?.openAPIV3Schema
  for (const key of path) {
    schema = typeof key === 'number' ? schema?.items : schema?.properties?.[key]
    if (schema === undefined) return false
  }
  return true
}
