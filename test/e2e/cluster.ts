// The real control plane of the end-to-end tier: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok (nodes and pod lifecycles), Metacontroller v4.17.2 and our service, all on
// 127.0.0.1 with a temporary folder, every process stopped by PID when the run ends however it
// ends. Or, with E2E_KUBECONFIG, a cluster the user already has.
//
// Our CompositeControllers are applied as the manifests have them (hook version v2, the bearer
// token of Secret jobhooks-system/jobhooks-hook-token as each webhook's authorization), except
// that their hooks call the service under test at its 127.0.0.1 URL instead of the Service.
import { spawn, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse, parseAllDocuments, stringify } from 'yaml'
import { freePort, Process, run, signal, waitFor, type Result } from './processes.js'
import { imagePlan, removeContainers, startImageService, type ContainerHost } from './image-service.js'
import { startProcessService, type Service } from './service.js'
import { hasKueueApi, kueueFromEnv, startKueue } from './kueue.js'
import { startArgoIfBuilt, type RunningArgo } from './argo.js'

export { run, waitFor, type Result } from './processes.js'
export type { Service } from './service.js'

export const ROOT = join(import.meta.dirname, '..', '..')

export interface Cluster {
  /** Which Metacontroller runs the hooks ("existing cluster" when it is the user's). */
  metacontroller: string
  /** Which Kueue admits queued Jobs, when the scenario file asked for it and there is one. */
  kueue?: string
  /** Which Argo Workflows controller runs Workflows, when the scenario file asked for it; else why not. */
  argo?: RunningArgo | { skipped: string }
  /** Metacontroller's /metrics (its work queues), when the tier runs it. */
  metacontrollerMetricsUrl?: string
  /** A node pods can be pinned to, when the tier made its own. */
  nodeName?: string
  /** The base URL of the service under test (hooks under /hooks/...), when the tier runs it. */
  hooksUrl?: string
  /**
   * The hook token, when the tier made it: in Secret jobhooks-system/jobhooks-hook-token (key
   * `token`), which Metacontroller sends as `Authorization: Bearer <token>`, and in the service's
   * AUTH_TOKEN_FILE.
   */
  token?: string
  /** The kubeconfig file kubectl uses: an admin's credentials for the tier's API server. */
  kubeconfig: string
  kubectl: (args: string[], input?: string) => Promise<Result>
  /** kubectl with `args`, started and left running (a watch): stdout piped, the caller stops it. */
  spawnKubectl: (args: string[]) => ChildProcess
  /** Where the processes' logs are, to look at after a failure. */
  logDir?: string
  /** What startService runs at hooksUrl: "checkout", or "image jobhooks:<version>" (E2E_SERVICE=image). */
  service?: string
  /** The process ID of the service under test, when the tier runs it (its memory is read from /proc). */
  servicePid?: number
  /**
   * The process ID of the tier's running process started as `name` (the name of its log:
   * kube-apiserver, etcd, metacontroller, workflow-controller...), for figures read from /proc.
   */
  pidOf?: (name: string) => number | undefined
  /** When the tier runs the service: kills it at once (SIGKILL, as an OOM kill or a lost node would). */
  killService?: () => Promise<void>
  /**
   * Starts the service (again after killService) as the tier starts it, with `env` on top of
   * that (a token file, TLS files); resolves once it is ready.
   */
  startService?: (env?: NodeJS.ProcessEnv) => Promise<void>
  /**
   * Starts a service of `build` (a release's folder, test/e2e/previous-release.sh; the checkout
   * when absent) on a free port of its own, as the tier starts its service, for a scenario that
   * puts it behind hooksUrl itself (a proxy: TierOptions.serviceAtHooksUrl false). Stopped with
   * everything else at the end, if the scenario has not.
   */
  startBackend?: (options?: { build?: string; env?: NodeJS.ProcessEnv }) => Promise<Service>
  stop: () => Promise<void>
}

interface Binaries {
  bin: string
  metacontroller: string
  metacontrollerVersion: string
  metacontrollerCrds: string
}

