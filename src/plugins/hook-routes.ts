// The hook routes: sync, finalize and customize of every kind, in a context of their own whose
// onRequest hooks run in this order before the body is read: the credential check, the call's
// record, the in-flight budget. The handlers are thin: the hook runs in src/controllers/.
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import {
  CustomizeRequestSchema, CustomizeResponseSchema, ErrorResponseSchema, CustomizeQuerySchema, HookQuerySchema,
  SyncRequestSchema, SyncResponseSchema, type SyncRequestBody
} from '../protocol/schemas.js'
import { updateStrategyProblem } from '../protocol/update-strategy.js'
import {
  syncRequestShape, type CustomizeRequest, type HookContext, type HookName, type KindHooks, type SyncRequest
} from '../protocol/hooks.js'
import type { KubeObject } from '../k8s/types.js'
import type { ScriptLibrary } from '../scripts/library.js'
import { runSyncHook, type RunResult } from '../controllers/hook-runner.js'
import { describeEffect, isUnapplied, refTo, type EffectOutcome, type ObjectRef } from '../effects/types.js'
import { withEffectOutcomes } from '../protocol/effects-applied.js'
import { showEffects } from '../effects/show.js'
import { NOW_HEADER, pinnedClock } from '../protocol/pinned-clock.js'
import type { HookGuard } from '../trust/guard.js'
import { credentialsPlugin } from './credentials.js'
import { budgetsPlugin } from './budgets.js'
import type { HookCall } from './calls.js'
import type { RouteReads } from './wire.js'

export interface HookRoutesOptions {
  kinds: readonly KindHooks[]
  scripts: ScriptLibrary
  /** The hooks' clock. */
  clock: () => Date
  guard?: HookGuard
  /** Bytes of sync and finalize requests in flight at most. */
  inflightBudget: number
  bodyLimit: number
}

/** A hook route's config: what it builds of the body, and which call it is. */
interface HookRouteConfig extends RouteReads {
  call: { kind: string, hook: HookName }
}

/** The hooks' context for a call: its clock pinned by the call, where allowed; or why the pin is refused. */
type CallContext = (request: { headers: FastifyRequest['headers'], query: { now?: string } }) => HookContext | string

const ERRORS = {
  400: ErrorResponseSchema,
  401: ErrorResponseSchema,
  404: ErrorResponseSchema,
  413: ErrorResponseSchema,
  415: ErrorResponseSchema,
  429: ErrorResponseSchema,
  500: ErrorResponseSchema
}

/** Not wrapped in fastify-plugin: its hooks belong to the hook routes only. */
export const hookRoutes: FastifyPluginAsync<HookRoutesOptions> = async (app, options) => {
  await app.register(credentialsPlugin, options.guard !== undefined ? { guard: options.guard } : {})
  // Set before the body is read, so that a refused body is still counted and logged as a hook call.
  app.addHook('onRequest', async request => {
    const { kind, hook } = (request.routeOptions.config as unknown as HookRouteConfig).call
    request.hookCall = { kind, hook, outcome: 'ok' }
  })
  await app.register(budgetsPlugin, { budget: options.inflightBudget, bodyLimit: options.bodyLimit })
  // A caller may pin the clock only where nothing is applied to a cluster.
  const pinnable = app.effects.mode === 'dry-run'
  const { scripts, clock } = options
  const context: CallContext = request => {
    const pin = pinnedClock(request.headers[NOW_HEADER], request.query.now, pinnable)
    if (!pin.pinned) return { now: clock(), scripts }
    return 'problem' in pin ? pin.problem : { now: pin.now, scripts }
  }
  for (const kind of options.kinds) {
    for (const hook of ['sync', 'finalize'] as const) {
      if (kind[hook] !== undefined) addSyncRoute(app, kind, hook, context)
    }
    addCustomizeRoute(app, kind, context)
  }
}

type HookApp = Parameters<FastifyPluginAsync>[0]

/** A sync or finalize route: the hook's answer, with what became of its effects. */
function addSyncRoute (app: HookApp, kind: KindHooks, hook: 'sync' | 'finalize', context: CallContext): void {
  const config: HookRouteConfig = { reads: syncRequestShape(kind.reads), call: { kind: kind.kind, hook } }
  app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/${hook}`, {
    config,
    schema: { body: SyncRequestSchema, querystring: HookQuerySchema, response: { 200: SyncResponseSchema, ...ERRORS } }
  }, async (request, reply) => {
    const now = context(request)
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
    const outcomes = await app.effects.apply(parent, result.effects)
    app.metrics.observeEffects(outcomes)
    logUnapplied(request.log, call, outcomes)
    const answer = withEffectOutcomes(result.response, outcomes, now.now)
    return request.query.effects === 'show' ? { ...answer, effects: showEffects(outcomes) } : answer
  })
}

/** A customize route, for a kind that has the hook. */
function addCustomizeRoute (app: HookApp, kind: KindHooks, context: CallContext): void {
  const customize = kind.customize
  if (customize === undefined) return
  const config: HookRouteConfig = { call: { kind: kind.kind, hook: 'customize' } }
  app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/customize`, {
    config,
    schema: {
      body: CustomizeRequestSchema,
      querystring: CustomizeQuerySchema,
      response: { 200: CustomizeResponseSchema, ...ERRORS }
    }
  }, async (request, reply) => {
    const parent = request.body.parent as KubeObject
    const call = request.hookCall as HookCall
    call.parent = describe(parent)
    const now = context(request)
    if (typeof now === 'string') return await badRequest(reply, call, now)
    return customize({ controller: request.body.controller, parent } satisfies CustomizeRequest, now)
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

function describe (parent: KubeObject): string {
  const { namespace, name } = parent.metadata
  return namespace === undefined ? name : `${namespace}/${name}`
}
