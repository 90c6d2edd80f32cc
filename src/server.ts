// The process: read settings, load the shipped scripts, listen, and on SIGTERM stop taking new
// requests while the hooks in flight finish.
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { readConfig, type Config } from './config.js'
import { loadScriptLibrary } from './scripts/library.js'
import { loadCredentials, selectExecutor } from './effects/executor.js'

export interface Running {
  app: FastifyInstance
  /** Resolves once the server has closed after a signal. */
  closed: Promise<void>
}

export interface SignalSource {
  once: (signal: 'SIGTERM' | 'SIGINT', listener: () => void) => unknown
}

/**
 * Builds the app and listens. `env` says where cluster credentials are (KUBECONFIG, or the
 * service account in a Pod): with them effects are applied, without them only recorded.
 */
export async function startServer (config: Config, signals: SignalSource = process, env: NodeJS.ProcessEnv = process.env): Promise<Running> {
  const scripts = loadScriptLibrary(config.hooksDir)
  const { executor, message, level } = selectExecutor(await loadCredentials(env), { concurrency: config.effectsConcurrency, budgetMs: config.effectsBudgetMs })
  const app = await buildApp({
    logger: { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    scripts,
    effects: executor
  })
  app.log.info({ scripts: [...scripts.keys()], hooksDir: config.hooksDir }, 'shipped scripts loaded')
  app.log[level]({ effects: executor.mode }, message)
  await app.listen({ port: config.port, host: config.host })

  const closed = new Promise<void>((resolve, reject) => {
    const shutdown = (signal: string) => () => {
      app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing hooks in flight')
      const timer = setTimeout(() => reject(new Error(`hooks still running ${config.shutdownGraceMs} ms after ${signal}`)), config.shutdownGraceMs)
      timer.unref()
      app.close().then(() => { clearTimeout(timer); resolve() }, reject)
    }
    signals.once('SIGTERM', shutdown('SIGTERM'))
    signals.once('SIGINT', shutdown('SIGINT'))
  })
  return { app, closed }
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
