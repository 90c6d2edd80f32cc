// The fastify application: routes for every kind's hooks plus health and metrics. Building it
// never listens; server.ts does that.
import { STATUS_CODES } from 'node:http'
import Fastify, {
  errorCodes, LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply,
  type FastifyRequest, type FastifyServerOptions
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import {
  CustomizeRequestSchema, CustomizeResponseSchema, ErrorResponseSchema, HealthResponseSchema,
  CustomizeQuerySchema, HookQuerySchema, SyncRequestSchema, SyncResponseSchema, type SyncRequestBody
} from './protocol/schemas.js'
import { DEFAULT_BODY_LIMIT, readBody } from './protocol/body-reader.js'
import { project } from './protocol/projection.js'
import { WireState } from './protocol/wire-state.js'
import { updateStrategyProblem } from './protocol/update-strategy.js'
import { chargeOf, defaultInflightBudget, InflightBudget, SHED_RETRY_AFTER_SECONDS } from './protocol/inflight.js'
import {
  syncRequestShape, WHOLE_REQUEST, type HookContext, type HookName, type KindHooks, type SyncRequest,
  type CustomizeRequest
} from './protocol/hooks.js'
import type { Shape } from './k8s/reads.js'
import type { KubeObject } from './k8s/types.js'
import type { ScriptLibrary } from './scripts/library.js'
import { ALL_KINDS } from './controllers/kinds.js'
import { runSyncHook, type RunResult } from './controllers/hook-runner.js'
import { createMetrics, type Metrics, type Outcome } from './metrics.js'
import {
  describeEffect, isUnapplied, refTo, type EffectExecutor, type EffectOutcome, type ObjectRef
} from './effects/types.js'
import { RecordingExecutor } from './effects/dry-run.js'
import { withEffectOutcomes } from './protocol/effects-applied.js'
import { showEffects } from './effects/show.js'
import { RefusalLog, type HookGuard, type Refusal } from './trust/guard.js'
import { NOW_HEADER, pinnedClock } from './protocol/pinned-clock.js'

export { DEFAULT_BODY_LIMIT }

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
  /** Build request bodies whole instead of only what the hooks read: tests compare the two. */
  keepWhole?: boolean
  /** Bytes the app's memo of built objects may hold (docs/wire.md); 0 turns it off. Default: defaultMemoLimit(). */
  memoBytes?: number
}

/** What a hook call leaves on its request for the one log line and the metrics written at the end. */
interface HookCall {
  kind: string
  hook: HookName
  parent?: string
  outcome: Outcome
  /** The bytes the call took from the in-flight budget, until it is answered. */
  charged?: number
}

declare module 'fastify' {
  interface FastifyRequest {
    hookCall?: HookCall
  }
  interface FastifyInstance {
    metrics: Metrics
    effects: EffectExecutor
    /** What the wire keeps between requests: the memo, the body buffers (src/protocol/wire-state.ts). */
    wire: WireState
  }
}

/**
 * A fastify instance configured the way the service runs: the body limit, one log line per hook
 * call instead of fastify's two per request, and any body read as JSON, built only as far as the
 * route's `reads` shape says (src/protocol/projection.ts) unless `keepWhole`. The benchmark's echo
 * route runs on one of these too, keeping the body whole, since it must give it back.
 */
