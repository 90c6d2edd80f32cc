// Reading a hook request body into one buffer, for the projection (src/protocol/projection.ts)
// to build from. With a Content-Length (Metacontroller's Go client always sends one) the buffer
// is allocated once at that size and each chunk copied into it as it arrives, so a body is held
// once, not as its chunks and then again as their concatenation; without one the chunks are
// joined at the end. The bytes of the bodies being read are bounded by the in-flight budget
// (src/protocol/inflight.ts), which admits a call by its Content-Length before its body is read.

/**
 * The largest hook request read: a DaemonJob over 15,000 Nodes as busy kubelets report them (the
 * largest managed clusters), with a Job per Node, is about 210 MiB. The limit costs nothing by
 * itself: a body is held once, at its own size, and the in-flight budget bounds how many are.
 */
export const DEFAULT_BODY_LIMIT = 256 * 1024 * 1024

const EMPTY = Buffer.alloc(0)

/** What the parser needs of fastify's errors (its `errorCodes`), to refuse a body as fastify does. */
export interface BodyErrors {
  tooLarge: () => Error
  badLength: () => Error
}

/**
 * Reads a request body as fastify's own body reader does: refused (413) when its Content-Length
 * or its bytes exceed `limit`, refused (400) when its bytes differ from its Content-Length or the
 * stream fails. Calls `done` once.
 */
export function readBody (
  payload: NodeJS.ReadableStream & { receivedEncodedLength?: number },
  contentLengthHeader: string | undefined,
  limit: number,
  errors: BodyErrors,
  done: (error: Error | null, body: Buffer) => void
): void {
  const contentLength = Number(contentLengthHeader)
  if (contentLength > limit) {
    done(errors.tooLarge(), EMPTY)
    return
  }
  // Allocated at the announced size; a body longer than announced is refused once it is read.
  const sized = Number.isSafeInteger(contentLength) && contentLength >= 0 ? Buffer.allocUnsafe(contentLength) : undefined
  const chunks: Buffer[] = []
  let received = 0
  const stop = (): void => {
    payload.removeListener('data', onData)
    payload.removeListener('end', onEnd)
    payload.removeListener('error', onEnd)
  }
  function onData (chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    received += bytes.length
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      stop()
      done(errors.tooLarge(), EMPTY)
      return
    }
    if (sized !== undefined && received <= sized.length) bytes.copy(sized, received - bytes.length)
    else chunks.push(bytes)
  }
  function onEnd (error?: Error & { statusCode?: number }): void {
    stop()
    if (error != null) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400
      done(error, EMPTY)
      return
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength ?? received) !== contentLength) {
      done(errors.badLength(), EMPTY)
      return
    }
    done(null, sized ?? Buffer.concat(chunks, received))
  }
  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnd)
  payload.resume()
}