function binariesFromEnv (): Binaries {
  const need = (name: string): string => {
    const value = process.env[name]
    if (value === undefined || value === '') throw new Error(`${name} is not set: run the tier with npm run e2e`)
    return value
  }
  return {
    bin: need('E2E_BIN'),
    metacontroller: need('E2E_METACONTROLLER'),
    metacontrollerVersion: need('E2E_METACONTROLLER_VERSION'),
    metacontrollerCrds: need('E2E_METACONTROLLER_CRDS'),
  }
}

/** The cluster of E2E_KUBECONFIG, or a new control plane built by npm run e2e. */
/** What a scenario file may change of the tier it starts: settings of the service under test. */
export interface TierOptions {
  serviceEnv?: NodeJS.ProcessEnv
  /**
   * What of jobhooks the tier installs before Metacontroller starts: `manifests` (the default)
   * applies the CRDs and CompositeControllers of manifests/, makes the token Secret and starts the
   * service; `none` leaves all of it to the scenario file (the Helm chart's, say), which starts
   * the service itself with startService.
   */
  jobhooks?: 'manifests' | 'none'
  /**
   * With `manifests`: false leaves hooksUrl free for the scenario (a proxy in front of services
   * it starts with startBackend) instead of starting the service there.
   */
  serviceAtHooksUrl?: boolean
  /** Installs and runs Kueue (test/e2e/kueue.ts); on E2E_KUBECONFIG, finds whether the cluster has it. */
  kueue?: boolean
  /** Installs and runs Argo's workflow controller (test/e2e/argo.ts); not on E2E_KUBECONFIG. */
  argo?: boolean
}

export async function clusterFromEnv (options: TierOptions = {}): Promise<Cluster> {
  const kubeconfig = process.env.E2E_KUBECONFIG
  if (kubeconfig !== undefined && kubeconfig !== '') {
    const cluster = existingCluster(kubeconfig)
    const kueue = options.kueue === true && (await hasKueueApi(cluster.kubectl))
    const argo = options.argo === true ? { argo: { skipped: 'the tier runs Argo only on its own cluster' } } : {}
    return kueue ? { ...cluster, ...argo, kueue: "the cluster's Kueue" } : { ...cluster, ...argo }
  }
  return await startCluster(binariesFromEnv(), options)
}

/** A cluster that already runs Metacontroller and jobhooks (kubectl apply -k manifests). */
function existingCluster (kubeconfig: string): Cluster {
  return {
    metacontroller: 'existing cluster',
    kubeconfig,
    kubectl: async (args, input) => await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { input }),
    spawnKubectl: (args) =>
      spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
    stop: async () => {},
  }
}

/**
 * A detached watcher that kills every process group listed in `pidFile` and removes every
 * container listed in `containersFile` (E2E_SERVICE=image: a killed podman client leaves its
 * container running) once this process is gone, however it went: a test runner's timeout or a
 * SIGKILL leaves no handler time to run.
 */
