// The hook handlers: sync, finalize and customize of every kind, thin, the hook itself running in
// src/controllers/. They run where the hooks run: on the app's own thread (HOOK_THREAD=0, and
// the tests), or on the hook thread (src/thread-main.ts), the app forwarding its calls there.
// What a call needs of the app around it, its turn in the work queue and its effects applied, it
// asks through its ports: the same handlers serve both.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
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
import {
  describeEffect, isUnapplied, refTo, type Effect, type EffectOutcome, type ObjectRef
} from '../effects/types.js'
import { withEffectOutcomes } from '../protocol/effects-applied.js'
import { showEffects } from '../effects/show.js'
import { NOW_HEADER, pinnedClock } from '../protocol/pinned-clock.js'
import { chargeOf } from '../protocol/inflight.js'
import { WorkQueue } from '../protocol/work-queue.js'
import { expectedNewChildBytes } from '../controllers/answer-size.js'
import { shed } from './budgets.js'
import type { HookCall } from './calls.js'
import type { RouteReads } from './wire.js'

/** What a sync or finalize call asks of the app it is answered for. */
export interface CallPorts {
  /** Waits for the call's turn to run its hook, given its expected cost; or says why it is shed. */
  turn: (request: FastifyRequest, reply: FastifyReply, call: HookCall, cost: number) => Promise<string | undefined>
  /** Applies the effects its hook asked for (src/effects/), counted in the app's metrics. */
  apply: (request: FastifyRequest, call: HookCall, parent: ObjectRef | undefined, effects: Effect[]) =>
  Promise<EffectOutcome[]>
}

export interface HookHandlersOptions {
  kinds: readonly KindHooks[]
  scripts: ScriptLibrary
  /** The hooks' clock. */
  clock: () => Date
  /** Whether a caller may pin the clock: only where nothing is applied to a cluster. */
  pinnable: boolean
  bodyLimit: number
  /** The sync and finalize handlers' ports; customize needs none. */
  ports: CallPorts
  /** Which hooks get handlers here: the hook thread serves sync and finalize only. */
  hooks: readonly HookName[]
}

/** A hook route's config: what it builds of the body, and which call it is. */
export interface HookRouteConfig extends RouteReads {
  call: { kind: string, hook: HookName }
}

/** The hooks' context for a call: its clock pinned by the call, where allowed; or why the pin is refused. */
type CallContext = (request: { headers: FastifyRequest['headers'], query: { now?: string } }) => HookContext | string

export const HOOK_ERRORS = {
  400: ErrorResponseSchema,
  401: ErrorResponseSchema,
  404: ErrorResponseSchema,
  413: ErrorResponseSchema,
  415: ErrorResponseSchema,
  429: ErrorResponseSchema,
  500: ErrorResponseSchema,
  503: ErrorResponseSchema
}

/** Every kind's handlers for `options.hooks`, on `app` (a context whose onRequest hooks set `hookCall`). */
export function addHookHandlers (app: FastifyInstance, options: HookHandlersOptions): void {
  const { scripts, clock, pinnable } = options
  const context: CallContext = request => {
    const pin = pinnedClock(request.headers[NOW_HEADER], request.query.now, pinnable)
    if (!pin.pinned) return { now: clock(), scripts }
    return 'problem' in pin ? pin.problem : { now: pin.now, scripts }
  }
  for (const kind of options.kinds) {
    for (const hook of ['sync', 'finalize'] as const) {
      if (kind[hook] !== undefined && options.hooks.includes(hook)) {
        addSyncRoute(app, kind, hook, context, options)
      }
    }
    if (options.hooks.includes('customize')) addCustomizeRoute(app, kind, context)
  }
}

/** A sync or finalize route: the hook's answer, with what became of its effects. */
function addSyncRoute (
  app: FastifyInstance, kind: KindHooks, hook: 'sync' | 'finalize', context: CallContext,
  { bodyLimit, ports }: HookHandlersOptions
): void {
  const config: HookRouteConfig = { reads: syncRequestShape(kind.reads), call: { kind: kind.kind, hook } }
  app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/${hook}`, {
    config,
    schema: {
      body: SyncRequestSchema,
      querystring: HookQuerySchema,
      response: { 200: SyncResponseSchema, ...HOOK_ERRORS }
    }
  }, async (request, reply) => {
    const now = context(request)
    const call = request.hookCall as HookCall
    if (typeof now === 'string') return await badRequest(reply, call, now)
    const refused = updateStrategyProblem(request.body.controller, kind)
    if (refused !== undefined) return await badRequest(reply, call, refused)
    const cost = costOf(kind, hook, request.body, chargeOf(request.headers['content-length'], bodyLimit))
    const shedFor = await ports.turn(request, reply, call, cost)
    if (shedFor !== undefined) return await shed(reply, call, shedFor)
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
    const outcomes = await ports.apply(request, call, parent, result.effects)
    logUnapplied(request.log, call, outcomes)
    const answer = withEffectOutcomes(result.response, outcomes, now.now)
    return request.query.effects === 'show' ? { ...answer, effects: showEffects(outcomes) } : answer
  })
}

/** A customize route, for a kind that has the hook. */
function addCustomizeRoute (app: FastifyInstance, kind: KindHooks, context: CallContext): void {
  const customize = kind.customize
  if (customize === undefined) return
  const config: HookRouteConfig = { call: { kind: kind.kind, hook: 'customize' } }
  app.withTypeProvider<TypeBoxTypeProvider>().post(`/hooks/${kind.kind}/customize`, {
    config,
    schema: {
      body: CustomizeRequestSchema,
      querystring: CustomizeQuerySchema,
      response: { 200: CustomizeResponseSchema, ...HOOK_ERRORS }
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

/** The hook's request from a body, the way Metacontroller leaves out what is empty. */
function syncRequestOf (body: SyncRequestBody, hook: 'sync' | 'finalize'): SyncRequest {
  return {
    controller: body.controller,
    parent: body.parent,
    children: body.children ?? {},
    related: body.related ?? {},
    finalizing: body.finalizing ?? hook === 'finalize'
  }
}

/**
 * Runs a sync or finalize hook on a request body and names its parent on `call`. A function of
 * its own, so that no variable of the route's (async) handler holds the request's objects.
 */
function runHook (
  kind: KindHooks, hook: 'sync' | 'finalize', body: SyncRequestBody, now: HookContext, call: HookCall
): { result: RunResult, parent: ObjectRef | undefined } {
  const syncRequest = syncRequestOf(body, hook)
  const result = runSyncHook(kind, hook, syncRequest, now)
  call.parent = describe(syncRequest.parent)
  return { result, parent: refTo(syncRequest.parent) }
}

/** A call's expected cost (src/protocol/work-queue.ts). A function of its own, like runHook. */
function costOf (kind: KindHooks, hook: 'sync' | 'finalize', body: SyncRequestBody, bodyBytes: number): number {
  return WorkQueue.costOf(bodyBytes, expectedNewChildBytes(kind.kind, syncRequestOf(body, hook)))
}

function describe (parent: KubeObject): string {
  const { namespace, name } = parent.metadata
  return namespace === undefined ? name : `${namespace}/${name}`
}
