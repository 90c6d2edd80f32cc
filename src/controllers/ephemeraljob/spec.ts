// Reading an EphemeralJob's spec. Everything that makes it unusable is collected, not thrown:
// the hook reports it in status and injects nothing (law 2).
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../k8s/types.js'
import { isRecord } from '../../k8s/types.js'
import { isDnsLabel } from '../../k8s/names.js'
import { selectorProblems, type LabelSelector } from '../../k8s/selectors.js'
import { optionalWholeNumber, type Parsed } from '../common/parsed.js'

export const DEFAULT_PARALLELISM = 1
export const MAX_PARALLELISM = 10

/** The env var every injected container carries, valued with the EphemeralJob's name (as in the proposal). */
export const JOB_NAME_ENV = 'ephemeraljob'
/**
 * The env var that carries the EphemeralJob's UID: it tells this job's containers from those of
 * an earlier EphemeralJob of the same name (deleted and created again), whose Pods are not ours.
 */
export const JOB_UID_ENV = 'EPHEMERALJOB_UID'

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never']
const MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError']
/** Fields the API server refuses on an ephemeral container. */
const FORBIDDEN_FIELDS = [
  'ports',
  'resources',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'resizePolicy',
  'restartPolicy'
]

export interface EphemeralJobSpec {
  selector: LabelSelector
  /** Most Pods ever injected; undefined: every Pod the selector matches. */
  replicas?: number
  parallelism: number
  containers: EphemeralContainer[]
  ttlSecondsAfterCreated?: number
  ttlSecondsAfterFinished?: number
  activeDeadlineSeconds?: number
  paused: boolean
}

export function parseEphemeralJobSpec (parent: KubeObject): Parsed<EphemeralJobSpec> {
  const spec = parent.spec
  if (!isRecord(spec)) return { ok: false, problems: ['spec is missing'] }
  const problems: string[] = []

  const selector = spec.selector
  if (selector === undefined || selector === null) problems.push('spec.selector is required')
  else problems.push(...selectorProblems(selector, 'spec.selector'))

  const replicas = optionalWholeNumber(spec.replicas, 'spec.replicas', 0, undefined, problems)
  const parallelism = optionalWholeNumber(
    spec.parallelism,
    'spec.parallelism',
    1,
    MAX_PARALLELISM,
    problems
  ) ?? DEFAULT_PARALLELISM
  const ttlSecondsAfterCreated = optionalWholeNumber(
    spec.ttlSecondsAfterCreated,
    'spec.ttlSecondsAfterCreated',
    0,
    undefined,
    problems
  )
  const ttlSecondsAfterFinished = optionalWholeNumber(
    spec.ttlSecondsAfterFinished,
    'spec.ttlSecondsAfterFinished',
    0,
    undefined,
    problems
  )
  const activeDeadlineSeconds = optionalWholeNumber(
    spec.activeDeadlineSeconds,
    'spec.activeDeadlineSeconds',
    1,
    undefined,
    problems
  )
  let paused = false
  if (spec.paused !== undefined && spec.paused !== null) {
    if (typeof spec.paused === 'boolean') paused = spec.paused
    else problems.push('spec.paused must be true or false')
  }

  const containers = parseContainers(spec.template, problems)
  if (containers.length > parallelism) {
    problems.push(`spec.parallelism (${parallelism}) is smaller than the number of ephemeral containers per Pod ` +
      `(${containers.length}): a Pod's containers are injected together, so it could never start`)
  }

  if (problems.length > 0) return { ok: false, problems }
  const value: EphemeralJobSpec = { selector: selector as LabelSelector, parallelism, containers, paused }
  if (replicas !== undefined) value.replicas = replicas
  if (ttlSecondsAfterCreated !== undefined) value.ttlSecondsAfterCreated = ttlSecondsAfterCreated
  if (ttlSecondsAfterFinished !== undefined) value.ttlSecondsAfterFinished = ttlSecondsAfterFinished
  if (activeDeadlineSeconds !== undefined) value.activeDeadlineSeconds = activeDeadlineSeconds
  return { ok: true, value }
}

function parseContainers (template: unknown, problems: string[]): EphemeralContainer[] {
  const list = isRecord(template) ? template.ephemeralContainers : undefined
  if (!Array.isArray(list) || list.length === 0) {
    problems.push('spec.template.ephemeralContainers must list at least one container')
    return []
  }
  const containers: EphemeralContainer[] = []
  const seen = new Set<string>()
  list.forEach((raw, i) => {
    const at = `spec.template.ephemeralContainers[${i}]`
    if (!isRecord(raw)) {
      problems.push(`${at} must be an object`)
      return
    }
    const before = problems.length
    const { name } = raw
    if (typeof name !== 'string' || !isDnsLabel(name)) {
      problems.push(`${at}: name ${JSON.stringify(name)} must be a lowercase RFC 1123 label`)
    } else if (seen.has(name)) {
      problems.push(`${at}: duplicate container name ${JSON.stringify(name)}`)
    } else {
      seen.add(name)
    }
    const label = typeof name === 'string' ? `container ${JSON.stringify(name)}` : at
    if (typeof raw.image !== 'string' || raw.image.trim() === '' || raw.image.trim() !== raw.image) {
      problems.push(
      `${label}: image is required (no surrounding blanks)`
      )
    }
    if (typeof raw.imagePullPolicy !== 'string' || !PULL_POLICIES.includes(raw.imagePullPolicy)) {
      problems.push(
      `${label}: imagePullPolicy is required: one of ${PULL_POLICIES.join(', ')}`
      )
    }
    if (typeof raw.terminationMessagePolicy !== 'string' || !MESSAGE_POLICIES.includes(
      raw.terminationMessagePolicy
    )) problems.push(`${label}: terminationMessagePolicy is required: one of ${MESSAGE_POLICIES.join(', ')}`)
    if (typeof raw.targetContainerName !== 'string' || raw.targetContainerName === '') {
      problems.push(
      `${label}: targetContainerName is required`
      )
    }
    const forbidden = FORBIDDEN_FIELDS.filter(f => raw[f] !== undefined && raw[f] !== null)
    if (forbidden.length > 0) problems.push(`${label}: ephemeral containers cannot have ${forbidden.join(', ')}`)
    if (raw.env !== undefined && raw.env !== null && (!Array.isArray(raw.env) || !raw.env.every(
      e => isRecord(e) && typeof e.name === 'string'
    ))) {
      problems.push(`${label}: env must be a list of {name, value}`)
    }
    if (problems.length === before) containers.push(raw as unknown as EphemeralContainer)
  })
  return containers
}
