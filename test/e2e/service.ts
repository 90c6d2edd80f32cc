// The service under test as the tier runs it: a build of jobhooks (the checkout's, or a release's
// folder from test/e2e/previous-release.sh) as a Node process on 127.0.0.1, with the Node options
// of the image's command and of the Deployment's NODE_OPTIONS, ready once /readyz answers 200.
import { join } from 'node:path'
import { probeStatus, waitFor, type Process } from './processes.js'

/** What the tier lends a service: its files and a way to start processes it stops and reaps. */
export interface ServiceHost {
  logDir: string
  kubeconfig: string
  /** The hook token's file, when the tier made a token. */
  tokenFile?: string
  /** Starts a process the tier stops by PID at the end, and its reaper if the test dies. */
  start: (name: string, command: string, args: string[], env: NodeJS.ProcessEnv) => Process
  /** Settings of the scenario file for every service it starts. */
  serviceEnv?: NodeJS.ProcessEnv
}

export interface ServiceOptions {
  /** A log file's name in the tier's folder. */
  name: string
  port: number
  /** The folder of a build (dist/src/server.js beneath it); the checkout's when absent. */
  build?: string
  /** Settings on top of the tier's (a token file, TLS files). */
  env?: NodeJS.ProcessEnv
}

/** A running service. */
export interface Service {
  /** Its base URL, http or https as its TLS settings say. */
  readonly url: string
  /** What runs: "checkout", "release <dir>", or "image <name>" (test/e2e/image-service.ts). */
  readonly what: string
  /** Its process ID on this machine (its memory is read from /proc). */
  readonly pid: number | undefined
  readonly running: boolean
  /** SIGTERM, as the kubelet ends a pod: it finishes what it is answering. */
  stop: () => Promise<void>
  /** SIGKILL at once, as an OOM kill or a lost node would. */
  kill: () => Promise<void>
}

const ROOT = join(import.meta.dirname, '..', '..')

/** The settings every service of the tier runs with, `env` on top. */
export function serviceEnv (host: ServiceHost, port: number, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    KUBECONFIG: host.kubeconfig,
    ...(host.tokenFile !== undefined ? { AUTH_TOKEN_FILE: host.tokenFile } : {}),
    ...host.serviceEnv,
    ...env,
  }
}

/** Starts the build of `options` as a Node process; resolves once it is ready. */
export async function startProcessService (host: ServiceHost, options: ServiceOptions): Promise<Service> {
  const build = options.build ?? ROOT
  const env = serviceEnv(host, options.port, options.env)
  const child = host.start(
    options.name,
    process.execPath,
    ['--max-semi-space-size=64', '--max-old-space-size=384', join(build, 'dist', 'src', 'server.js')],
    { ...process.env, ...env }
  )
  const url = `${env.TLS_CERT_FILE !== undefined ? 'https' : 'http'}://127.0.0.1:${options.port}`
  await waitUntilReady(url, () => child.running)
  return {
    url,
    what: options.build === undefined ? 'checkout' : `release ${options.build}`,
    get pid () {
      return child.child.pid
    },
    get running () {
      return child.running
    },
    stop: async () => {
      await child.stop()
    },
    kill: async () => {
      await child.killNow()
    },
  }
}

/**
 * Waits until GET /readyz of `url` answers 200 (over HTTPS the certificate is not checked, as the kubelet's probe does
 * not).
 */
export async function waitUntilReady (url: string, running: () => boolean, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `jobhooks /readyz at ${url}`,
    async () => {
      if (!running()) throw new Error('the service exited')
      return (await probeStatus(`${url}/readyz`).catch(() => undefined)) === 200 ? true : undefined
    },
    timeoutMs,
    100
  )
}

/** The version that answers at `url`, from jobhooks_build_info on /metrics. */
export async function versionAt (url: string): Promise<string | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return /^jobhooks_build_info\{[^}]*version="([^"]+)"/m.exec(text)?.[1]
}
