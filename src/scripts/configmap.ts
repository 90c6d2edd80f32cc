// Rendering referenced scripts into a ConfigMap child and running them from a Job's pod.
import type { PodSpec, Container } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { fitName, shortHash, MAX_OBJECT_NAME } from '../k8s/names.js'
import { isScriptName, type ScriptLibrary } from './library.js'

export const SCRIPTS_MOUNT_PATH = '/scripts'
export const SCRIPTS_VOLUME = 'jobhooks-scripts'
/** 0554: readable and executable by owner and group, readable by others. JSON has no octal. */
export const SCRIPTS_MODE = 0o554
/** A ConfigMap holds at most 1 MiB; leave room for its metadata. */
export const MAX_SCRIPTS_BYTES = 1_000_000

/** `script: {name, args}` on a flow: run `/scripts/<name> args…` in one of the pod's containers. */
export interface ScriptRef {
  name: string
  args: string[]
  /** The container that runs it; the first container when unset. */
  container?: string
}

/** Reads a `script` field; a string describes what is wrong with it. */
export function parseScriptRef (value: unknown, where: string): ScriptRef | string {
  if (!isRecord(value)) return `${where}: script must be an object with a name`
  const { name, args, container } = value
  if (typeof name !== 'string' || !isScriptName(name)) {
    return `${where}: script name ${JSON.stringify(name)} is not a plain file name`
  }
  if (args !== undefined && !(Array.isArray(args) && args.every(a => typeof a === 'string'))) {
    return `${where}: script args must be a list of strings`
  }
  if (container !== undefined && typeof container !== 'string') return `${where}: script container must be a name`
  return { name, args: args ?? [], ...(container !== undefined ? { container } : {}) }
}

/** Reads `spec.scripts` (name → content); a string list describes what is wrong with it. */
export function parseInlineScripts (value: unknown): Record<string, string> | string[] {
  if (value === undefined) return {}
  if (!isRecord(value)) return ['spec.scripts must map script names to their content']
  const problems: string[] = []
  for (const [name, content] of Object.entries(value)) {
    if (!isScriptName(name)) problems.push(`spec.scripts: ${JSON.stringify(name)} is not a plain file name`)
    if (typeof content !== 'string') problems.push(`spec.scripts.${name}: content must be a string`)
  }
  return problems.length > 0 ? problems : value as Record<string, string>
}

/**
 * The content of every referenced script: `spec.scripts` first (the resource's own scripts win
 * over shipped ones of the same name), then the shipped library.
 */
export function resolveScripts (
  names: Iterable<string>,
  inline: Record<string, string>,
  library: ScriptLibrary
): { scripts: Record<string, string>; problems: string[] } {
  const scripts: Record<string, string> = {}
  const problems: string[] = []
  for (const name of [...new Set(names)].sort()) {
    const content = Object.hasOwn(inline, name) ? inline[name] : library.get(name)
    if (content === undefined) {
      const shipped = [...library.keys()].join(', ') || 'none'
      problems.push(`unknown script ${JSON.stringify(name)}: not in spec.scripts and not shipped (shipped: ${shipped})`)
    } else {
      scripts[name] = content
    }
  }
  const bytes = Object.entries(scripts).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0)
  if (bytes > MAX_SCRIPTS_BYTES) {
    problems.push(`the referenced scripts take ${bytes} bytes; a ConfigMap holds at most ${MAX_SCRIPTS_BYTES}`)
  }
  return { scripts, problems }
}

/**
 * The ConfigMap child holding `scripts`. Its name carries a hash of the content, so an edited
 * script gets a new ConfigMap and a Job that already runs keeps the version it started with.
 */
export function scriptsConfigMap (
  ownerName: string,
  namespace: string | undefined,
  labels: Record<string, string>,
  scripts: Record<string, string>
): KubeObject {
  const digest = shortHash(JSON.stringify(Object.entries(scripts).sort(([a], [b]) => (a < b ? -1 : 1))))
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: fitName(`${ownerName}-scripts-${digest}`, MAX_OBJECT_NAME),
      ...(namespace !== undefined ? { namespace } : {}),
      labels
    },
    immutable: true,
    data: scripts
  }
}

/**
 * Mounts the scripts ConfigMap at /scripts in every container of `pod` and makes the script
 * container run `/scripts/<name>` with the script's args. Returns a problem, or undefined.
 */
export function runScriptInPod (pod: PodSpec, configMapName: string, script: ScriptRef): string | undefined {
  const target = script.container === undefined
    ? pod.containers[0]
    : pod.containers.find(c => c.name === script.container)
  if (target === undefined) {
    return `script ${script.name}: no container ${JSON.stringify(script.container ?? '')} to run it in`
  }
  pod.volumes = [
    ...(pod.volumes ?? []).filter(v => v.name !== SCRIPTS_VOLUME),
    { name: SCRIPTS_VOLUME, configMap: { name: configMapName, defaultMode: SCRIPTS_MODE } }
  ]
  for (const container of allContainers(pod)) {
    const mounts = container.volumeMounts ?? []
    if (!mounts.some(m => m.mountPath === SCRIPTS_MOUNT_PATH)) {
      container.volumeMounts = [...mounts, { name: SCRIPTS_VOLUME, mountPath: SCRIPTS_MOUNT_PATH, readOnly: true }]
    }
  }
  target.command = [`${SCRIPTS_MOUNT_PATH}/${script.name}`]
  target.args = script.args
  return undefined
}

/** Init containers and containers: everything in a pod that runs the user's images. */
export function allContainers (pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...pod.containers]
}

/** The names of the scripts ConfigMaps a pod mounts (a Job keeps the one it started with). */
export function mountedScriptsConfigMaps (pod: unknown): string[] {
  if (!isRecord(pod) || !Array.isArray(pod.volumes)) return []
  return pod.volumes
    .filter(
      (v): v is { name: string; configMap: { name: string } } =>
        isRecord(v) && v.name === SCRIPTS_VOLUME && isRecord(v.configMap) && typeof v.configMap.name === 'string'
    )
    .map(v => v.configMap.name)
}
