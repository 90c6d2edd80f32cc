// The sync and finalize routes when the hooks run on the hook thread (src/thread/hook-thread.ts):
// here a body is only read, into a shared memory when it is large (src/protocol/body-pool.ts), and
// handed to the thread where it lies; the thread builds it, runs the hook and serialises the
// answer, which is sent as it comes back. Once the thread has built it, the body's memory may be
// read into again. The credential check, the call's record and the in-flight budget have run
// before (src/plugins/hook-routes.ts); the call's turn in the work queue and its effects are this
// app's, asked for by the thread as it goes.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { KindHooks } from '../protocol/hooks.js'
import { NOW_HEADER } from '../protocol/pinned-clock.js'
import { ThreadStopped, type HookThread } from '../thread/hook-thread.js'
import { readBody } from '../protocol/body-reader.js'
import { BodyPool } from '../protocol/body-pool.js'
import type { CallPorts, HookRouteConfig } from './hook-handlers.js'
import type { HookCall } from './calls.js'
import { BODY_ERRORS } from './wire.js'

export interface ThreadRoutesOptions {
  kinds: readonly KindHooks[]
  thread: HookThread
  bodyLimit: number
  /** The app's work queue and executor, which the thread asks for. */
  ports: CallPorts
}

/** The headers the hook thread reads of a call; the credentials were checked here. */
const FORWARDED = ['content-type', 'content-length', NOW_HEADER]

/** Not wrapped in fastify-plugin: its body parser is for these routes only. */
export const threadRoutes: FastifyPluginAsync<ThreadRoutesOptions> = async (app, options) => {
  const { kinds, thread, bodyLimit, ports } = options
  const { wasm } = app.wire
  const bodies = new BodyPool(wasm)
  app.addHook('onClose', async () => { bodies.close() })
  app.removeAllContentTypeParsers()
  // Read whole, a large body into a shared memory of its own, which the thread reads where it lies.
  app.addContentTypeParser('*', (request, payload, done) => {
    readBody(bodies, payload, request.headers['content-length'], bodyLimit, BODY_ERRORS, done)
  })
  for (const kind of kinds) {
    for (const hook of ['sync', 'finalize'] as const) {
      if (kind[hook] === undefined) continue
      const config: HookRouteConfig = { call: { kind: kind.kind, hook } }
      app.post(`/hooks/${kind.kind}/${hook}`, { config }, async (request, reply) => {
        const call = request.hookCall as HookCall
        const body = request.body as Buffer
        const memory = wasm.memoryOf(body)
        const handed = memory !== undefined ? { memory, offset: body.byteOffset, length: body.length } : { bytes: body }
        let answer
        try {
          answer = await thread.call(request.url, forwarded(request), handed, {
            turn: async cost => await ports.turn(request, reply, call, cost),
            apply: async (parent, effects) => await ports.apply(request, call, parent, effects)
          }, () => { bodies.release(body) })
        } catch (error) {
          if (!(error instanceof ThreadStopped)) throw error
          call.outcome = 'error'
          const message = `${error.message}; nothing was changed, every child kept`
          return await reply.code(503).send({ statusCode: 503, error: 'Service Unavailable', message })
        }
        call.outcome = answer.outcome ?? call.outcome
        if (answer.parent !== undefined) call.parent = answer.parent
        reply.code(answer.statusCode).headers(answer.headers)
        return await reply.send(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength))
      })
    }
  }
}

/** The headers the hook thread reads of a call. */
function forwarded (request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name of FORWARDED) {
    const value = request.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  return headers
}
