// What every hook call leaves on its request (kind, hook, parent, outcome), for the one log line
// and the metrics written once it is answered; and how a call that fails is answered.
import { STATUS_CODES } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance } from 'fastify'
import type { HookName, KindHooks } from '../protocol/hooks.js'
import type { Outcome } from './metrics.js'
import type { Ticket } from '../protocol/work-queue.js'

/** What a hook call leaves on its request for the one log line and the metrics written at the end. */
export interface HookCall {
  kind: string
  hook: HookName
  parent?: string
  outcome: Outcome
  /** The bytes the call took from the in-flight budget, until it is answered. */
  charged?: number
  /** Its place in the work queue (src/protocol/work-queue.ts), until it is answered. */
  queued?: Queued
}

/** A call's place in the work queue, and the milliseconds it has kept the event loop busy so far. */
export interface Queued {
  ticket: Ticket
  busyMs: number
  /** When the current stretch of busy time began. */
  since?: number
}

declare module 'fastify' {
  interface FastifyRequest {
    hookCall?: HookCall
  }
}

export interface CallsOptions {
  kinds: readonly KindHooks[]
  /** Whether it writes the log line and metrics (not on the hook thread: the app forwarding its calls does). */
  log?: boolean
}

/** The calls plugin: the request's `hookCall`, the error and not-found answers, the log line. */
export const callsPlugin = fp<CallsOptions>(async (app, { kinds, log }) => {
  app.decorateRequest('hookCall', undefined)
  answerErrors(app, kinds)
  if (log !== false) logHookCalls(app)
}, { name: 'calls', dependencies: ['metrics'] })

/** 4xx answers say what was wrong; anything else is a 500 that says nothing more (law 2: never a 500 for garbage). */
function answerErrors (app: FastifyInstance, kinds: readonly KindHooks[]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const clientError = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500
    const statusCode = clientError ? error.statusCode as number : 500
    if (request.hookCall !== undefined) request.hookCall.outcome = statusCode < 500 ? 'bad_request' : 'error'
    if (statusCode >= 500) request.log.error({ err: error }, 'unexpected error')
    const message = statusCode >= 500
      ? 'internal server error'
      : error.validation !== undefined ? `not a hook request: ${error.message}` : error.message
    return reply.code(statusCode).send({ statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message })
  })
  app.setNotFoundHandler((request, reply) => reply.code(404).send({
    statusCode: 404,
    error: 'Not Found',
    message: `no route ${request.method} ${request.url}; ` +
      `hooks are ${kinds.map(k => hookPaths(k).join(', ')).join(', ')}`
  }))
}

/** One log line and the metrics per hook call, when its answer has gone. */
function logHookCalls (app: FastifyInstance): void {
  const metrics = app.metrics
  app.addHook('onResponse', async (request, reply) => {
    const call = request.hookCall
    if (call === undefined) return
    metrics.observeHook(call.kind, call.hook, call.outcome, reply.elapsedTime / 1000)
    const line = {
      kind: call.kind,
      hook: call.hook,
      parent: call.parent,
      outcome: call.outcome,
      statusCode: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10
    }
    // A burst sheds many calls, each retried: the metrics count them, the log stays quiet.
    if (call.outcome === 'ok') request.log.info(line, 'hook call')
    else if (call.outcome === 'shed') request.log.debug(line, 'hook call')
    else request.log.warn(line, 'hook call')
  })
}

/** The routes of a kind's hooks, for messages and for checking CompositeControllers against them. */
export function hookPaths (kind: KindHooks): string[] {
  return (['sync', 'finalize', 'customize'] as const)
    .filter(h => kind[h] !== undefined)
    .map(h => `POST /hooks/${kind.kind}/${h}`)
}
