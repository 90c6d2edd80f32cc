// Reading a hook request body into one buffer, for the projection (src/protocol/projection.ts)
// to build from. With a Content-Length (Metacontroller's Go client always sends one) the buffer
// is allocated once at that size and each chunk copied into it as it arrives, so a body is held
// once, not as its chunks and then again as their concatenation; without one the chunks are
// joined at the end. The bytes of the bodies being read are bounded by the in-flight budget
// (src/protocol/inflight.ts), which admits a call by its Content-Length before its body is read.
//
// A large body's buffer is given back once the body is built (BodyBuffers.release) and read into
// again by the next large body that fits in it. A fresh buffer of tens of MiB costs more than reading
// into it: every page of it is faulted in and zeroed by the kernel as the first bytes land, and
// V8 counts it as new external memory, which brings garbage collections forward (at 5,000 Nodes,
// 69 MiB, reading into a fresh buffer took five times as long as into one read into before). One
// buffer is kept, and only when no other large body is being read: so the spare never adds to
// the bytes in flight (a body being read has its buffer, taken or fresh; a spare sits idle only
// while no large body is read). It is dropped when a larger body comes and after SPARE_IDLE_MS
// without a body. A body over SPARE_MAX_BYTES always gets a fresh buffer: V8 schedules its
// collections by the memory it sees allocated, and a buffer read into again is not seen, so the
// garbage of earlier syncs stays in the heap longer; at 15,000 Nodes (209 MiB) that cost 100 MiB
// more at the peak than the page faults it saved were worth. A fresh large buffer is a WebAssembly
// memory where the accelerated skip runs (src/protocol/skip-wasm.ts), so that it skips the body
// where it lies. The buffers are the app's (src/protocol/wire-state.ts): two apps in one process
// share none.
import type { WasmSkip } from './skip-wasm.js'

/**
 * The largest hook request read: a DaemonJob over 15,000 Nodes as busy kubelets report them (the
 * largest managed clusters), with a Job per Node, is about 210 MiB. The limit costs nothing by
 * itself: a body is held once, at its own size, and the in-flight budget bounds how many are.
 */
export const DEFAULT_BODY_LIMIT = 256 * 1024 * 1024

const EMPTY = Buffer.alloc(0)

/** Bodies smaller than this are read into buffers of their own (Node's pool, for small ones). */
export const SPARE_MIN_BYTES = 1024 * 1024
/** Bodies larger than this are never read into a spare buffer (see the top of the file). */
export const SPARE_MAX_BYTES = 128 * 1024 * 1024
/** How long the spare buffer is kept without a body to read into it. */
const SPARE_IDLE_MS = 60_000

/** Where bodies are read into, and given back once nothing refers to their bytes. */
export interface BodyStore {
  take: (size: number) => Buffer
  release: (body: Buffer) => void
}

/** The buffers of the large bodies one app reads (src/protocol/wire-state.ts): its spare, and those in use. */
export class BodyBuffers implements BodyStore {
  /** The buffer given back by the last large body, whole, to read the next one into. */
  private spare: Buffer | undefined
  /** The large bodies being read or built, each in a buffer of its own. */
  private largeBodies = 0
  /** The whole buffer of each large body, by its memory: only those are taken back. */
  private readonly wholeBuffers = new WeakMap<ArrayBufferLike, Buffer>()
  /** The memories of the large bodies being read or built: each is given back once. */
  private readonly inUse = new WeakSet<ArrayBufferLike>()
  private dropSpare: NodeJS.Timeout | undefined

  /** `wasm` gives large bodies memories of its own; without it they are plain buffers. */
  constructor (private readonly wasm?: WasmSkip) {}

  /**
   * A buffer of `size` bytes to read a body into: the spare when it is large enough, else a
   * WebAssembly memory of its own when there can be one.
   */
  take (size: number): Buffer {
    if (size < SPARE_MIN_BYTES) return Buffer.allocUnsafe(size)
    this.largeBodies++
    const taken = this.spare
    this.spare = undefined
    if (taken !== undefined && taken.length >= size) {
      this.inUse.add(taken.buffer)
      return taken.subarray(0, size)
    }
    const fresh = this.wasm?.bodyMemory(size) ?? Buffer.allocUnsafeSlow(size)
    this.wholeBuffers.set(fresh.buffer, fresh)
    this.inUse.add(fresh.buffer)
    return fresh
  }

  /**
   * Gives the buffer of a body back, once nothing refers to its bytes any more (what was built of
   * it was copied out of it): the next large body is read into it, unless another is being read
   * (then it is garbage). Call it once per body read; any other buffer is left alone.
   */
  release (body: Buffer): void {
    const whole = this.wholeBuffers.get(body.buffer)
    if (whole === undefined || !this.inUse.delete(body.buffer)) return
    this.largeBodies--
    if (this.largeBodies > 0 || whole.length > SPARE_MAX_BYTES) return
    this.spare = whole
    if (this.dropSpare === undefined) {
      this.dropSpare = setTimeout(() => { this.spare = undefined }, SPARE_IDLE_MS)
      this.dropSpare.unref()
    } else {
      this.dropSpare.refresh()
    }
  }

  /** Drops the spare and its timer (the app closes). */
  close (): void {
    clearTimeout(this.dropSpare)
    this.spare = undefined
  }
}

/** What the parser needs of fastify's errors (its `errorCodes`), to refuse a body as fastify does. */
export interface BodyErrors {
  tooLarge: () => Error
  badLength: () => Error
}

/**
 * Reads a request body as fastify's own body reader does: refused (413) when its Content-Length
 * or its bytes exceed `limit`, refused (400) when its bytes differ from its Content-Length or the
 * stream fails. Calls `done` once. The caller gives `body` back to `buffers` once it is done with
 * its bytes.
 */
export function readBody (
  buffers: BodyStore,
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
  const sized = Number.isSafeInteger(contentLength) && contentLength >= 0 ? buffers.take(contentLength) : undefined
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
      if (sized !== undefined) buffers.release(sized)
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
      if (sized !== undefined) buffers.release(sized)
      done(error, EMPTY)
      return
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength ?? received) !== contentLength) {
      if (sized !== undefined) buffers.release(sized)
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
