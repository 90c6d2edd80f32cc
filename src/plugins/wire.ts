// The wire: any hook body read as JSON and built only as far as its route's `reads` shape says
// (src/protocol/projection.ts), with what the wire keeps between requests decorated on the app.
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify'
import { readBody, type BodyErrors } from '../protocol/body-reader.js'
import { project } from '../protocol/projection.js'
import { WireState } from '../protocol/wire-state.js'
import { WHOLE_REQUEST } from '../protocol/hooks.js'
import type { Shape } from '../k8s/reads.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** What the wire keeps between requests: the memo, the body buffers (src/protocol/wire-state.ts). */
    wire: WireState
  }
}

/** A body refused as fastify's own reader refuses it (src/protocol/body-reader.ts). */
export const BODY_ERRORS: BodyErrors = {
  tooLarge: () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(),
  badLength: () => new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH()
}

/** How a content-type parser answers. */
type Done = (error: Error | null, body?: unknown) => void

/** The shape a hook route builds its request body to (src/k8s/reads.ts). */
export interface RouteReads {
  reads?: Shape
}

/**
 * Bodies read by another thread and handed over whole (the hook thread, src/thread-main.ts): the
 * request's stream carries none of their bytes.
 */
export interface HandedOver {
  /** The body handed over for `request`, if one was. */
  take: (request: FastifyRequest) => Buffer | undefined
  /** What was built of it holds none of its bytes: they may be read into again where they lie. */
  built: (request: FastifyRequest) => void
}

export interface WireOptions {
  bodyLimit: number
  handedOver?: HandedOver
  /** Build request bodies whole instead of only what the hooks read: tests compare the two. */
  keepWhole?: boolean
  /** Bytes the memo of built objects may hold; 0 turns it off. */
  memoBytes?: number
}

/**
 * Set up on the root instance as it is created, before any route: every route of the app reads
 * its body this way, the benchmark's echo route too.
 */
export function setUpWire (app: FastifyInstance, options: WireOptions): void {
  const { bodyLimit } = options
  const wire = new WireState(options.memoBytes !== undefined ? { memoBytes: options.memoBytes } : {})
  app.decorate('wire', wire)
  app.addHook('onClose', async () => { wire.close() })
  // `curl -d @fixture.json` sends form encoding unless told otherwise: read any body as JSON,
  // with fastify's own JSON parser, which refuses __proto__ and constructor keys as it does for
  // application/json, wherever the projection does not build it.
  const json = app.getDefaultJsonParser('error', 'error')
  const { handedOver } = options
  if (options.keepWhole === true) {
    app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (request, text, done) => {
      const whole = handedOver?.take(request)
      if (whole === undefined) return json(request, text as string, done)
      const handed = whole.toString('utf8')
      handedOver?.built(request)
      return json(request, handed, done)
    })
    return
  }
  app.removeContentTypeParser('application/json')
  const build = (request: FastifyRequest, body: Buffer, done: Done, release: () => void): void => {
    const reads = (request.routeOptions.config as RouteReads).reads ?? WHOLE_REQUEST
    let built: unknown
    try {
      built = project(body, reads, wire)
    } catch {
      // Not a body the projection accepts: the strict parser says why, or builds it whole.
      const text = body.toString('utf8')
      release()
      // Called with `done`, the parser answers through it; its type only admits a promise.
      void json(request, text, done)
      return
    }
    // What was built holds nothing of the body's bytes: the next body may be read into them.
    release()
    done(null, built)
  }
  app.addContentTypeParser(['application/json', '*'], (request, payload, done) => {
    const whole = handedOver?.take(request)
    if (whole !== undefined) {
      payload.on('end', () => { build(request, whole, done, () => { handedOver?.built(request) }) })
      payload.resume()
      return
    }
    readBody(wire.bodies, payload, request.headers['content-length'], bodyLimit, BODY_ERRORS, (error, body) => {
      if (error !== null) {
        done(error, undefined)
        return
      }
      build(request, body, done, () => { wire.bodies.release(body) })
    })
  })
}
