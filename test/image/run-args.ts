// The `podman run` (or `docker run`) arguments that start an image the way the kubelet starts a
// Deployment's container: its security context (read-only root filesystem, user and groups,
// capabilities, no privilege escalation), its environment, its emptyDir volumes as tmpfs, its
// Secret volumes read-only from folders the caller gives, its memory limit, its command and
// args. Plus what a test needs to drive it as the kubelet would: the probes' paths and the
// termination grace period.
//
// What differs on purpose: the container shares the host's network (`--network=host`) and
// listens on the port and address the caller picks (PORT and HOST), so that tests reach it on
// 127.0.0.1 without a fixed port; and no service account is mounted and no KUBERNETES_* variable
// is set, since a test runs it without cluster credentials unless it passes them itself.
import { execFileSync } from 'node:child_process'
import { parseAllDocuments } from 'yaml'
import type { Deployment } from 'kubernetes-types/apps/v1.js'
import type { Container, EnvVar, PodSpec, Probe, SecurityContext, Volume } from 'kubernetes-types/core/v1.js'

export interface ContainerRunOptions {
  image: string
  /** The port the service listens on (PORT), on the host's network. */
  port: number
  /** The address it listens on (HOST); 127.0.0.1 unless told. */
  host?: string
  /** A folder holding the token Secret's files (`token`): mounted where the token Secret's volume is. */
  tokenDir: string
  /** Folders for the pod's other Secret volumes, by volume name (e.g. `tls`). */
  secretDirs?: Record<string, string>
  /** The container's name, for `podman rm -f <name>` and `podman kill`. */
  name: string
  /** Variables set after the Deployment's own, so they win (KUBECONFIG, LOG_LEVEL, ...). */
  extraEnv?: Record<string, string>
  /** Arguments put before the image (more mounts, --detach, ...). */
  extraArgs?: string[]
  /** The Deployment's container to run; `jobhooks`, or the only one, by default. */
  container?: string
  tool?: 'podman' | 'docker'
  /** podman's OCI runtime: runc when it is installed (crun refuses on some hosts); null for the default. */
  runtime?: string | null
  /** nofile and nproc limits for podman, whose defaults may exceed the host's hard limit. */
  ulimit?: number
}

export interface ContainerRun {
  /** Everything after the tool's name: `run`, the options, the image, then the container's args. */
  args: string[]
  /** The environment the container gets, as passed. */
  env: Record<string, string>
  readinessPath: string
  livenessPath: string
  /** http or https, from the readiness probe. */
  probeScheme: 'http' | 'https'
  terminationGraceSeconds: number
  /** The preStop exec command, which the kubelet runs in the container before SIGTERM, within the grace period. */
  preStopCommand?: string[]
  /** The folder each Secret volume is mounted at, by volume name. */
  secretMounts: Record<string, string>
}

/** The arguments and facts to run `deployment`'s container as its pod runs it. */
export function containerRun (deployment: Deployment, options: ContainerRunOptions): ContainerRun {
  const pod = deployment.spec?.template.spec
  if (pod === undefined) throw new Error('the Deployment has no pod template')
  const container = pickContainer(pod, options.container)
  const tool = options.tool ?? 'podman'
  const env = environment(container, deployment, options)
  const volumes = volumeArgs(pod, container, options)
  const args = [
    'run',
    '--rm',
    '--name',
    options.name,
    '--network=host',
    ...toolArgs(tool, options),
    ...securityArgs(pod, container, tool),
    ...volumes.args,
    ...memoryArgs(container),
    ...Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]),
    ...(options.extraArgs ?? []),
    ...(container.command !== undefined ? ['--entrypoint', JSON.stringify(container.command)] : []),
    options.image,
    ...(container.args ?? []),
  ]
  const readiness = httpGet(container.readinessProbe, 'readinessProbe')
  return {
    args,
    env,
    readinessPath: readiness.path,
    livenessPath: httpGet(container.livenessProbe, 'livenessProbe').path,
    probeScheme: readiness.scheme,
    terminationGraceSeconds: pod.terminationGracePeriodSeconds ?? 30,
    ...(container.lifecycle?.preStop?.exec?.command !== undefined
      ? { preStopCommand: container.lifecycle.preStop.exec.command }
      : {}),
    secretMounts: volumes.secretMounts,
  }
}