function startReaper (pidFile: string, containersFile: string, dir: string): ChildProcess {
  const keep = process.env.E2E_KEEP !== undefined
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done
for pid in $(cat '${pidFile}' 2>/dev/null); do kill -TERM -"$pid" 2>/dev/null; done
sleep 3
for pid in $(cat '${pidFile}' 2>/dev/null); do kill -KILL -"$pid" 2>/dev/null; done
for name in $(cat '${containersFile}' 2>/dev/null); do podman rm -f --ignore "$name" >/dev/null 2>&1; done
${keep ? '' : `rm -rf '${dir}'`}`
  const reaper = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' })
  reaper.unref()
  return reaper
}

export async function startCluster (binaries: Binaries, options: TierOptions = {}): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'jobhooks-e2e-'))
  const pidFile = join(dir, 'pids')
  const containersFile = join(dir, 'containers')
  writeFileSync(pidFile, '')
  const reaper = startReaper(pidFile, containersFile, dir)
  const containers: string[] = []
  const processes: Process[] = []
  const killAll = (): void => {
    for (const p of processes) p.kill()
  }
  // Whatever ends the run (a failed assertion, a timeout, Ctrl-C), nothing is left running: these
  // handlers stop things at once where they can, the reaper does it where they cannot.
  process.once('exit', killAll)
  for (const name of ['SIGINT', 'SIGTERM', 'SIGALRM', 'SIGHUP'] as const) {
    process.once(name, () => {
      killAll()
      process.exit(128 + (name === 'SIGINT' ? 2 : name === 'SIGTERM' ? 15 : name === 'SIGALRM' ? 14 : 1))
    })
  }

  const start = (name: string, command: string, args: string[], env?: NodeJS.ProcessEnv): Process => {
    const p = new Process(name, command, args, dir, env)
    processes.push(p)
    if (p.child.pid !== undefined) appendFileSync(pidFile, `${p.child.pid}\n`)
    return p
  }
  const bin = (name: string): string => join(binaries.bin, name)
  const kubeconfig = join(dir, 'kubeconfig')
  const kubectl = async (args: string[], input?: string): Promise<Result> =>
    await run(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], { input })
  const spawnKubectl = (args: string[]): ChildProcess =>
    spawn(bin('kubectl'), ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let argo: RunningArgo | { skipped: string } | undefined
  const stop = async (): Promise<void> => {
    if (argo !== undefined && 'writer' in argo) await argo.writer.stop()
    for (const p of [...processes].reverse()) await p.stop()
    await removeContainers(containers)
    process.removeListener('exit', killAll)
    if (reaper.pid !== undefined) signal(reaper.pid, 'SIGKILL')
    if (process.env.E2E_KEEP === undefined) rmSync(dir, { recursive: true, force: true })
  }

  try {
    const [etcdPort, peerPort, apiPort, kcmPort, schedPort, kwokPort, mcPort, mcHealthPort, hooksPort] =
      await Promise.all(Array.from({ length: 9 }, freePort))
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const saKey = join(dir, 'sa.key')
    writeFileSync(saKey, privateKey.export({ type: 'pkcs1', format: 'pem' }))
    writeFileSync(join(dir, 'tokens.csv'), 'e2e-admin-token,admin,admin,system:masters\n')
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          { name: 'e2e', cluster: { server: `https://127.0.0.1:${apiPort}`, 'insecure-skip-tls-verify': true } },
        ],
        users: [{ name: 'admin', user: { token: 'e2e-admin-token' } }],
        contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'admin' } }],
        'current-context': 'e2e',
      })
    )

    const etcd = `http://127.0.0.1:${etcdPort}`
    start('etcd', bin('etcd'), [
      '--data-dir',
      join(dir, 'etcd'),
      '--listen-client-urls',
      etcd,
      '--advertise-client-urls',
      etcd,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `default=http://127.0.0.1:${peerPort}`,
      '--unsafe-no-fsync',
    ])
    await waitFor('etcd', async () => ((await fetch(`${etcd}/health`)).ok ? true : undefined), 30_000)

    // TaintNodesByCondition gives every new Node the node.kubernetes.io/not-ready:NoSchedule taint,
    // which only the node lifecycle controller takes off again; that controller would also mark
    // kwok's Nodes unreachable (they renew no Lease) and evict their pods. Without the plugin a
    // Ready kwok Node is schedulable, as it is on a real cluster once the controller saw it Ready.
    start('kube-apiserver', bin('kube-apiserver'), [
      '--etcd-servers',
      etcd,
      '--bind-address',
      '127.0.0.1',
      '--advertise-address',
      '127.0.0.1',
      '--secure-port',
      String(apiPort),
      '--cert-dir',
      join(dir, 'pki'),
      '--service-cluster-ip-range',
      '10.0.0.0/24',
      '--service-account-issuer',
      'https://kubernetes.default.svc.cluster.local',
      '--service-account-key-file',
      saKey,
      '--service-account-signing-key-file',
      saKey,
      '--token-auth-file',
      join(dir, 'tokens.csv'),
      '--authorization-mode',
      'RBAC',
      '--disable-admission-plugins',
      'ServiceAccount,TaintNodesByCondition',
      '--allow-privileged=true',
      '--endpoint-reconciler-type',
      'none',
    ])
    await waitFor(
      'kube-apiserver /readyz',
      async () => ((await kubectl(['get', '--raw', '/readyz'])).code === 0 ? true : undefined),
      90_000
    )

    start('kube-controller-manager', bin('kube-controller-manager'), [
      '--kubeconfig',
      kubeconfig,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      String(kcmPort),
      '--leader-elect=false',
      '--service-account-private-key-file',
      saKey,
      '--use-service-account-credentials=false',
      '--controllers',
      'namespace,garbagecollector,serviceaccount,serviceaccount-token,job,ttl-after-finished,deployment,' +
        'replicaset,disruption',
    ])
    start('kube-scheduler', bin('kube-scheduler'), [
      '--kubeconfig',
      kubeconfig,
      '--bind-address',
      '127.0.0.1',
      '--secure-port',
      String(schedPort),
      '--leader-elect=false',
    ])
    start('kwok', bin('kwok'), [
      '--kubeconfig',
      kubeconfig,
      '--config',
      join(ROOT, 'test', 'e2e', 'kwok-stages.yaml'),
      '--manage-nodes-with-annotation-selector',
      'kwok.x-k8s.io/node=fake',
      '--server-address',
      `127.0.0.1:${kwokPort}`,
    ])
    const nodeName = 'kwok-node-0'
    await addKwokNode(kubectl, nodeName)
    // Namespaces get their default ServiceAccount from the controller manager; wait for it.
    await waitFor('the default ServiceAccount', async () =>
      (await kubectl(['get', 'serviceaccount', 'default'])).code === 0 ? true : undefined
    )

    // The hook token, made as the README tells users to make it (README, "Install on a cluster"),
    // and the same token in a file for the service (the Deployment mounts the Secret there).
    const installed = options.jobhooks !== 'none'
    const token = randomBytes(32).toString('hex')
    const tokenFile = join(dir, 'hook-token')
    if (installed) {
      writeFileSync(tokenFile, token, { mode: 0o600 })
      await kubectlOk(kubectl, ['create', 'namespace', HOOK_TOKEN_SECRET.namespace])
      await kubectlOk(kubectl, [
        '-n',
        HOOK_TOKEN_SECRET.namespace,
        'create',
        'secret',
        'generic',
        HOOK_TOKEN_SECRET.name,
        `--from-literal=${HOOK_TOKEN_SECRET.key}=${token}`,
      ])
    }

    const hooksUrl = `http://127.0.0.1:${hooksPort}`
    const trackContainer = (name: string): void => {
      containers.push(name)
      appendFileSync(containersFile, `${name}\n`)
    }
    const host: ContainerHost = {
      logDir: dir,
      kubeconfig,
      ...(installed ? { tokenFile } : {}),
      start,
      trackContainer,
      ...(options.serviceEnv !== undefined ? { serviceEnv: options.serviceEnv } : {}),
    }
    // The image runs where the tier hands the service its own token at hooksUrl: the chart's
    // scenarios (jobhooks: 'none') hand it files of their own, which stay on the host, and the
    // upgrade's run releases behind a proxy, as processes.
    const image = installed && options.serviceAtHooksUrl !== false ? await imagePlan() : undefined
    let starts = 0
    const startService = async (env: NodeJS.ProcessEnv = {}): Promise<Service> => {
      const settings = { name: starts++ === 0 ? 'jobhooks' : `jobhooks-${starts}`, port: hooksPort as number, env }
      return image !== undefined
        ? await startImageService(host, image, settings)
        : await startProcessService(host, settings)
    }
    let service = installed && options.serviceAtHooksUrl !== false ? await startService() : undefined

    await apply(kubectl, readFileSync(binaries.metacontrollerCrds, 'utf8'))
    if (installed) {
      for (const file of readdirSync(join(ROOT, 'manifests', 'crds'))) {
        await apply(kubectl, readFileSync(join(ROOT, 'manifests', 'crds', file), 'utf8'))
      }
    }
    await kubectlOk(kubectl, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all'])
    // After the Secret: Metacontroller v4.17.2 reads a webhook's authorization when it starts a
    // CompositeController's controller, and again only when the CompositeController's spec changes.
    if (installed) await applyControllers(kubectl, ROOT, hooksUrl)

    const kueue = options.kueue === true ? kueueFromEnv() : undefined
    if (options.kueue === true) {
      if (kueue === undefined) throw new Error('E2E_KUEUE is not set: run the tier with npm run e2e')
      await startKueue({ dir, kubeconfig, kubectl, start }, kueue)
    }
    if (options.argo === true) argo = await startArgoIfBuilt({ dir, kubeconfig, kubectl, start })

    // Flags of pkg/cmd/metacontroller (v4.17.2); --kubeconfig is controller-runtime's. Its
    // metrics and health-probe servers listen on 127.0.0.1 only; pprof is off by default. Its
    // API rate is raised as docs/operations.md, "Large clusters", says to for thousands of children
    // (default 5 per second).
    const mc = start(
      'metacontroller',
      binaries.metacontroller,
      [
        '--kubeconfig',
        kubeconfig,
        '--discovery-interval=1s',
        '--client-go-qps=100',
        '--client-go-burst=200',
        `--metrics-address=127.0.0.1:${mcPort}`,
        `--health-probe-bind-address=127.0.0.1:${mcHealthPort}`,
      ],
      { ...process.env, KUBECONFIG: kubeconfig }
    )
    await waitFor(
      'Metacontroller /readyz',
      async () => {
        if (!mc.running) throw new Error('Metacontroller exited')
        return (await fetch(`http://127.0.0.1:${mcHealthPort}/readyz`)).ok ? true : undefined
      },
      30_000
    )

    return {
      metacontroller: `Metacontroller ${binaries.metacontrollerVersion}`,
      metacontrollerMetricsUrl: `http://127.0.0.1:${mcPort}/metrics`,
      ...(kueue !== undefined ? { kueue: `Kueue ${kueue.version}` } : {}),
      ...(argo !== undefined ? { argo } : {}),
      nodeName,
      hooksUrl,
      ...(installed ? { token } : {}),
      kubeconfig,
      kubectl,
      spawnKubectl,
      logDir: dir,
      // A scenario that fronts hooksUrl itself says what runs behind it.
      ...(options.serviceAtHooksUrl !== false
        ? { service: image !== undefined ? `image ${image.image}` : 'checkout' }
        : {}),
      get servicePid () {
        return service?.pid
      },
      pidOf: (name: string) => [...processes].reverse().find((p) => p.name === name && p.running)?.child.pid,
      killService: async () => {
        await service?.kill()
      },
      startService: async (env?: NodeJS.ProcessEnv) => {
        if (service?.running === true) throw new Error('the service is running')
        service = await startService(env)
      },
      startBackend: async ({ build, env } = {}) =>
        await startProcessService(host, {
          name: `backend-${starts++}`,
          port: await freePort(),
          ...(build !== undefined ? { build } : {}),
          ...(env !== undefined ? { env } : {}),
        }),
      stop,
    }
  } catch (error) {
    const logs = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => `--- ${f}\n${readFileSync(join(dir, f), 'utf8').split('\n').slice(-15).join('\n')}`)
    await stop()
    throw new Error(
      `the control plane did not start: ${error instanceof Error ? error.message : String(error)}\n${logs.join('\n')}`
    )
  }
}

