// Building a hook request from its bytes, only as far as its shape says (src/k8s/reads.ts). What a
// shape skips is scanned, never built: no strings, objects or numbers are made for it, so the
// memory and the time a request costs follow what the hooks read rather than what Metacontroller
// sent (at 15,000 Nodes, a few MiB of objects out of 200 MiB of JSON).
//
// How: the reader walks the body once, copying the bytes of what the shape keeps (member names,
// values, the punctuation between them) into a compact JSON text of their own, runs of adjacent
// kept bytes in one copy; then JSON.parse builds that text, once. JSON.parse builds objects
// faster than code of ours could, and objects the hooks then read fast.
//
// What is checked, and what falls back:
// - A skipped value is checked for its structure: strings closed, brackets balanced and matched,
//   nothing between strings but what JSON allows there (blanks, punctuation, numbers, literals).
//   Its tokens are not checked in order: `[1 2]` in a part no hook reads passes. Metacontroller
//   sends what its JSON encoder wrote; the point is that a truncated or foreign body never does.
//   What is kept, JSON.parse judges.
// - Anything this reader does not accept throws, and the caller then parses the body whole with
//   its strict JSON parser, which gives the usual answer: a 400 that says what is wrong, or, if
//   the body is valid after all, the whole request. The body itself is never changed.
// - A `"__proto__"` or `"constructor"` string in anything kept (a member name, or any string of a
//   value kept whole) throws too, and the strict parser, which refuses such keys, decides.
import type { Shape } from '../k8s/reads.js'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/** Bytes that may stand between a skipped value's strings: blanks, `,` `:`, numbers, `true` `false` `null`. */
const BETWEEN_STRINGS = new Uint8Array(256)
for (const c of ' \t\r\n,:0123456789+-.eEtruefalsn') BETWEEN_STRINGS[c.charCodeAt(0)] = 1
/** Bytes a scalar (number or literal) is made of. */
const SCALAR = new Uint8Array(256)
for (const c of '0123456789+-.eEtruefalsn') SCALAR[c.charCodeAt(0)] = 1

/** Strings the strict parser must judge: as member names they could reach an object's prototype. */
const UNSAFE_NAMES = ['__proto__', 'constructor']
const UNSAFE_BYTES = UNSAFE_NAMES.map(name => Buffer.from(JSON.stringify(name)))
const UNSAFE_LENGTHS = new Set(UNSAFE_BYTES.map(name => name.length))
/** The longest an unsafe name can be written with escapes (`\u005f` for each character), quotes included. */
const LONGEST_ESCAPED_NAME = 2 + 6 * Math.max(...UNSAFE_NAMES.map(name => name.length))
/** How far a string is scanned byte by byte before indexOf looks for its end: built, and skipped. */
const SHORT_STRING = 64
const SKIPPED_SHORT_STRING = 8

/** Why a body was not projected: the caller parses it whole instead. */
export class NotProjected extends Error {
  override name = 'NotProjected'
}

/**
 * The JSON value in `body` built as `shape` says. Throws NotProjected when the body is not one
 * JSON value this reader accepts (see above).
 */
export function project (body: Buffer, shape: Shape): unknown {
  const reader = new Reader(body)
  reader.skipBlanks()
  reader.value(shape)
  reader.skipBlanks()
  if (reader.at !== body.length) reader.fail('bytes after the value')
  return JSON.parse(reader.kept())
}

/** Buffer's own decoder, without the argument checks of toString around it (hot paths). */
interface Slicing {
  latin1Slice: (start: number, end: number) => string
  utf8Slice: (start: number, end: number) => string
}

/**
 * The kept bytes, in order: runs of the body's bytes, a run growing while what is kept next
 * comes right after it in the body (compact JSON, as Metacontroller sends it, keeps most of a
 * kept object in one run).
 */
class Kept {
  private out: Buffer
  private length = 0
  /** The run of the body not copied yet: from `runStart` to `runEnd`. */
  private runStart = 0
  private runEnd = 0

  constructor (private readonly body: Buffer) {
    this.out = Buffer.allocUnsafe(Math.max(4096, body.length >>> 4))
  }

  /** Keeps the body's bytes from `start` to `end`. */
  range (start: number, end: number): void {
    if (start === this.runEnd) {
      this.runEnd = end
      return
    }
    this.flush()
    this.runStart = start
    this.runEnd = end
  }

