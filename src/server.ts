// The process: read settings, load the shipped scripts, decide who may call the hooks, listen
// (HTTP or HTTPS), and on SIGTERM answer 503 to new calls while those accepted get their whole
// answers (src/plugins/lifecycle.ts).
import type { Server as HttpsServer } from 'node:https'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { readConfig, type Config } from './config.js'
import { loadScriptLibrary } from './scripts/library.js'
import { loadCredentials, selectExecutor } from './effects/executor.js'
import { decideTrust } from './trust/policy.js'
import { createHookGuard } from './trust/guard.js'
import { loadTls } from './trust/tls.js'

export interface Running {
  app: FastifyInstance
  /** Resolves once the server has closed after a signal, every accepted answer written: then the process may exit. */
  closed: Promise<void>
}

export interface SignalSource {
  once: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => unknown
}

/**
 * Builds the app and listens. `env` says where cluster credentials are (KUBECONFIG, or the
 * service account in a Pod): with them effects are applied, without them only recorded. Logs go
 * to standard output, or to `logStream` (tests).
 */
export async function startServer (
  config: Config,
  signals: SignalSource = process,
  env: NodeJS.ProcessEnv = process.env,
  logStream?: NodeJS.WritableStream
): Promise<Running> {
  const scripts = loadScriptLibrary(config.hooksDir)
  const credentials = await loadCredentials(env)
  // Before anything listens: in a cluster, no hooks that anyone could call.
  const trust = decideTrust(config, credentials.source !== 'none')
  const effectsOptions = { concurrency: config.effectsConcurrency, budgetMs: config.effectsBudgetMs }
  const { executor, message, level } = selectExecutor(credentials, effectsOptions)
  const tls = config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined
    ? loadTls({
      certFile: config.tlsCertFile,
      keyFile: config.tlsKeyFile,
      ...(config.tlsClientCaFile !== undefined ? { clientCaFile: config.tlsClientCaFile } : {})
    })
    : undefined
  // The guard logs through the app's logger, which exists only once the app does.
  const log = { info: (msg: string) => app.log.info(msg), error: (msg: string) => app.log.error(msg) }
  const guard = trust.guarded
    ? createHookGuard({
      ...(config.authTokenFile !== undefined ? { tokenFile: config.authTokenFile } : {}),
      clientCertificate: config.tlsClientCaFile !== undefined,
      reloadMs: config.credentialsReloadMs,
      log
    })
    : undefined
  const app: FastifyInstance = await buildApp({
    logger: { level: config.logLevel, ...(logStream !== undefined ? { stream: logStream } : {}) },
    bodyLimit: config.bodyLimit,
    ...(config.inflightBudget !== undefined ? { inflightBudget: config.inflightBudget } : {}),
    queue: { waitBudgetMs: config.waitBudgetMs },
    ...(config.hookThread ? { thread: { deadlineMs: config.hookDeadlineMs } } : {}),
    ...(config.objectMemoBytes !== undefined ? { memoBytes: config.objectMemoBytes } : {}),
    scripts,
    effects: executor,
    ...(guard !== undefined ? { guard } : {}),
    ...(tls !== undefined ? { https: tls.options } : {})
  })
  app.log.info({ scripts: [...scripts.keys()], hooksDir: config.hooksDir }, 'shipped scripts loaded')
  app.log[level]({ effects: executor.mode }, message)
  const unguarded = 'hook calls are not authenticated: no cluster credentials, so effects are only recorded'
  if (trust.warning !== undefined) app.log.warn(trust.warning)
  else app.log.info(guard?.description ?? unguarded)
  const tlsWatch = tls?.watch(app.server as unknown as HttpsServer, config.credentialsReloadMs, log)
  // The app is ready, its hooks fixed: the server's own close stops the watchers.
  app.server.once('close', () => { guard?.close(); tlsWatch?.stop() })
  await app.listen({ port: config.port, host: config.host })
  const tlsMode = tls === undefined ? 'off' : config.tlsClientCaFile !== undefined ? 'mutual' : 'on'
  app.log.info({ tls: tlsMode }, `serving ${tls === undefined ? 'HTTP' : 'HTTPS'}`)
  return { app, closed: closeOnSignal(app, config.shutdownGraceMs, signals) }
}

/** Resolves once the app has closed after SIGTERM or SIGINT; rejects when its hooks outlast `graceMs`. */
async function closeOnSignal (app: FastifyInstance, graceMs: number, signals: SignalSource): Promise<void> {
  return await new Promise<void>((resolve, reject) => {
    const shutdown = (signal: string) => () => {
      app.log.info({ signal, graceMs }, 'shutting down: finishing hooks in flight')
      const late = (): void => { reject(new Error(`hooks still running ${graceMs} ms after ${signal}`)) }
      const timer = setTimeout(late, graceMs)
      timer.unref()
      app.close().then(() => { clearTimeout(timer); resolve() }, reject)
    }
    signals.once('SIGTERM', shutdown('SIGTERM'))
    signals.once('SIGINT', shutdown('SIGINT'))
  })
}

async function main (): Promise<void> {
  const running = await startServer(readConfig())
  try {
    await running.closed
    running.app.log.info('stopped')
    process.exit(0)
  } catch (error) {
    running.app.log.error({ err: error }, 'forced exit')
    process.exit(1)
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