/** The Secret our CompositeControllers' webhooks take their bearer token from (manifests/controllers). */
export const HOOK_TOKEN_SECRET = { name: 'jobhooks-hook-token', namespace: 'jobhooks-system', key: 'token' } as const

/**
 * Applies the CompositeControllers of `root` (the checkout, or a release's build: what a helm
 * upgrade or rollback applies) with every hook pointed at `hooksUrl`, and checks that the API
 * server kept every field of them.
 */
export async function applyControllers (kubectl: Cluster['kubectl'], root: string, hooksUrl: string): Promise<void> {
  for (const file of readdirSync(join(root, 'manifests', 'controllers'))) {
    const controller = parse(
      pointHooksAt(readFileSync(join(root, 'manifests', 'controllers', file), 'utf8'), hooksUrl)
    )
    await apply(kubectl, stringify(controller))
    // What the API server kept: a field Metacontroller's CRD does not know would be pruned
    // without a word (an authorization block lost so would mean calls without the token; an
    // update strategy lost, JobFlow's Jobs OnDelete, unable to be suspended).
    const stored = parse(
      await kubectlOk(kubectl, ['get', 'compositecontroller', controller.metadata.name, '-o', 'yaml'])
    )
    const lost = [
      ...missing(controller.spec.hooks, stored.spec?.hooks, 'spec.hooks'),
      ...(controller.spec.childResources ?? []).flatMap((child: unknown, i: number) =>
        missing(child, stored.spec?.childResources?.[i], `spec.childResources[${i}]`)
      ),
      ...(stored.spec?.resyncPeriodSeconds === controller.spec.resyncPeriodSeconds
        ? []
        : ['spec.resyncPeriodSeconds']),
    ]
    if (lost.length > 0) {
      throw new Error(`CompositeController ${String(controller.metadata.name)} was stored without ${lost.join(', ')}`)
    }
  }
}

