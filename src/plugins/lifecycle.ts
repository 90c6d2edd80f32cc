// Lifecycle: health and readiness, the Events still queued written when the app closes, every
// call accepted before it closes answered whole, and their connections closed with them.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { HealthResponseSchema } from '../protocol/schemas.js'
import type { EffectExecutor } from '../effects/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Applies the hooks' effects, or only records them (dry-run). */
    effects: EffectExecutor
  }
}

/** How long closing waits for the Events still queued. */
const EVENTS_FLUSH_MS = 2000

export const lifecyclePlugin = fp(async app => {
  recordEvents(app)
  // In this order: preClose marks answers to close their connections before it waits for them.
  closeConnectionsOnClose(app)
  finishAnswersOnClose(app)
  app.get('/healthz', { schema: { response: { 200: HealthResponseSchema } } }, async () => ({ status: 'ok' }))
  // While the server closes, fastify answers 503 here (and everywhere), so endpoints drain first.
  app.get('/readyz', { schema: { response: { 200: HealthResponseSchema } } }, async () => ({ status: 'ready' }))
}, { name: 'lifecycle', dependencies: ['metrics'], decorators: { fastify: ['effects'] } })

/**
 * The executor's Events (src/effects/events.ts) are counted, a failure to write them logged at
 * most once a minute (a ClusterRole without `events` fails every one), and those still queued
 * written, for a while, when the app closes.
 */
function recordEvents (app: FastifyInstance): void {
  const events = app.effects.events
  if (events === undefined) return
  const metrics = app.metrics
  let warnedAt = -Infinity
  let failedSince = 0
  events.observe((reason, result, message) => {
    metrics.observeEvent(reason, result)
    if (result !== 'failed') return
    failedSince++
    if (Date.now() - warnedAt < 60_000) return
    app.log.warn({ reason, error: message, failedSinceLastLine: failedSince }, 'event not recorded')
    warnedAt = Date.now()
    failedSince = 0
  })
  app.addHook('onClose', async () => { await events.flush(EVENTS_FLUSH_MS) })
}

/**
 * A call answered once the app is closing (SIGTERM) closes its connection: a client that keeps
 * idle connections (Metacontroller's Go client keeps them 90 s) would otherwise hold the server
 * open until the grace period runs out, and the process would exit 1 instead of 0.
 */
function closeConnectionsOnClose (app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', async (_request, reply) => { if (closing) reply.header('connection', 'close') })
}

/**
 * Closing waits for every call accepted before it to have its answer written whole. Node's
 * server.close() destroys a connection once its answer is ended, not once it is written: an 8 MiB
 * answer to a slow reader was cut, and the process exited before it was flushed. So preClose,
 * which runs before fastify closes the server, waits for each accepted answer's 'finish' (its last
 * byte handed to the socket) or 'close' (its caller went away). Calls that arrive meanwhile get
 * fastify's 503 before any byte of theirs is read, and never count here (no onRequest for them).
 */
function finishAnswersOnClose (app: FastifyInstance): void {
  let open = 0
  let drained: (() => void) | undefined
  app.addHook('onRequest', async (_request, reply) => {
    open++
    let done = false
    const answered = (): void => {
      if (done) return
      done = true
      open--
      if (open === 0) drained?.()
    }
    reply.raw.once('finish', answered)
    reply.raw.once('close', answered)
  })
  app.addHook('preClose', async () => {
    if (open === 0) return
    await new Promise<void>(resolve => { drained = resolve })
  })
}