  /** Keeps the one byte of the body at `at`. */
  byte (at: number): void {
    this.range(at, at + 1)
  }

  private flush (): void {
    const size = this.runEnd - this.runStart
    if (size === 0) return
    if (this.length + size > this.out.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.length + size))
      this.out.copy(grown, 0, 0, this.length)
      this.out = grown
    }
    this.body.copy(this.out, this.length, this.runStart, this.runEnd)
    this.length += size
  }

  /** The kept bytes as text, once everything is kept. */
  text (): string {
    this.flush()
    return (this.out as unknown as Slicing).utf8Slice(0, this.length)
  }
}

class Reader {
  at = 0
  /** Whether the last string read by endOfString may hold an escape. */
  escaped = false
  /** Whether it holds a byte outside ASCII (and so needs UTF-8 decoding). */
  wide = false
  private readonly slicing: Slicing
  private readonly out: Kept
  constructor (private readonly body: Buffer) {
    this.slicing = body as unknown as Slicing
    this.out = new Kept(body)
  }

  /** What was kept, as JSON text. */
  kept (): string {
    return this.out.text()
  }

  fail (what: string): never {
    throw new NotProjected(`${what} at byte ${this.at}`)
  }

  skipBlanks (): void {
    const body = this.body
    let at = this.at
    for (;;) {
      const byte = body[at]
      if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break
      at++
    }
    this.at = at
  }

  /** Keeps the value at the cursor (no blanks before it) as `shape` (not `false`) says. */
  value (shape: Shape): void {
    if (shape === true || shape === false) return this.whole()
    const byte = this.body[this.at]
    if (byte === OPEN_BRACE) return this.object(shape)
    if (byte === OPEN_BRACKET) return this.array(shape)
    this.whole()
  }

  /** Keeps the value at the cursor whole. */
  private whole (): void {
    const start = this.at
    this.skipValue(true)
    this.out.range(start, this.at)
  }

  private object (shape: { readonly [member: string]: Shape }): void {
    const body = this.body
    const others: Shape = Object.hasOwn(shape, '*') ? shape['*'] as Shape : false
    this.out.byte(this.at)
    this.at++
    this.skipBlanks()
    // -1 before anything is kept, -2 right after, then where the comma after it is.
    let comma = -1
    let first = true
    for (;;) {
      if (first && body[this.at] === CLOSE_BRACE) break
      first = false
      if (body[this.at] !== QUOTE) this.fail('expected a member name')
      const start = this.at
      const key = this.key()
      const keyEnd = this.at
      this.skipBlanks()
      if (body[this.at] !== COLON) this.fail('expected :')
      const colon = this.at
      this.at++
      this.skipBlanks()
      const member = Object.hasOwn(shape, key) ? shape[key] as Shape : others
      if (member === false) {
        this.skipValue(false)
      } else {
        if (comma >= 0) this.out.byte(comma)
        this.out.range(start, keyEnd)
        this.out.byte(colon)
        this.value(member)
        comma = -2
      }
      this.skipBlanks()
      const next = body[this.at]
      if (next === CLOSE_BRACE) break
      if (next !== COMMA) this.fail('expected , or }')
      // The comma that goes before the next member kept, once one was kept before it.
      if (comma !== -1) comma = this.at
      this.at++
      this.skipBlanks()
    }
    this.out.byte(this.at)
    this.at++
  }

  private array (shape: Shape): void {
    const body = this.body
    this.out.byte(this.at)
    this.at++
    this.skipBlanks()
    if (body[this.at] !== CLOSE_BRACKET) {
      for (;;) {
        this.value(shape)
        this.skipBlanks()
        const next = body[this.at]
        if (next === CLOSE_BRACKET) break
        if (next !== COMMA) this.fail('expected , or ]')
        this.out.byte(this.at)
        this.at++
        this.skipBlanks()
      }
    }
    this.out.byte(this.at)
    this.at++
  }

  /** A member name, decoded. */
  private key (): string {
    const body = this.body
    const start = this.at
    const end = this.endOfString(start)
    this.at = end
    const key = this.escaped
      ? JSON.parse(this.slicing.utf8Slice(start, end)) as string
      : this.wide ? this.slicing.utf8Slice(start + 1, end - 1) : this.slicing.latin1Slice(start + 1, end - 1)
    if (UNSAFE_NAMES.includes(key)) this.fail(`member ${key}`)
    return key
  }

