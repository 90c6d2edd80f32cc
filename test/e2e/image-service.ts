// E2E_SERVICE=image: the service under test runs from the built image (npm run image, tagged
// jobhooks:<version>) with podman on the host's network, with the container settings of the
// chart's Deployment as `helm template` renders it (test/image/run-args.ts turns them into podman
// arguments as the kubelet would apply them), so chart, image and hooks are proven together. On
// top: the tier's port, HOST 127.0.0.1, its token in the token Secret's place, and its kubeconfig
// (which points at 127.0.0.1) mounted read-only with KUBECONFIG set to it.
import { chmodSync, copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { containerRun } from '../image/run-args.js'
import { run, waitFor } from './processes.js'
import { waitUntilReady, type Service, type ServiceHost, type ServiceOptions } from './service.js'

const ROOT = join(import.meta.dirname, '..', '..')
const KUBECONFIG_IN_CONTAINER = '/var/run/jobhooks-e2e/kubeconfig'

/** The image and the Deployment whose container settings it runs with. */
export interface ImagePlan {
  image: string
  deployment: any
}

/**
 * With E2E_SERVICE=image, the plan to run the image; undefined otherwise, and, said on stderr,
 * when podman does not work or the image is not built (the tier then runs the process as before).
 */
export async function imagePlan (): Promise<ImagePlan | undefined> {
  if (process.env.E2E_SERVICE !== 'image') return undefined
  const version = String(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version)
  const image = `jobhooks:${version}`
  const fallBack = (why: string): undefined => {
    process.stderr.write(
      `e2e: E2E_SERVICE=image, but ${why}: the service runs from the checkout as a process instead\n`
    )
    return undefined
  }
  const info = await run('podman', ['info']).catch(() => undefined)
  if (info?.code !== 0) return fallBack('podman does not work here (podman info failed)')
  if ((await run('podman', ['image', 'inspect', image])).code !== 0) {
    return fallBack(`podman has no image ${image} (build it with npm run image)`)
  }
  const helm = process.env.E2E_HELM ?? 'helm'
  const rendered = await run(helm, [
    'template',
    'jobhooks',
    join(ROOT, 'charts', 'jobhooks'),
    '--namespace',
    'jobhooks-system',
    '--set',
    'image.repository=jobhooks',
    '--set',
    `image.tag=${version}`,
  ])
  if (rendered.code !== 0) throw new Error(`helm template of the chart failed: ${rendered.stderr}`)
  // YAML 1.1, as the API server reads it (a Secret volume's mode 0440 is octal).
  const deployment = parseAllDocuments(rendered.stdout, { version: '1.1' })
    .map((d) => d.toJS())
    .find((o) => o?.kind === 'Deployment')
  if (deployment === undefined) throw new Error('helm template of the chart rendered no Deployment')
  return { image, deployment }
}

/** What starting a container needs of the tier besides a service's: the reaper's list of containers. */
export interface ContainerHost extends ServiceHost {
  /** Names a container the tier removes (podman rm -f) when it stops, or its reaper when the test dies. */
  trackContainer: (name: string) => void
}

/** Starts the image as the chart's Deployment runs it; resolves once it is ready. */
export async function startImageService (
  host: ContainerHost,
  plan: ImagePlan,
  options: ServiceOptions
): Promise<Service> {
  const files = Object.keys(options.env ?? {}).filter((key) => key.endsWith('_FILE'))
  if (files.length > 0 || host.tokenFile === undefined) {
    throw new Error(
      'E2E_SERVICE=image runs the service with the tier\'s token and kubeconfig only, ' +
        'not files of the scenario\'s own ' +
        `(${files.join(', ') || 'no tier token'}): run this file without E2E_SERVICE=image`
    )
  }
  const name = `jobhooks-e2e-${process.pid}-${options.name}`
  const container = containerRun(plan.deployment, {
    image: plan.image,
    port: options.port,
    name,
    tokenDir: tokenFolder(host.logDir, host.tokenFile),
    extraEnv: { ...stringsOf(host.serviceEnv), ...stringsOf(options.env), KUBECONFIG: KUBECONFIG_IN_CONTAINER },
    // The image is local: never look for it in a registry.
    extraArgs: ['--pull=never', '--volume', `${host.kubeconfig}:${KUBECONFIG_IN_CONTAINER}:ro`],
  })
  host.trackContainer(name)
  const client = host.start(options.name, 'podman', container.args, process.env)
  const url = `${container.probeScheme}://127.0.0.1:${options.port}`
  await waitUntilReady(url, () => client.running, 120_000)
  const pid = Number((await run('podman', ['inspect', '--format', '{{.State.Pid}}', name])).stdout.trim())
  const gone = async (): Promise<void> => {
    await client.exit()
    await run('podman', ['rm', '-f', '--ignore', name])
  }
  return {
    url,
    what: `image ${plan.image}`,
    pid: Number.isInteger(pid) && pid > 0 ? pid : undefined,
    get running () {
      return client.running
    },
    // As the kubelet ends a pod: SIGTERM, then SIGKILL after the Deployment's grace period.
    stop: async () => {
      await run('podman', ['stop', '--time', String(container.terminationGraceSeconds), name])
      await gone()
    },
    kill: async () => {
      await run('podman', ['kill', '--signal', 'KILL', name])
      await gone()
    },
  }
}

/**
 * The token in a folder of its own, as the Secret volume holds it: readable by the container's
 * user (uid 1000), which the tier's own copy (0600, root's) is not.
 */
function tokenFolder (logDir: string, tokenFile: string): string {
  const folder = join(logDir, 'image-token')
  mkdirSync(folder, { recursive: true, mode: 0o755 })
  copyFileSync(tokenFile, join(folder, 'token'))
  chmodSync(folder, 0o755)
  chmodSync(join(folder, 'token'), 0o444)
  return folder
}

function stringsOf (env: NodeJS.ProcessEnv | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined)
  )
}

/** Removes the containers named, whatever their state (for the end of the tier). */
export async function removeContainers (names: string[]): Promise<void> {
  if (names.length > 0) {
    await waitFor(
      'the containers removed',
      async () => ((await run('podman', ['rm', '-f', '--ignore', ...names])).code === 0 ? true : undefined),
      30_000,
      1_000
    )
  }
}
