// Budgets and shedding: the bytes of sync and finalize calls in flight stay under a budget
// (src/protocol/inflight.ts), and so does the work queued ahead of a call, in expected
// milliseconds (src/protocol/work-queue.ts); a call that would pass either is shed with 429.
// Registered inside the hook routes' context, after the credential check and the call's record.
import fp from 'fastify-plugin'
import { chargeOf, InflightBudget, SHED_RETRY_AFTER_SECONDS } from '../protocol/inflight.js'
import type { WorkQueue } from '../protocol/work-queue.js'
import type { EventEmitter } from 'node:events'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { HookCall } from './calls.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The bytes of hook calls in flight and their budget. */
    inflight: InflightBudget
    /** The expected work of the hook calls admitted and not yet answered (decorated by buildApp). */
    workQueue: WorkQueue
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
  const queue = app.workQueue
  // An abandoned call's busy time is cut short: nothing to learn from.
  const done = (call: HookCall | undefined, answered: boolean): void => {
    if (call?.queued === undefined) return
    queue.release(call.queued.ticket, answered ? call.queued.busyMs : undefined)
    delete call.queued
  }
  app.addHook('onRequestAbort', async request => { release(request.hookCall); done(request.hookCall, false) })
  app.addHook('onResponse', async request => { release(request.hookCall); done(request.hookCall, true) })
  // The answer is serialised by now: the last of the busy time the call is measured by.
  app.addHook('onSend', async request => { busy(queue, request.hookCall) })
  app.addHook('onRequest', async (request, reply) => {
    const call = request.hookCall
    if (call === undefined || call.hook === 'customize') return undefined
    const bytes = chargeOf(request.headers['content-length'], options.bodyLimit)
    if (budget.admit(bytes)) {
      call.charged = bytes
      return undefined
    }
    return await shed(reply, call,
      `${Math.ceil(budget.inflight / 0x100000)} MiB of hook requests are being answered ` +
        `(budget ${Math.ceil(budget.budget / 0x100000)} MiB)`)
  })
}, { name: 'budgets', dependencies: ['metrics', 'calls'] })

/** Answers 429 with Retry-After, saying why. */
export async function shed (reply: FastifyReply, call: HookCall, why: string): Promise<FastifyReply> {
  call.outcome = 'shed'
  return await reply.code(429).header('retry-after', String(SHED_RETRY_AFTER_SECONDS)).send({
    statusCode: 429,
    error: 'Too Many Requests',
    message: `${why}: come back in ${SHED_RETRY_AFTER_SECONDS} s`
  })
}

/** Ends the call's current stretch of busy time, if one is running, and its turn. */
function busy (queue: WorkQueue, call: HookCall | undefined, now = performance.now()): void {
  const queued = call?.queued
  if (queued === undefined) return
  queue.endTurn(queued.ticket)
  if (queued.since === undefined) return
  queued.busyMs += now - queued.since
  delete queued.since
}

/**
 * Queues a sync or finalize call of `cost` (src/protocol/work-queue.ts) and waits for its turn:
 * one call at a time, in arrival order, each on a turn of the event loop of its own, so that the
 * bodies read meanwhile queue too. A call whose expected wait plus its own time would pass the
 * budget is refused at once: why, then, for a 429; undefined once it may run. `connection` is
 * the caller's: when it closes first, the call's cost comes back. Its busy time runs from its
 * turn until it awaits its effects or its answer is serialised; its turn ends there too.
 */
export async function takeTurn (
  app: FastifyInstance, connection: EventEmitter, call: HookCall, cost: number
): Promise<string | undefined> {
  const queue = app.workQueue
  const ticket = queue.admit(cost)
  if (!('cost' in ticket)) {
    const s = (ms: number): string => (ms / 1000).toFixed(1)
    return `${queue.waiting} hook calls are queued, about ${s(ticket.waitMs)} s of work; ` +
      `with this one's ${s(queue.ms(cost))} s that passes the wait budget of ${s(queue.waitBudgetMs)} s`
  }
  call.queued = { ticket, busyMs: 0 }
  // A caller gone while its call waits or runs: its cost comes back now, not once its effects are applied.
  connection.once('close', () => { queue.release(ticket) })
  if (!await queue.turn(ticket)) return 'its caller went away while it waited'
  if (call.queued !== undefined) call.queued.since = performance.now()
  return undefined
}

/** Pauses the call's busy time while it awaits I/O (its effects), and resumes it; its turn ends. */
export async function whileIdle<T> (app: FastifyInstance, call: HookCall, work: () => Promise<T>): Promise<T> {
  busy(app.workQueue, call)
  try {
    return await work()
  } finally {
    if (call.queued !== undefined) call.queued.since = performance.now()
  }
}