  /** Throws when the string from `start` to `end` (quotes included) is one the strict parser must judge. */
  private refuseUnsafe (start: number, end: number): void {
    const body = this.body
    const length = end - start
    if (length > LONGEST_ESCAPED_NAME) return
    const first = body[start + 1]
    // Unsafe names start with `_` or `c`, or with an escape.
    if (first !== 0x5f && first !== 0x63 && first !== BACKSLASH) return
    let escaped = false
    for (let i = start + 1; i < end - 1 && !escaped; i++) escaped = body[i] === BACKSLASH
    if (escaped) {
      if (UNSAFE_NAMES.includes(JSON.parse(body.toString('utf8', start, end)) as string)) this.fail('an escaped unsafe name')
      return
    }
    if (!UNSAFE_LENGTHS.has(length)) return
    for (const name of UNSAFE_BYTES) {
      if (body.compare(name, 0, name.length, start, end) === 0) this.fail(name.toString())
    }
  }

  /** The index just after the string that opens at `start`, found by indexOf: for strings skipped. */
  private endOfSkippedString (start: number): number {
    const body = this.body
    let at = start + 1
    for (;;) {
      at = body.indexOf(QUOTE, at)
      if (at < 0) {
        this.at = body.length
        this.fail('a string that never closes')
      }
      let backslashes = 0
      while (body[at - 1 - backslashes] === BACKSLASH) backslashes++
      if (backslashes % 2 === 0) return at + 1
      at++
    }
  }

  /**
   * The index just after the string that opens at `start`; `escaped` says whether it may hold an
   * escape.
   */
  private endOfString (start: number): number {
    const body = this.body
    let at = start + 1
    // Most strings (member names, most values) end sooner than a call to indexOf returns.
    const stop = Math.min(at + SHORT_STRING, body.length)
    let escaped = false
    let high = 0
    while (at < stop) {
      const byte = body[at] as number
      if (byte === QUOTE) {
        this.escaped = escaped
        this.wide = high >= 0x80
        return at + 1
      }
      high |= byte
      if (byte === BACKSLASH) {
        escaped = true
        at += 2
      } else {
        at++
      }
    }
    this.escaped = true
    this.wide = true
    return this.endOfSkippedString(at - 1)
  }

  /**
   * Moves the cursor past the value at it, checking its structure (see the top of the file); with
   * `built`, refusing the strings the strict parser must judge.
   */
  skipValue (built: boolean): void {
    const body = this.body
    const first = body[this.at]
    if (first === QUOTE) {
      this.at = this.endOfString(this.at)
      return
    }
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      const start = this.at
      while (SCALAR[body[this.at] as number] === 1) this.at++
      if (this.at === start) this.fail('expected a value')
      return
    }
    // The closing byte each open bracket waits for, innermost last. The bytes between strings
    // are looked at one by one (Metacontroller's JSON has few), strings are run through to their
    // closing quote: the short ones here, the long ones by indexOf, which runs at memory speed.
    const closers: number[] = []
    let at = this.at
    const length = body.length
    while (at < length) {
      const byte = body[at] as number
      if (byte === QUOTE) {
        const start = at
        at++
        const stop = Math.min(at + SKIPPED_SHORT_STRING, length)
        while (at < stop) {
          const inner = body[at] as number
          if (inner === QUOTE) break
          at += inner === BACKSLASH ? 2 : 1
        }
        at = at < stop ? at + 1 : this.endOfSkippedString(at - 1)
        if (built) this.refuseUnsafe(start, at)
        continue
      }
      if (byte === OPEN_BRACE) closers.push(CLOSE_BRACE)
      else if (byte === OPEN_BRACKET) closers.push(CLOSE_BRACKET)
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        if (closers.pop() !== byte) {
          this.at = at
          this.fail('a bracket that does not match')
        }
        if (closers.length === 0) {
          this.at = at + 1
          return
        }
      } else if (BETWEEN_STRINGS[byte] !== 1) {
        this.at = at
        this.fail('a byte JSON does not allow there')
      }
      at++
    }
    this.at = length
    this.fail('a value that never closes')
  }
}
