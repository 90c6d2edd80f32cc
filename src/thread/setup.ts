// The hook thread as an app asks for it (src/app.ts): what it is built from, where its log lines
// go, and its watchdog's deadline.
import type { FastifyServerOptions } from 'fastify'
import type { ScriptLibrary } from '../scripts/library.js'
import { HookThread, type WatchdogClock } from './hook-thread.js'
import type { ThreadSetup } from './messages.js'

/** How an app runs its sync and finalize hooks on the hook thread (src/thread/hook-thread.ts). */
export interface ThreadOptions {
  /** The module that exports the kinds, and the export's name: default, every kind (src/controllers/kinds.ts). */
  kindsModule?: string
  kindsExport?: string
  /** How long the thread's event loop may go unanswered while calls are in it; default 10 s. */
  deadlineMs?: number
  /** A fixed clock for the hooks (tests). */
  now?: Date
  /** What the kinds' module reads of workerData (tests). */
  extra?: unknown
  /** The watchdog's clock (tests). */
  clock?: WatchdogClock
}

/** What of the app's own options the thread is built from. */
export interface ThreadAppOptions {
  logger?: FastifyServerOptions['logger']
  bodyLimit: number
  memoBytes?: number
  keepWhole?: boolean
  scripts: ScriptLibrary
  effectsMode: 'cluster' | 'dry-run'
}

export function createHookThread (
  options: ThreadOptions, app: ThreadAppOptions, warn: (message: string) => void
): HookThread {
  const { logger } = app
  const level = typeof logger === 'object' && logger !== null && 'level' in logger ? String(logger.level) : 'info'
  const stream = typeof logger === 'object' && logger !== null && 'stream' in logger
    ? logger.stream as NodeJS.WritableStream
    : process.stdout
  const setup: ThreadSetup = {
    kindsModule: options.kindsModule ?? new URL('../controllers/kinds.js', import.meta.url).href,
    kindsExport: options.kindsExport ?? 'ALL_KINDS',
    scripts: [...app.scripts],
    bodyLimit: app.bodyLimit,
    ...(app.memoBytes !== undefined ? { memoBytes: app.memoBytes } : {}),
    ...(app.keepWhole !== undefined ? { keepWhole: app.keepWhole } : {}),
    // No logger, or `false`: the thread logs nothing either.
    ...(logger !== undefined && logger !== false ? { logLevel: level } : {}),
    effectsMode: app.effectsMode,
    ...(options.now !== undefined ? { now: options.now.toISOString() } : {}),
    ...(options.extra !== undefined ? { extra: options.extra } : {})
  }
  return new HookThread({
    setup,
    log: line => { stream.write(line) },
    warn,
    ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {})
  })
}
