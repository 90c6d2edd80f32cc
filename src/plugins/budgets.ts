// Budgets and shedding: the bytes of sync and finalize calls in flight stay under a budget
// (src/protocol/inflight.ts); a call that would pass it is shed with 429 and Retry-After.
// Registered inside the hook routes' context, after the credential check and the call's record.
import fp from 'fastify-plugin'
import { chargeOf, InflightBudget, SHED_RETRY_AFTER_SECONDS } from '../protocol/inflight.js'
import type { HookCall } from './calls.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of hook calls in flight and their budget. */
    inflight: InflightBudget
  }
}

export interface BudgetsOptions {
  /** Bytes of sync and finalize requests in flight at most. */
  budget: number
  /** What a call without a Content-Length is charged. */
  bodyLimit: number
}

/**
 * Before the body is read, a call whose bytes would take the requests in flight past the budget
 * is answered 429 at once. The connection stays open and Node reads the rest of the body and
 * throws it away, a chunk at a time: a client still writing a large body (Metacontroller's Go
 * client writes while it waits) would otherwise meet a reset, which can reach it before the 429
 * does and count as a failed call. The bytes go back once the call is answered, or its caller
 * went away first.
 */
export const budgetsPlugin = fp<BudgetsOptions>(async (app, options) => {
  const budget = new InflightBudget(options.budget)
  app.decorate('inflight', budget)
  app.metrics.watchInflight(() => budget.inflight, budget.budget)
  const release = (call: HookCall | undefined): void => {
    if (call?.charged === undefined) return
    budget.release(call.charged)
    delete call.charged
  }
  app.addHook('onRequestAbort', async request => { release(request.hookCall) })
  app.addHook('onResponse', async request => { release(request.hookCall) })
  app.addHook('onRequest', async (request, reply) => {
    const call = request.hookCall
    if (call === undefined || call.hook === 'customize') return undefined
    const bytes = chargeOf(request.headers['content-length'], options.bodyLimit)
    if (budget.admit(bytes)) {
      call.charged = bytes
      return undefined
    }
    call.outcome = 'shed'
    return await reply.code(429).header('retry-after', String(SHED_RETRY_AFTER_SECONDS)).send({
      statusCode: 429,
      error: 'Too Many Requests',
      message: `${Math.ceil(budget.inflight / 0x100000)} MiB of hook requests are being answered ` +
        `(budget ${Math.ceil(budget.budget / 0x100000)} MiB): come back in ${SHED_RETRY_AFTER_SECONDS} s`
    })
  })
}, { name: 'budgets', dependencies: ['metrics', 'calls'] })
