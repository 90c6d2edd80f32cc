// `globalParams`: values a JobFlow or DaemonJob merges into every Job it creates. The Job's own
// template wins wherever both set something, and nothing the template says is dropped.
import type { EnvVar, PodSpec, PodTemplateSpec, Volume, VolumeMount } from 'kubernetes-types/core/v1.js'
import { isRecord } from '../../k8s/types.js'
import { allContainers } from '../../scripts/configmap.js'

export interface GlobalParams {
  nodeName?: string
  env: EnvVar[]
  labels: Record<string, string>
  annotations: Record<string, string>
}

export const NO_GLOBAL_PARAMS: GlobalParams = { env: [], labels: {}, annotations: {} }

/** Reads `globalParams`, collecting what is wrong with it into `problems`. */
export function parseGlobalParams (value: unknown, problems: string[]): GlobalParams {
  if (value === undefined) return NO_GLOBAL_PARAMS
  if (!isRecord(value)) {
    problems.push('spec.globalParams must be an object')
    return NO_GLOBAL_PARAMS
  }
  const params: GlobalParams = {
    env: [],
    labels: stringMap(value.labels, 'spec.globalParams.labels', problems),
    annotations: stringMap(value.annotations, 'spec.globalParams.annotations', problems)
  }
  if (value.nodeName !== undefined) {
    if (typeof value.nodeName === 'string') params.nodeName = value.nodeName
    else problems.push('spec.globalParams.nodeName must be a string')
  }
  params.env = objectList<EnvVar>(value.env, 'spec.globalParams.env', problems)
    .filter(e => typeof e.name === 'string')
  return params
}

function stringMap (value: unknown, where: string, problems: string[]): Record<string, string> {
  if (value === undefined) return {}
  if (isRecord(value) && Object.values(value).every(v => typeof v === 'string')) return value as Record<string, string>
  problems.push(`${where} must map names to strings`)
  return {}
}

/** A list of objects (volumes, mounts, env vars); anything else is a problem. */
export function objectList<T> (value: unknown, where: string, problems: string[]): T[] {
  if (value === undefined || value === null) return []
  if (Array.isArray(value) && value.every(isRecord)) return value as T[]
  problems.push(`${where} must be a list of objects`)
  return []
}

/**
 * Merges the global params into a pod template (a fresh copy the caller owns):
 * labels and annotations under the template's own, `nodeName` where the template sets none, and
 * env vars before each container's own (so its own can refer to them with `$(NAME)`), skipping
 * names the container defines itself.
 */
export function applyGlobalParams (template: PodTemplateSpec, params: GlobalParams): void {
  const metadata = template.metadata ?? {}
  template.metadata = metadata
  if (Object.keys(params.labels).length > 0) metadata.labels = { ...params.labels, ...metadata.labels }
  if (Object.keys(params.annotations).length > 0) {
    metadata.annotations = {
      ...params.annotations,
      ...metadata.annotations
    }
  }
  const pod = template.spec
  if (pod === undefined) return
  const { nodeName } = params
  if (nodeName !== undefined && nodeName !== '' && pod.nodeName === undefined) pod.nodeName = nodeName
  if (params.env.length === 0) return
  for (const container of allContainers(pod)) {
    const own = container.env ?? []
    const ownNames = new Set(own.map(e => e.name))
    container.env = [...params.env.filter(e => !ownNames.has(e.name)), ...own]
  }
}

/**
 * Appends `vars` to the environment of every container (init containers too), each unless the
 * container already sets that name: the template's own value wins.
 */
export function appendEnv (pod: PodSpec, vars: readonly EnvVar[]): void {
  if (vars.length === 0) return
  for (const container of allContainers(pod)) {
    const own = container.env ?? []
    const ownNames = new Set(own.map(e => e.name))
    container.env = [...own, ...vars.filter(v => !ownNames.has(v.name))]
  }
}

/**
 * Adds shared volumes to the pod (a volume the template already names is kept as it is) and
 * mounts them in every container that has nothing mounted at that path yet.
 */
export function applySharedVolumes (template: PodTemplateSpec, volumes: Volume[], mounts: VolumeMount[]): void {
  const pod = template.spec
  if (pod === undefined) return
  if (volumes.length > 0) {
    const existing = new Set((pod.volumes ?? []).map(v => v.name))
    pod.volumes = [...(pod.volumes ?? []), ...volumes.filter(v => !existing.has(v.name))]
  }
  if (mounts.length === 0) return
  for (const container of allContainers(pod)) {
    const own = container.volumeMounts ?? []
    const paths = new Set(own.map(m => m.mountPath))
    const added = mounts.filter(m => !paths.has(m.mountPath) && paths.add(m.mountPath))
    if (added.length > 0) container.volumeMounts = [...own, ...added]
  }
}
