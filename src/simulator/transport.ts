// Calling the hooks: through the real fastify app (`buildApp`, `app.inject`) with the simulated
// clock, or the same hook code in process. An answer must be HTTP 200 and match the response
// schema, strictly under v2 and loosely under v1, or the sync changes nothing.
import type { FastifyInstance } from 'fastify'
import { Value } from '@sinclair/typebox/value'
import { buildApp } from '../app.js'
import {
  syncRequestShape, type CustomizeRequest, type CustomizeResponse, type HookContext, type KindHooks, type SyncRequest,
  type SyncResponse
} from '../protocol/hooks.js'
import { project } from '../protocol/projection.js'
import { CustomizeResponseSchema, SyncResponseSchema } from '../protocol/schemas.js'
import { withEffectOutcomes } from '../protocol/effects-applied.js'
import { isRecord } from '../k8s/types.js'
import { runSyncHook } from '../controllers/hook-runner.js'
import { refTo } from '../effects/types.js'
import type { ScriptLibrary } from '../scripts/library.js'
import { wire } from './objects.js'
import type { Clock } from './clock.js'
import type { SimulatorExecutor } from './effects.js'
import type { Controller, HookVersion, Transport } from './types.js'

export type HookAnswer<T> = { ok: true, value: T } | { ok: false, error: string }

export interface TransportOptions {
  transport: Transport
  checkReads: boolean
  scripts: ScriptLibrary
  clock: Clock
  kinds: KindHooks[]
  effects: SimulatorExecutor
}

export class HookTransport {
  private app: FastifyInstance | undefined
  private appPromise: Promise<FastifyInstance> | undefined

  constructor (private readonly options: TransportOptions) {}

  async callSync (
    controller: Controller, request: SyncRequest, hook: 'sync' | 'finalize' = 'sync'
  ): Promise<HookAnswer<SyncResponse>> {
    let body: unknown
    if (this.options.transport === 'http') {
      const app = await this.httpApp()
      if (this.options.checkReads) this.compareReads(controller.hooks, hook, request)
      const url = `/hooks/${controller.hooks.kind}/${hook}`
      const reply = await app.inject({ method: 'POST', url, payload: wire(request) as object })
      if (reply.statusCode !== 200) {
        return { ok: false, error: `sync hook answered HTTP ${reply.statusCode}: ${reply.body.slice(0, 500)}` }
      }
      try {
        body = JSON.parse(reply.body)
      } catch {
        return { ok: false, error: `sync hook answered something that is not JSON: ${reply.body.slice(0, 200)}` }
      }
    } else {
      const context = this.context()
      const result = runSyncHook(controller.hooks, hook, wire(request), context)
      const outcomes = this.options.effects.applyNow(refTo(request.parent), wire(result.effects))
      body = wire(withEffectOutcomes(result.response, outcomes, context.now))
    }
    const problem = schemaProblem(SyncResponseSchema, body, controller.version)
    if (problem !== undefined) return { ok: false, error: `sync hook answer refused: ${problem}` }
    return { ok: true, value: body as SyncResponse }
  }

  async callCustomize (controller: Controller, request: CustomizeRequest): Promise<HookAnswer<CustomizeResponse>> {
    const customize = controller.hooks.customize
    if (customize === undefined) return { ok: true, value: { relatedResources: [] } }
    let body: unknown
    if (this.options.transport === 'http') {
      const app = await this.httpApp()
      const url = `/hooks/${controller.hooks.kind}/customize`
      const reply = await app.inject({ method: 'POST', url, payload: wire(request) as object })
      if (reply.statusCode !== 200) return { ok: false, error: `HTTP ${reply.statusCode}: ${reply.body.slice(0, 500)}` }
      body = JSON.parse(reply.body)
    } else {
      try {
        body = wire(customize(wire(request), this.context()))
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error.message : String(error) }
      }
    }
    const problem = schemaProblem(CustomizeResponseSchema, body, controller.version)
    if (problem !== undefined) return { ok: false, error: `answer refused: ${problem}` }
    return { ok: true, value: body as CustomizeResponse }
  }

  /** Closes the fastify app, if one was built. */
  async close (): Promise<void> {
    const app = this.app ?? (this.appPromise !== undefined ? await this.appPromise : undefined)
    this.app = undefined
    this.appPromise = undefined
    if (app !== undefined) await app.close()
  }

  private context (): HookContext {
    return { now: this.options.clock.now(), scripts: this.options.scripts }
  }

  private async httpApp (): Promise<FastifyInstance> {
    if (this.app !== undefined) return this.app
    this.appPromise ??= buildApp({
      logger: false,
      scripts: this.options.scripts,
      clock: () => this.options.clock.now(),
      kinds: this.options.kinds,
      effects: this.options.effects
    })
    this.app = await this.appPromise
    return this.app
  }

  /** Throws when the hook answers the whole request otherwise than the one built to its kind's reads. */
  private compareReads (hooks: KindHooks, hook: 'sync' | 'finalize', request: SyncRequest): void {
    const bytes = Buffer.from(JSON.stringify(request))
    const answer = (built: SyncRequest): string => {
      const { response, effects } = runSyncHook(hooks, hook, built, this.context())
      return JSON.stringify({ response, effects })
    }
    const whole = answer(JSON.parse(bytes.toString()) as SyncRequest)
    const read = answer(project(bytes, syncRequestShape(hooks.reads)) as SyncRequest)
    if (whole !== read) {
      throw new Error(`the ${hooks.kind} ${hook} hook answers differently when it gets only what its reads declare ` +
        `(src/k8s/reads.ts):\nwhole: ${whole.slice(0, 2000)}\nread:  ${read.slice(0, 2000)}`)
    }
  }
}

/**
 * Whether a hook answer decodes: v2 decodes strictly (an unknown top-level field is an error),
 * v1 loosely (unknown top-level fields are ignored).
 */
function schemaProblem (
  schema: typeof SyncResponseSchema | typeof CustomizeResponseSchema, body: unknown, version: HookVersion
): string | undefined {
  let value = body
  if (version === 'v1' && isRecord(body)) {
    const known = Object.keys(schema.properties)
    value = Object.fromEntries(Object.entries(body).filter(([k]) => known.includes(k)))
  }
  if (Value.Check(schema, value)) return undefined
  return [...Value.Errors(schema, value)].slice(0, 3)
    .map(e => `${e.path === '' ? '(top level)' : e.path}: ${e.message}`).join('; ')
}