/**
 * Our CompositeController with its hooks at the service under test instead of the in-cluster
 * Service: each webhook's `service` and `path` become `url` (base URL + path); everything else
 * (`version`, `timeout`, `authorization`, ...) stays as the manifest has it.
 */
export function pointHooksAt (manifest: string, baseUrl: string): string {
  const controller = parse(manifest)
  for (const [name, hook] of Object.entries<Record<string, any>>(controller.spec.hooks)) {
    const { service, path, ...rest } = hook.webhook ?? {}
    if (service === undefined || typeof path !== 'string') {
      throw new Error(
        `${String(controller.metadata?.name)}: hook ${name} does not reach the service by service and path`
      )
    }
    hook.webhook = { url: `${baseUrl}${path}`, ...rest }
  }
  return stringify(controller)
}

/** The paths of `expected` whose values `actual` does not have (extra fields in `actual` are fine). */
function missing (expected: unknown, actual: unknown, at: string): string[] {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [at]
    return Object.entries(expected).flatMap(([key, value]) =>
      missing(value, (actual as Record<string, unknown>)[key], `${at}.${key}`)
    )
  }
  return JSON.stringify(expected) === JSON.stringify(actual) ? [] : [at]
}

async function kubectlOk (kubectl: Cluster['kubectl'], args: string[], input?: string): Promise<string> {
  const result = await kubectl(args, input)
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

/**
 * A Node that kwok plays the kubelet of (test/e2e/kwok-stages.yaml makes it Ready), once Ready,
 * with `spec` (taints, unschedulable) and `labels` besides its own.
 */
export async function addKwokNode (
  kubectl: Cluster['kubectl'],
  name: string,
  spec: Record<string, unknown> = {},
  labels: Record<string, string> = {}
): Promise<void> {
  await apply(
    kubectl,
    stringify({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        annotations: { 'kwok.x-k8s.io/node': 'fake' },
        labels: { ...labels, 'kubernetes.io/hostname': name, type: 'kwok' },
      },
      spec,
      status: {
        allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
        capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      },
    })
  )
  await waitFor(`node ${name} Ready`, async () => {
    const ready = await kubectl(['get', 'node', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
    return ready.stdout === 'True' ? true : undefined
  })
}

/** `kubectl apply -f -` of every document in `yaml`. */
export async function apply (kubectl: Cluster['kubectl'], yaml: string, namespace?: string): Promise<string> {
  const docs = parseAllDocuments(yaml)
    .map((d) => d.toJS())
    .filter((d) => d !== null)
  return await kubectlOk(
    kubectl,
    ['apply', ...(namespace !== undefined ? ['-n', namespace] : []), '-f', '-'],
    docs.map((d) => stringify(d)).join('---\n')
  )
}
