// Running through JSON the hooks do not read, without building it (docs/wire.md, "The skipper").
// One way, in TypeScript: between strings a byte at a time (Kubernetes' JSON has few bytes
// there); in a string a dozen bytes one by one (most names and values are shorter), then
// Buffer's indexOf for its closing quote, which costs one call however far it jumps.
//
// What a skipped value is checked for: strings closed, brackets balanced and matched, nothing
// between strings but what JSON allows there (blanks, punctuation, numbers, literals). Its tokens
// are not checked in order: `[1 2]` in a part no hook reads passes. Metacontroller sends what its
// JSON encoder wrote; the point is that a truncated or foreign body never does. Anything else
// throws NotProjected, and the caller parses the body whole with its strict parser.

/** Why a body was not projected: the caller parses it whole instead. */
export class NotProjected extends Error {
  override name = 'NotProjected'
}

export function fail (what: string, at: number): never {
  throw new NotProjected(`${what} at byte ${at}`)
}

export const QUOTE = 0x22
export const BACKSLASH = 0x5c

/**
 * How deep a skipped value may nest before the body is left to the strict parser. Kubernetes
 * objects nest a few dozen levels.
 */
export const MAX_DEPTH = 10_000

/**
 * What a byte is between strings: 0 a byte JSON does not allow there. The WebAssembly skip
 * (src/protocol/skip.wat) reads the same table, copied into each of its memories.
 */
const BETWEEN = 1
const STRING = 2
const OPEN = 3
const CLOSE = 4
export const CLASS = new Uint8Array(256)
for (const c of ' \t\r\n,:0123456789+-.eEtruefalsn') CLASS[c.charCodeAt(0)] = BETWEEN
CLASS[QUOTE] = STRING
CLASS[0x7b] = OPEN
CLASS[0x5b] = OPEN
CLASS[0x7d] = CLOSE
CLASS[0x5d] = CLOSE

/** Bytes a scalar (number or literal) is made of. */
const SCALAR = new Uint8Array(256)
for (const c of '0123456789+-.eEtruefalsn') SCALAR[c.charCodeAt(0)] = 1

/**
 * How far a string is looked at byte by byte before indexOf looks for its end: a loop is cheaper
 * than the call for a string shorter than about a dozen bytes (most member names, most values).
 */
export const SHORT_STRING = 12

/** Strings the strict parser must judge: as member names they could reach an object's prototype. */
export const UNSAFE_NAMES = ['__proto__', 'constructor']
const UNSAFE_BYTES = UNSAFE_NAMES.map(name => Buffer.from(JSON.stringify(name)))
/** The lengths of the unsafe names written plainly, quotes included. */
export const UNSAFE_LENGTHS = new Set(UNSAFE_BYTES.map(name => name.length))
/** What any spelling of an unsafe name in JSON holds: the name, or an escape of one of its characters. */
const UNSAFE_HINTS = [...UNSAFE_NAMES, '\\u005', '\\u006', '\\u007']
/** The longest an unsafe name can be written with escapes (`\u005f` for each character), quotes included. */
const LONGEST_ESCAPED_NAME = 2 + 6 * Math.max(...UNSAFE_NAMES.map(name => name.length))

/** The index just after the string that opens at `start`. */
export function skipString (body: Buffer, start: number): number {
  let at = start + 1
  const stop = Math.min(at + SHORT_STRING, body.length)
  while (at < stop) {
    const byte = body[at] as number
    if (byte === QUOTE) return at + 1
    at += byte === BACKSLASH ? 2 : 1
  }
  return endOfString(body, at - 1)
}

/**
 * The index just after the string whose bytes up to `from` (at least its opening quote) were
 * looked at already: the first quote not escaped by an odd number of backslashes before it.
 */
export function endOfString (body: Buffer, from: number): number {
  let at = from + 1
  for (;;) {
    at = body.indexOf(QUOTE, at)
    if (at < 0) fail('a string that never closes', body.length)
    let backslashes = 0
    while (body[at - 1 - backslashes] === BACKSLASH) backslashes++
    if ((backslashes & 1) === 0) return at + 1
    at++
  }
}

/**
 * The index just after the value at `at`, its structure checked (see the top of the file); with
 * `judged`, refusing the strings the strict parser must judge. `closers` is room for the closer
 * each open bracket waits for.
 */
export function skipValue (body: Buffer, at: number, closers: Uint8Array, judged: boolean): number {
  const first = body[at] as number
  if (CLASS[first] !== OPEN) {
    if (first === QUOTE) {
      const end = skipString(body, at)
      if (judged) refuseUnsafe(body, at, end)
      return end
    }
    let end = at
    while (SCALAR[body[end] as number] === 1) end++
    if (end === at) fail('expected a value', at)
    return end
  }
  const length = body.length
  let depth = 0
  while (at < length) {
    const byte = body[at] as number
    const kind = CLASS[byte] as number
    if (kind === STRING) {
      const end = skipString(body, at)
      if (judged) refuseUnsafe(body, at, end)
      at = end
      continue
    }
    if (kind === OPEN) {
      if (depth === MAX_DEPTH) fail('nesting too deep', at)
      // `[` + 2 is `]`, `{` + 2 is `}`.
      closers[depth++] = byte + 2
    } else if (kind === CLOSE) {
      if (depth === 0 || closers[--depth] !== byte) fail('a bracket that does not match', at)
      if (depth === 0) return at + 1
    } else if (kind !== BETWEEN) {
      fail('a byte JSON does not allow there', at)
    }
    at++
  }
  return fail('a value that never closes', length)
}

/** Throws when the string from `start` to `end` (quotes included) is one the strict parser must judge. */
export function refuseUnsafe (body: Buffer, start: number, end: number): void {
  const length = end - start
  if (length > LONGEST_ESCAPED_NAME) return
  const first = body[start + 1]
  // Unsafe names start with `_` or `c`, or with an escape.
  if (first !== 0x5f && first !== 0x63 && first !== BACKSLASH) return
  let escaped = false
  for (let i = start + 1; i < end - 1 && !escaped; i++) escaped = body[i] === BACKSLASH
  if (escaped) {
    const name = JSON.parse(body.toString('utf8', start, end)) as string
    if (UNSAFE_NAMES.includes(name)) fail('an escaped unsafe name', start)
    return
  }
  if (!UNSAFE_LENGTHS.has(length)) return
  for (const name of UNSAFE_BYTES) {
    if (body.compare(name, 0, name.length, start, end) === 0) fail(name.toString(), start)
  }
}

/**
 * Throws NotProjected when kept JSON holds a string the strict parser must judge. An unsafe name
 * is either spelled out or written with an escape of one of its characters (`\u005f` for `_`,
 * `\u006…` and `\u007…` for its letters): without any of these the kept bytes are passed by a few
 * searches at memory speed; with one, each of their strings is looked at.
 */
export function refuseUnsafeKept (kept: Buffer): void {
  if (!UNSAFE_HINTS.some(hint => kept.includes(hint))) return
  skipValue(kept, 0, new Uint8Array(MAX_DEPTH), true)
}
