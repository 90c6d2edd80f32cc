// The hook routes: sync, finalize and customize of every kind, in a context of their own whose
// onRequest hooks run in this order before the body is read: the credential check, the call's
// record, the in-flight budget. Sync and finalize run on the hook thread when there is one
// (src/plugins/thread-routes.ts), so that no hook holds this thread's event loop; else here, as
// customize always does (it answers a constant). The handlers are in src/plugins/hook-handlers.ts.
import type { FastifyPluginAsync } from 'fastify'
import type { HookName, KindHooks } from '../protocol/hooks.js'
import type { ScriptLibrary } from '../scripts/library.js'
import type { HookGuard } from '../trust/guard.js'
import { credentialsPlugin } from './credentials.js'
import { budgetsPlugin, takeTurn, whileIdle } from './budgets.js'
import { addHookHandlers, type CallPorts, type HookRouteConfig } from './hook-handlers.js'
import { threadRoutes } from './thread-routes.js'
import type { HookThread } from '../thread/hook-thread.js'

export interface HookRoutesOptions {
  kinds: readonly KindHooks[]
  scripts: ScriptLibrary
  /** The hooks' clock. */
  clock: () => Date
  guard?: HookGuard
  /** Bytes of sync and finalize requests in flight at most. */
  inflightBudget: number
  bodyLimit: number
  /** Where sync and finalize hooks run, when not on this thread. */
  thread?: HookThread
}

/** Not wrapped in fastify-plugin: its hooks belong to the hook routes only. */
export const hookRoutes: FastifyPluginAsync<HookRoutesOptions> = async (app, options) => {
  await app.register(credentialsPlugin, options.guard !== undefined ? { guard: options.guard } : {})
  // Set before the body is read, so that a refused body is still counted and logged as a hook call.
  app.addHook('onRequest', async request => {
    const { kind, hook } = (request.routeOptions.config as unknown as HookRouteConfig).call
    request.hookCall = { kind, hook, outcome: 'ok' }
    app.workQueue.arrived()
  })
  await app.register(budgetsPlugin, { budget: options.inflightBudget, bodyLimit: options.bodyLimit })
  const { kinds, scripts, clock, bodyLimit, thread } = options
  const hooks: HookName[] = thread === undefined ? ['sync', 'finalize', 'customize'] : ['customize']
  // A caller may pin the clock only where nothing is applied to a cluster.
  const pinnable = app.effects.mode === 'dry-run'
  const ports = localPorts(app)
  addHookHandlers(app, { kinds, scripts, clock, pinnable, bodyLimit, ports, hooks })
  if (thread !== undefined) await app.register(threadRoutes, { kinds, thread, bodyLimit, ports })
}

/** The ports of a call answered on this thread: the app's work queue and its executor. */
function localPorts (app: Parameters<FastifyPluginAsync>[0]): CallPorts {
  return {
    turn: async (_request, reply, call, cost) => await takeTurn(app, reply.raw, call, cost),
    apply: async (_request, call, parent, effects) => {
      const outcomes = await whileIdle(app, call, async () => await app.effects.apply(parent, effects))
      app.metrics.observeEffects(outcomes)
      return outcomes
    }
  }
}