/** The first Deployment of a YAML stream (a manifest file, `helm template` output). */
export function deploymentFrom (yamlText: string, name?: string): Deployment {
  const found = parseAllDocuments(yamlText)
    .map((d) => d.toJS() as Deployment | null)
    .find((d) => d?.kind === 'Deployment' && (name === undefined || d.metadata?.name === name))
  if (found == null) throw new Error(`no Deployment${name !== undefined ? ` named ${name}` : ''} in the YAML given`)
  return found
}

function pickContainer (pod: PodSpec, wanted: string | undefined): Container {
  const containers = pod.containers
  const found =
    wanted !== undefined
      ? containers.find((c) => c.name === wanted)
      : (containers.find((c) => c.name === 'jobhooks') ?? (containers.length === 1 ? containers[0] : undefined))
  if (found === undefined) {
    throw new Error(`no container ${wanted ?? 'jobhooks'} among ${containers.map((c) => c.name).join(', ')}`)
  }
  return found
}

/** The Deployment's variables in order, then PORT and HOST for this run, then the caller's. */
function environment (
  container: Container,
  deployment: Deployment,
  options: ContainerRunOptions
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const variable of container.env ?? []) env[variable.name] = envValue(variable, deployment, options)
  return { ...env, PORT: String(options.port), HOST: options.host ?? '127.0.0.1', ...(options.extraEnv ?? {}) }
}

/** A literal value, or the few downward-API fields a test can answer; anything else is refused, not guessed. */
function envValue (variable: EnvVar, deployment: Deployment, options: ContainerRunOptions): string {
  if (variable.valueFrom === undefined) return variable.value ?? ''
  const field = variable.valueFrom.fieldRef?.fieldPath
  if (field === 'metadata.name') return options.name
  if (field === 'metadata.namespace') return deployment.metadata?.namespace ?? 'default'
  if (field === 'status.podIP' || field === 'status.hostIP') return options.host ?? '127.0.0.1'
  throw new Error(
    `env ${variable.name}: valueFrom ${JSON.stringify(variable.valueFrom)} cannot be resolved outside a cluster`
  )
}

function toolArgs (tool: 'podman' | 'docker', options: ContainerRunOptions): string[] {
  return tool === 'docker' ? [] : podmanHostArgs(options)
}

/**
 * What `podman run` needs on hosts where its defaults fail: runc when installed (crun refuses
 * where cgroups are hybrid), and nofile/nproc limits within the host's hard limits (the default
 * exceeds them: "operation not permitted"). For any `podman run` a test makes.
 */
export function podmanHostArgs (options: Pick<ContainerRunOptions, 'runtime' | 'ulimit'> = {}): string[] {
  const runtime = options.runtime === undefined ? (installed('runc') ? 'runc' : null) : options.runtime
  const limit = options.ulimit ?? defaultUlimit()
  return [
    ...(runtime !== null ? ['--runtime', runtime] : []),
    '--ulimit',
    `nofile=${limit}:${limit}`,
    '--ulimit',
    `nproc=${limit}:${limit}`,
  ]
}