export function createFastify (
  options: Pick<AppOptions, 'logger' | 'bodyLimit' | 'https' | 'keepWhole' | 'memoBytes'> = {}
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
  const wire = new WireState(options.memoBytes !== undefined ? { memoBytes: options.memoBytes } : {})
  app.decorate('wire', wire)
  app.addHook('onClose', async () => { wire.close() })
  // `curl -d @fixture.json` sends form encoding unless told otherwise: read any body as JSON,
  // with fastify's own JSON parser, which refuses __proto__ and constructor keys as it does for
  // application/json, wherever the projection does not build it.
  const json = app.getDefaultJsonParser('error', 'error')
  if (options.keepWhole === true) {
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, json)
  } else {
    app.removeContentTypeParser('application/json')
    const errors = {
      tooLarge: () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(),
      badLength: () => new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH()
    }
    app.addContentTypeParser(['application/json', '*'], (request, payload, done) => {
      readBody(wire.bodies, payload, request.headers['content-length'], bodyLimit, errors, (error, body) => {
        if (error !== null) {
          done(error, undefined)
          return
        }
        const reads = (request.routeOptions.config as RouteReads).reads ?? WHOLE_REQUEST
        let built: unknown
        try {
          built = project(body, reads, wire)
        } catch {
          // Not a body the projection accepts: the strict parser says why, or builds it whole.
          const text = body.toString('utf8')
          wire.bodies.release(body)
          // Called with `done`, the parser answers through it; its type only admits a promise.
          void json(request, text, done)
          return
        }
        // What was built holds nothing of the body's bytes: the next body may be read into them.
        wire.bodies.release(body)
        done(null, built)
      })
    })
  }
  return app
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

/** The shape a hook route builds its request body to (src/k8s/reads.ts). */
interface RouteReads {
  reads?: Shape
}

export async function buildApp (options: AppOptions = {}): Promise<FastifyInstance> {
  const app = createFastify(options)
  const metrics = createMetrics()
  app.decorate('metrics', metrics)
  app.decorateRequest('hookCall', undefined)
  const kinds = options.kinds ?? ALL_KINDS
  const effects = options.effects ?? new RecordingExecutor(options.clock !== undefined ? { clock: options.clock } : {})
  app.decorate('effects', effects)
  recordEvents(app, effects, metrics)
  const scripts = options.scripts ?? new Map<string, string>()
  const clock = options.clock ?? (() => new Date())
  const budget = new InflightBudget(options.inflightBudget ?? defaultInflightBudget(app.wire.memo.limit))
  metrics.watchInflight(() => budget.inflight, budget.budget)
  metrics.watchMemo(app.wire.memo)
  // A caller may pin the clock only where nothing is applied to a cluster.
  const pinnable = effects.mode === 'dry-run'
  const routes: HookRoutes = {
    context: request => {
      const pin = pinnedClock(request.headers[NOW_HEADER], request.query.now, pinnable)
      if (!pin.pinned) return { now: clock(), scripts }
      return 'problem' in pin ? pin.problem : { now: pin.now, scripts }
    },
    effects,
    metrics,
    guard: guardCalls(options.guard, metrics),
    admit: admitCalls(budget, options.bodyLimit ?? DEFAULT_BODY_LIMIT)
  }

  answerErrors(app, kinds)
  closeConnectionsOnClose(app)
  logHookCalls(app, metrics, budget)
  for (const kind of kinds) addHookRoutes(app, kind, routes)
  addServiceRoutes(app, metrics)
  await app.ready()
  return app
}

/** How long closing waits for the Events still queued. */
const EVENTS_FLUSH_MS = 2000

/**
 * The executor's Events (src/effects/events.ts) are counted, a failure to write them logged at
 * most once a minute (a ClusterRole without `events` fails every one), and those still queued
 * written, for a while, when the app closes.
 */
