// The app factory: a fastify instance configured the way the service runs, and the plugins, one
// per concern, registered on it (src/plugins/). Building it never listens; server.ts does that.
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { DEFAULT_BODY_LIMIT } from './protocol/body-reader.js'
import { defaultInflightBudget } from './protocol/inflight.js'
import { DEFAULT_WAIT_BUDGET_MS, WorkQueue, type WorkQueueOptions } from './protocol/work-queue.js'
import type { KindHooks } from './protocol/hooks.js'
import type { ScriptLibrary } from './scripts/library.js'
import type { EffectExecutor } from './effects/types.js'
import { RecordingExecutor } from './effects/dry-run.js'
import type { HookGuard } from './trust/guard.js'
import { ALL_KINDS } from './controllers/kinds.js'
import { setUpWire, type HandedOver } from './plugins/wire.js'
import { metricsPlugin } from './plugins/metrics.js'
import { callsPlugin } from './plugins/calls.js'
import { lifecyclePlugin } from './plugins/lifecycle.js'
import { hookRoutes } from './plugins/hook-routes.js'
import { createHookThread, type ThreadOptions } from './thread/setup.js'
import { defaultMemoLimit } from './protocol/object-memo.js'

export { DEFAULT_BODY_LIMIT }
export { hookPaths } from './plugins/calls.js'

export interface AppOptions {
  logger?: FastifyServerOptions['logger']
  bodyLimit?: number
  scripts?: ScriptLibrary
  /** The hooks' clock; tests pass a fixed one. */
  clock?: () => Date
  /** Applies the hooks' effects; without one, effects are only recorded (dry-run). */
  effects?: EffectExecutor
  kinds?: readonly KindHooks[]
  /** Who may call the hooks (src/trust/guard.ts); without one, anyone may (local runs, tests). */
  guard?: HookGuard
  /** Options for an HTTPS server (src/trust/tls.ts); without them, plain HTTP. */
  https?: import('node:https').ServerOptions
  /** Bytes of sync and finalize requests in flight at most (src/protocol/inflight.ts); default: 3/4 of heap. */
  inflightBudget?: number
  /**
   * Expected milliseconds of queued work past which a call is shed (src/protocol/work-queue.ts);
   * tests may fix the rate too. Default: DEFAULT_WAIT_BUDGET_MS, the rate learnt.
   */
  queue?: WorkQueueOptions
  /**
   * Run sync and finalize hooks on a thread of their own (src/thread/hook-thread.ts), as the
   * server does unless HOOK_THREAD=0; without it, on the app's thread (most tests).
   */
  thread?: ThreadOptions
  /** Build request bodies whole instead of only what the hooks read: tests compare the two. */
  keepWhole?: boolean
  /** Bytes the app's memo of built objects may hold (docs/wire.md); 0 turns it off. Default: defaultMemoLimit(). */
  memoBytes?: number
}

/**
 * A fastify instance configured the way the service runs: the body limit, one log line per hook
 * call instead of fastify's two per request, and any body read as JSON, built only as far as the
 * route's `reads` shape says (src/plugins/wire.ts) unless `keepWhole`. The benchmark's echo
 * route runs on one of these too, keeping the body whole, since it must give it back.
 */
export function createFastify (
  options: Pick<AppOptions, 'logger' | 'bodyLimit' | 'https' | 'keepWhole' | 'memoBytes'> & {
    /** Bodies read by another thread (the hook thread's app, src/thread-main.ts). */
    handedOver?: HandedOver
  } = {}
) {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const app = Fastify({
    // The HTTPS server is a node:https server; fastify's types want the choice at compile time.
    ...(options.https !== undefined ? { https: options.https } as object : {}),
    logger: options.logger ?? false,
    bodyLimit,
    logController: new LogController({ disableRequestLogging: true }),
    // A hook that takes longer than Metacontroller's timeout is useless anyway.
    requestTimeout: 30_000
  }).withTypeProvider<TypeBoxTypeProvider>()
  setUpWire(app, {
    bodyLimit,
    ...(options.keepWhole !== undefined ? { keepWhole: options.keepWhole } : {}),
    ...(options.memoBytes !== undefined ? { memoBytes: options.memoBytes } : {}),
    ...(options.handedOver !== undefined ? { handedOver: options.handedOver } : {})
  })
  return app
}

/** The service's app: the wire, then metrics, the calls' record, lifecycle, and the hook routes. */
export async function buildApp (options: AppOptions = {}): Promise<FastifyInstance> {
  const threaded = options.thread !== undefined
  // With a hook thread, the memo is the thread's: this app builds only customize bodies.
  const app = createFastify(threaded ? { ...options, memoBytes: 0 } : options)
  const kinds = options.kinds ?? ALL_KINDS
  const effects = options.effects ?? new RecordingExecutor(options.clock !== undefined ? { clock: options.clock } : {})
  app.decorate('effects', effects)
  // On the root, not in the hook routes' context: the queue is the app's state, read by its tests and metrics.
  app.decorate('workQueue', new WorkQueue(options.queue ?? { waitBudgetMs: DEFAULT_WAIT_BUDGET_MS }))
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const scripts = options.scripts ?? new Map<string, string>()
  const thread = options.thread === undefined
    ? undefined
    : createHookThread(options.thread, { ...options, bodyLimit, scripts, effectsMode: effects.mode }, message => {
      app.log.error(message)
    })
  // Queued: avvio loads them in this order on ready(), each after those it depends on.
  void app.register(metricsPlugin)
  void app.register(callsPlugin, { kinds })
  void app.register(lifecyclePlugin)
  void app.register(hookRoutes, {
    kinds,
    scripts,
    clock: options.clock ?? (() => new Date()),
    ...(options.guard !== undefined ? { guard: options.guard } : {}),
    inflightBudget: options.inflightBudget ?? defaultInflightBudget(options.memoBytes ?? defaultMemoLimit()),
    bodyLimit,
    ...(thread !== undefined ? { thread } : {})
  })
  if (thread !== undefined) {
    app.addHook('onReady', async () => { app.metrics.watchMemo(thread.memo) })
    app.addHook('onClose', async () => { await thread.close() })
    await thread.ready()
  }
  await app.ready()
  return app
}