/** The pod's security context, overridden field by field by the container's, as the kubelet merges them. */
function securityArgs (pod: PodSpec, container: Container, tool: 'podman' | 'docker'): string[] {
  const context: SecurityContext = { ...pod.securityContext, ...container.securityContext }
  const args: string[] = []
  if (context.readOnlyRootFilesystem === true) {
    // podman mounts tmpfs on /tmp, /run and /var/tmp of a read-only container unless told not
    // to; the kubelet mounts only the pod's volumes.
    args.push('--read-only', ...(tool === 'podman' ? ['--read-only-tmpfs=false'] : []))
  }
  if (context.runAsUser !== undefined) {
    args.push('--user', `${context.runAsUser}${context.runAsGroup !== undefined ? `:${context.runAsGroup}` : ''}`)
  }
  const fsGroup = pod.securityContext?.fsGroup
  if (fsGroup !== undefined) args.push('--group-add', String(fsGroup))
  for (const group of pod.securityContext?.supplementalGroups ?? []) args.push('--group-add', String(group))
  for (const cap of context.capabilities?.drop ?? []) args.push(`--cap-drop=${cap}`)
  for (const cap of context.capabilities?.add ?? []) args.push(`--cap-add=${cap}`)
  if (context.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges')
  return args
}

/** emptyDir volumes as tmpfs (0777, as the kubelet makes them), Secret volumes read-only from the caller's folders. */
function volumeArgs (
  pod: PodSpec,
  container: Container,
  options: ContainerRunOptions
): { args: string[]; secretMounts: Record<string, string> } {
  const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]))
  const tokenVolume = tokenVolumeName(container)
  const args: string[] = []
  const secretMounts: Record<string, string> = {}
  for (const mount of container.volumeMounts ?? []) {
    const volume = volumes.get(mount.name)
    if (volume === undefined) throw new Error(`volumeMount ${mount.name} names no volume of the pod`)
    if (volume.emptyDir !== undefined) {
      const size = volume.emptyDir.sizeLimit !== undefined ? `,size=${bytes(String(volume.emptyDir.sizeLimit))}` : ''
      args.push('--tmpfs', `${mount.mountPath}:rw,mode=1777${size}`)
    } else if (volume.secret !== undefined) {
      const source = mount.name === tokenVolume ? options.tokenDir : options.secretDirs?.[mount.name]
      if (source === undefined) {
        if (volume.secret.optional === true) continue
        throw new Error(`the Secret volume ${mount.name} needs a folder: pass secretDirs.${mount.name}`)
      }
      args.push('--volume', `${source}:${mount.mountPath}:ro`)
      secretMounts[mount.name] = mount.mountPath
    } else {
      throw new Error(
        `volume ${mount.name}: only emptyDir and secret volumes are supported (${describeVolume(volume)})`
      )
    }
  }
  return { args, secretMounts }
}

/** The volume whose mount holds AUTH_TOKEN_FILE: that is where the token Secret is. */
function tokenVolumeName (container: Container): string | undefined {
  const tokenFile = container.env?.find((e) => e.name === 'AUTH_TOKEN_FILE')?.value
  if (tokenFile === undefined) return undefined
  const holders = (container.volumeMounts ?? []).filter((m) => tokenFile.startsWith(m.mountPath.replace(/\/?$/, '/')))
  return holders.sort((a, b) => b.mountPath.length - a.mountPath.length)[0]?.name
}

function memoryArgs (container: Container): string[] {
  const limit = container.resources?.limits?.memory
  return limit === undefined ? [] : ['--memory', String(bytes(String(limit)))]
}

function httpGet (probe: Probe | undefined, which: string): { path: string; scheme: 'http' | 'https' } {
  const get = probe?.httpGet
  if (get === undefined) throw new Error(`the container has no ${which} with httpGet`)
  return { path: get.path ?? '/', scheme: get.scheme === 'HTTPS' ? 'https' : 'http' }
}

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
}

/** A Kubernetes quantity of bytes (64Mi, 1Gi, 500M, 1048576) as a number. */
export function bytes (quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)([kMGT]i?|Ki)?$/.exec(quantity)
  const unit = UNITS[match?.[2] ?? '']
  if (match === null || unit === undefined) throw new Error(`not a quantity of bytes: ${quantity}`)
  return Math.round(Number(match[1]) * unit)
}

function describeVolume (volume: Volume): string {
  return Object.keys(volume)
    .filter((k) => k !== 'name')
    .join(', ')
}

function installed (command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

let hostUlimit: number | undefined

/** 20000, or the host's hard limit on open files or processes when lower (dash's ulimit has no -u: then files only). */
function defaultUlimit (): number {
  const limits = execFileSync('sh', ['-c', 'ulimit -Hn; ulimit -Hu 2>/dev/null || true'], { encoding: 'utf8' }).split(
    '\n'
  )
  hostUlimit ??= Math.min(20000, ...limits.filter((l) => /^\d+$/.test(l)).map(Number))
  return hostUlimit
}