function recordEvents (app: FastifyInstance, effects: EffectExecutor, metrics: Metrics): void {
  const events = effects.events
  if (events === undefined) return
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

/** What every hook route needs: the hooks' context, the executor, the metrics, the credential check. */
interface HookRoutes {
  /** The hooks' context for a call: its clock pinned by the call, where allowed; or why the pin is refused. */
  context: (request: { headers: FastifyRequest['headers'], query: { now?: string } }) => HookContext | string
  effects: EffectExecutor
  metrics: Metrics
  guard: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
  admit: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
}

const ERRORS = {
  400: ErrorResponseSchema,
  401: ErrorResponseSchema,
  404: ErrorResponseSchema,
  413: ErrorResponseSchema,
  415: ErrorResponseSchema,
  429: ErrorResponseSchema,
  500: ErrorResponseSchema
}

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

/**
 * One log line and the metrics per hook call, when its answer has gone; and the call's bytes back
 * to the in-flight budget then, or when its caller went away first.
 */
function logHookCalls (app: FastifyInstance, metrics: Metrics, budget: InflightBudget): void {
  const release = (call: HookCall | undefined): void => {
    if (call?.charged === undefined) return
    budget.release(call.charged)
    delete call.charged
  }
  app.addHook('onRequestAbort', async request => { release(request.hookCall) })
  app.addHook('onResponse', async (request, reply) => {
    const call = request.hookCall
    if (call === undefined) return
    release(call)
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

/**
 * The second step of a sync or finalize route, before the body is read: a call whose bytes would
 * take the requests in flight past the budget is shed with 429 and Retry-After at once
 * (src/protocol/inflight.ts). The connection stays open and Node reads the rest of the body and
 * throws it away, a chunk at a time: a client still writing a large body (Metacontroller's Go
 * client writes while it waits) would otherwise meet a reset, which can reach it before the 429
 * does and count as a failed call.
 */
function admitCalls (budget: InflightBudget, bodyLimit: number): HookRoutes['admit'] {
  return async (request, reply) => {
    const call = request.hookCall as HookCall
    const bytes = chargeOf(request.headers['content-length'], bodyLimit)
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
  }
}

/**
 * The first step of every hook route, before the body is read: a call that does not prove it is
 * Metacontroller's is refused whatever it carries, and the connection closed rather than its body
 * read on. Refusals are counted, and logged once per source per minute.
 */
function guardCalls (guard: HookGuard | undefined, metrics: Metrics): HookRoutes['guard'] {
  const refusalLog = new RefusalLog()
  return async (request, reply) => {
    const refusal = guard?.check(request.raw)
    if (refusal === undefined) return undefined
    metrics.observeRefusal(refusal)
    const suppressed = refusalLog.due(request.ip)
    if (suppressed !== undefined) {
      // The route, not the URL: a token put in a query string stays out of the log.
      const route = request.routeOptions.url
      const line = { source: request.ip, reason: refusal, route, refusedSinceLastLine: suppressed }
      request.log.warn(line, 'hook call refused: it did not prove it comes from Metacontroller')
    }
    return await reply.code(401).header('www-authenticate', 'Bearer realm="jobhooks"').header('connection', 'close')
      .send({ statusCode: 401, error: 'Unauthorized', message: REFUSAL_MESSAGES[refusal] })
  }
}

/** Set before the body is read, so that a refused body is still counted and logged as a hook call. */
function startCall (kind: string, hook: HookName) {
  return async (request: { hookCall?: HookCall }) => {
    request.hookCall = { kind, hook, outcome: 'ok' }
  }
}

/** The sync, finalize and customize routes of a kind, for the hooks it has. */
function addHookRoutes (app: FastifyInstance, kind: KindHooks, routes: HookRoutes): void {
  const reads: RouteReads = { reads: syncRequestShape(kind.reads) }
  for (const hook of ['sync', 'finalize'] as const) {
    if (kind[hook] === undefined) continue
    app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/${hook}`, {
      config: reads,
      schema: {
        body: SyncRequestSchema, querystring: HookQuerySchema, response: { 200: SyncResponseSchema, ...ERRORS }
      },
      onRequest: [routes.guard, startCall(kind.kind, hook), routes.admit]
    }, async (request, reply) => {
      const now = routes.context(request)
      const call = request.hookCall as HookCall
      if (typeof now === 'string') return await badRequest(reply, call, now)
      const refused = updateStrategyProblem(request.body.controller, kind)
      if (refused !== undefined) return await badRequest(reply, call, refused)
      const { result, parent } = runHook(kind, hook, request.body, now, call)
      // The request's objects are garbage now, except what the answer shares with them: let
      // the collector free them while the answer is serialised (at thousands of objects,
      // copying them through every young-generation collection costs more than the hook).
      request.body = undefined as unknown as typeof request.body
      call.outcome = result.outcome
      if (result.error !== undefined) {
        const failed = `${kind.kind} ${hook} hook failed; every child kept`
        request.log.error({ err: result.error, parent: call.parent }, failed)
      }
      const outcomes = await routes.effects.apply(parent, result.effects)
      routes.metrics.observeEffects(outcomes)
      logUnapplied(request.log, call, outcomes)
      const answer = withEffectOutcomes(result.response, outcomes, now.now)
      return request.query.effects === 'show' ? { ...answer, effects: showEffects(outcomes) } : answer
    })
  }
  const customize = kind.customize
  if (customize === undefined) return
  app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/customize`, {
    schema: {
      body: CustomizeRequestSchema,
      querystring: CustomizeQuerySchema,
      response: { 200: CustomizeResponseSchema, ...ERRORS }
    },
    onRequest: [routes.guard, startCall(kind.kind, 'customize')]
  }, async (request, reply) => {
    const parent = request.body.parent as KubeObject
    const call = request.hookCall as HookCall
    call.parent = describe(parent)
    const context = routes.context(request)
    if (typeof context === 'string') return await badRequest(reply, call, context)
    return customize({ controller: request.body.controller, parent } satisfies CustomizeRequest, context)
  })
}

/** A hook call answered 400 before any hook ran: what was wrong with it. */
async function badRequest (reply: FastifyReply, call: HookCall, message: string): Promise<FastifyReply> {
  call.outcome = 'bad_request'
  return await reply.code(400).send({ statusCode: 400, error: 'Bad Request', message })
}

/** A warning per effect that was not applied: failed (retried on the next sync) or refused (never sent). */
function logUnapplied (log: FastifyBaseLogger, call: HookCall, outcomes: readonly EffectOutcome[]): void {
  for (const outcome of outcomes.filter(isUnapplied)) {
    const line = { parent: call.parent, effect: describeEffect(outcome.effect), reason: outcome.message }
    if (outcome.result === 'failed') log.warn(line, 'effect failed; retried on the next sync')
    else log.warn(line, 'effect refused: out of its parent\'s reach, never sent')
  }
}

/** Health, readiness and metrics: open to the kubelet and Prometheus. */
function addServiceRoutes (app: FastifyInstance, metrics: Metrics): void {
  app.get('/healthz', { schema: { response: { 200: HealthResponseSchema } } }, async () => ({ status: 'ok' }))
  // While the server closes, fastify answers 503 here (and everywhere), so endpoints drain first.
  app.get('/readyz', { schema: { response: { 200: HealthResponseSchema } } }, async () => ({ status: 'ready' }))
  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return await metrics.registry.metrics()
  })
}

/**
 * Runs a sync or finalize hook on a request body and names its parent on `call`. A function of
 * its own, so that no variable of the route's (async) handler holds the request's objects.
 */
function runHook (
  kind: KindHooks, hook: 'sync' | 'finalize', body: SyncRequestBody, now: HookContext, call: HookCall
): { result: RunResult, parent: ObjectRef | undefined } {
  const syncRequest: SyncRequest = {
    controller: body.controller,
    parent: body.parent,
    children: body.children ?? {},
    related: body.related ?? {},
    finalizing: body.finalizing ?? hook === 'finalize'
  }
  const result = runSyncHook(kind, hook, syncRequest, now)
  call.parent = describe(syncRequest.parent)
  return { result, parent: refTo(syncRequest.parent) }
}

const REFUSAL_MESSAGES: Readonly<Record<Refusal, string>> = {
  missing_token: 'hook calls must carry Authorization: Bearer <token>',
  wrong_scheme: 'hook calls must carry Authorization: Bearer <token>',
  wrong_token: 'the bearer token is not the one this service accepts',
  no_client_certificate: 'hook calls must present a client certificate signed by the CA this service trusts'
}

/** The routes of a kind's hooks, for messages and for checking CompositeControllers against them. */
export function hookPaths (kind: KindHooks): string[] {
  return (['sync', 'finalize', 'customize'] as const)
    .filter(h => kind[h] !== undefined)
    .map(h => `POST /hooks/${kind.kind}/${h}`)
}

function describe (parent: KubeObject): string {
  const { namespace, name } = parent.metadata
  return namespace === undefined ? name : `${namespace}/${name}`
}
