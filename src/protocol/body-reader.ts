// Reading a hook request body. Metacontroller sends every child and related object whole, and
// most of the bytes no hook ever reads are `metadata.managedFields`: the API server's record of
// who set which field, thousands of small nested objects per object (`"f:labels":{}` and so on).
// Parsing them into objects, and collecting those, costs more than their share of the bytes: at
// 5,000 Nodes they are a sixth of a 35 MiB request but most of its parse and garbage-collection
// time, and that cost grows faster than the request once it no longer dies young.
//
// So the hook routes cut every `"managedFields": <array or null>` member out of the raw bytes
// before JSON.parse. No hook reads managedFields, observed children are returned without them
// (keepAsObserved), and effects never write them, so what a hook sees and answers is unchanged.
// Anything unexpected leaves the body exactly as it came: the cut is only an optimisation, and
// the JSON parser still judges the body (invalid JSON, __proto__ keys: HTTP 400).
//
// Why a match is always a member name: inside a JSON string every `"` is escaped, so the closing
// quote of `managedFields"` (preceded by `s`) ends a string, which a `:` makes a member name; and
// an opening quote preceded by `{` or `,` (blanks allowed) is not escaped, so that name is
// exactly `managedFields`. UTF-8 multi-byte sequences never contain ASCII bytes, so the byte scan
// is safe on any text.

const KEY = Buffer.from('"managedFields"', 'latin1')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const NULL = Buffer.from('null', 'latin1')

function isBlank (byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}

function skipBlanks (body: Buffer, at: number): number {
  while (at < body.length && isBlank(body[at])) at++
  return at
}

function skipBlanksBack (body: Buffer, at: number): number {
  while (at >= 0 && isBlank(body[at])) at--
  return at
}

/**
 * The index just after the array that opens at `start` (`body[start]` is `[`), or -1 when it does
 * not close properly: brackets and braces balanced in order, strings closed.
 */
function endOfArray (body: Buffer, start: number): number {
  const open: number[] = []
  let i = start
  const length = body.length
  while (i < length) {
    const byte = body[i] as number
    if (byte === QUOTE) {
      i++
      for (;;) {
        if (i >= length) return -1
        const inner = body[i] as number
        if (inner === BACKSLASH) i += 2
        else if (inner === QUOTE) break
        else i++
      }
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      open.push(byte)
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      if (open.pop() !== (byte === CLOSE_BRACKET ? OPEN_BRACKET : OPEN_BRACE)) return -1
      if (open.length === 0) return i + 1
    }
    i++
  }
  return -1
}

/**
 * The byte ranges of `body` to keep, as [start, end) pairs, once its `"managedFields": [...]`
 * (or `null`) members are cut out; the whole body when it has none or anything about one looks
 * unexpected.
 */
export function keptRanges (body: Buffer): number[] {
  const whole = [0, body.length]
  let at = body.indexOf(KEY)
  if (at < 0) return whole
  const kept: number[] = []
  let from = 0
  while (at >= 0) {
    const next = at + KEY.length
    const before = skipBlanksBack(body, at - 1)
    const opener = body[before]
    const colon = skipBlanks(body, next)
    if ((opener !== OPEN_BRACE && opener !== COMMA) || body[colon] !== COLON) {
      at = body.indexOf(KEY, next)
      continue
    }
    // Its comma went with a member cut just before (a duplicate key): leave the body alone.
    if (before < from) return whole
    const value = skipBlanks(body, colon + 1)
    const end = body[value] === OPEN_BRACKET
      ? endOfArray(body, value)
      : body.subarray(value, value + NULL.length).equals(NULL) ? value + NULL.length : -1
    if (end < 0) return whole
    const after = skipBlanks(body, end)
    // Cut the member with one comma next to it, so that what remains is still one object.
    if (body[after] === COMMA) {
      kept.push(from, at)
      from = after + 1
    } else if (body[after] === CLOSE_BRACE) {
      kept.push(from, opener === COMMA ? before : at)
      from = after
    } else {
      return whole
    }
    at = body.indexOf(KEY, from)
  }
  kept.push(from, body.length)
  return kept
}

/**
 * Cuts the managedFields members (see keptRanges) out of `body` in place, moving what is kept
 * towards the start, and returns the length of what is kept: no second buffer of the size of the
 * request is allocated. `body` must be the caller's own copy.
 */
export function cutManagedFields (body: Buffer): number {
  const ranges = keptRanges(body)
  let length = 0
  for (let i = 0; i < ranges.length; i += 2) {
    const start = ranges[i] as number
    const end = ranges[i + 1] as number
    if (start !== length) body.copyWithin(length, start, end)
    length += end - start
  }
  return length
}

/** A copy of `body` without its managedFields members. */
export function withoutManagedFields (body: Buffer): Buffer {
  const copy = Buffer.from(body)
  return copy.subarray(0, cutManagedFields(copy))
}

/**
 * Reads request bodies into one buffer kept from request to request. A fresh buffer the size of a
 * large request (tens of MB) comes from the system each time and is faulted in page by page,
 * which costs several times the copy itself; a kept one is already there. It grows to the
 * largest body read (at most the body limit) and stays that size. A body's bytes are valid until
 * the next body is read: parse them at once.
 */
export class BodyBuffer {
  private buffer = Buffer.alloc(0)

  /** The chunks, copied one after the other into the kept buffer: `length` bytes in all. */
  fill (chunks: readonly Buffer[], length: number): Buffer {
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(Math.ceil(length / 0x100000) * 0x100000)
    let at = 0
    for (const chunk of chunks) at += chunk.copy(this.buffer, at)
    return this.buffer.subarray(0, at)
  }
}

/** What the parser needs of fastify's errors (its `errorCodes`), to refuse a body as fastify does. */
export interface BodyErrors {
  tooLarge: () => Error
  badLength: () => Error
}

/**
 * Reads a request body's chunks as fastify's own body reader does: refused (413) when its
 * Content-Length or its bytes exceed `limit`, refused (400) when its bytes differ from its
 * Content-Length or the stream fails. Calls `done` once.
 */
export function readChunks (
  payload: NodeJS.ReadableStream & { receivedEncodedLength?: number },
  contentLengthHeader: string | undefined,
  limit: number,
  errors: BodyErrors,
  done: (error: Error | null, chunks: Buffer[], length: number) => void
): void {
  const contentLength = Number(contentLengthHeader)
  if (contentLength > limit) {
    done(errors.tooLarge(), [], 0)
    return
  }
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
      done(errors.tooLarge(), [], 0)
      return
    }
    chunks.push(bytes)
  }
  function onEnd (error?: Error & { statusCode?: number }): void {
    stop()
    if (error != null) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400
      done(error, [], 0)
      return
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength ?? received) !== contentLength) {
      done(errors.badLength(), [], 0)
      return
    }
    done(null, chunks, received)
  }
  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnd)
  payload.resume()
}
