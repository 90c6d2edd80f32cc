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
// Where the time goes, and so how the walk is written (docs/architecture.md, "What it costs in
// time"): a JavaScript loop costs about a nanosecond and a half per byte it looks at, and a call
// to Buffer's indexOf about twenty nanoseconds however far it jumps. So the walk looks at as few
// bytes one by one as it can:
// - member names are matched against the shape's names as bytes (no string is made for a name,
//   except one written with escapes);
// - an object or array kept whole or skipped is run through by WebAssembly with SIMD, sixteen
//   bytes of a string at a time (src/protocol/skip-wasm.ts), when the body lies in a WebAssembly
//   memory, as a large body read off a socket does (src/protocol/body-reader.ts);
// - otherwise by a loop that only tracks strings and brackets: the bytes between strings are few
//   in Kubernetes' JSON, and a string is looked at four bytes at a time (a 32-bit word) for its
//   first few words only, then its end is found by indexOf;
// - the strings of what is kept whole are judged once, on the kept bytes (refuseUnsafeKept);
// - a value is skipped without calls, its open brackets kept in a preallocated array, and the
//   walk that follows the shape calls itself at most MAX_WALK_DEPTH deep, so deeply nested
//   garbage cannot overflow the stack: past either limit the reader throws, and the strict parser
//   judges.
//
// An object of a memoized shape (a child or related object, a parent's spec or status) whose bytes
// are those it was built from before is not walked at all: a stand-in is kept for it, and the
// object built then takes its place after JSON.parse (memoObject, restore; src/protocol/object-memo.ts).
// One the hooks read a sliver of (a Node) is walked, and gets a stand-in when what is kept of it
// is the text it was built from before.
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
//   value kept whole), or as the name of a member of an object the shape names members of, throws
//   too, and the strict parser, which refuses such keys, decides.
import { isAscii } from 'node:buffer'
import { endianness } from 'node:os'
import type { ObjectShape, Shape } from '../k8s/reads.js'
import { ObjectMemo, worthRemembering } from './object-memo.js'
import { BETWEEN, CLASS, CLOSE, MAX_DEPTH, OPEN, STRING, skipperOf } from './skip-wasm.js'

export { MAX_DEPTH }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/** Bytes a scalar (number or literal) is made of. */
const SCALAR = new Uint8Array(256)
for (const c of '0123456789+-.eEtruefalsn') SCALAR[c.charCodeAt(0)] = 1
/** Blanks JSON allows between tokens. */
const BLANK = new Uint8Array(256)
for (const c of ' \t\r\n') BLANK[c.charCodeAt(0)] = 1

/**
 * How deep the walk that follows the shape may go: it calls itself for each level (arrays in
 * arrays go on with the same shape), and stays far from the end of the stack.
 */
export const MAX_WALK_DEPTH = 512
/** The closer each open bracket of the value being skipped waits for: reused, the reader is synchronous. */
const CLOSERS = new Uint8Array(MAX_DEPTH)

/** Strings the strict parser must judge: as member names they could reach an object's prototype. */
const UNSAFE_NAMES = ['__proto__', 'constructor']
const UNSAFE_BYTES = UNSAFE_NAMES.map(name => Buffer.from(JSON.stringify(name)))
const UNSAFE_LENGTHS = new Set(UNSAFE_BYTES.map(name => name.length))
/** What any spelling of an unsafe name in JSON holds: the name itself, or an escape of one of its characters. */
const UNSAFE_HINTS = [...UNSAFE_NAMES, '\\u005', '\\u006', '\\u007']
/** The longest an unsafe name can be written with escapes (`\u005f` for each character), quotes included. */
const LONGEST_ESCAPED_NAME = 2 + 6 * Math.max(...UNSAFE_NAMES.map(name => name.length))
/**
 * How far a string is looked at byte by byte before indexOf looks for its end: a loop is cheaper
 * than the call for a string shorter than about a dozen bytes (most member names, most values).
 */
const SHORT_STRING = 12
/** The same for a string looked at four bytes at a time. */
const SHORT_STRING_WORDS = 6
/** Whether a 32-bit word holds its first byte lowest (quoteOrBackslash relies on it). */
const LITTLE_ENDIAN = endianness() === 'LE'
/** Runs of kept bytes shorter than this are copied by a loop, longer ones by Buffer's copy. */
const SHORT_RUN = 48

/** Why a body was not projected: the caller parses it whole instead. */
export class NotProjected extends Error {
  override name = 'NotProjected'
}

/**
 * A shape that names members, made ready for matching names as bytes: the names' UTF-8 bytes and
 * the shape of each, and the shape of the members it does not name.
 */
interface Members {
  readonly names: readonly Buffer[]
  readonly strings: readonly string[]
  readonly shapes: readonly Compiled[]
  readonly others: Compiled
  /** For a memoized shape (an object remembered between requests), what its memo keys start with; else ''. */
  readonly memo: string
  /** Whether a memoized shape is this one or below it: where the built request holds stand-ins. */
  readonly hasMemo: boolean
}
type Compiled = boolean | Members

const compiled = new WeakMap<object, Members>()

/** What was built of the objects of memoized shapes, for the requests that carry them again. */
export const OBJECT_MEMO = new ObjectMemo()
const memoizedShapes = new WeakSet<object>()
const memoizedCopies = new WeakMap<object, ObjectShape>()
let memoShapes = 0

/**
 * `shape`, for an object that is the value of a member (a child or related object in its group's
 * map): what is built of it is remembered and given again for the same bytes under the same
 * member name (src/protocol/object-memo.ts). The same shape gives the same memoized shape.
 */
export function memoized (shape: ObjectShape): ObjectShape {
  let copy = memoizedCopies.get(shape)
  if (copy === undefined) {
    copy = { ...shape }
    memoizedShapes.add(copy)
    memoizedCopies.set(shape, copy)
  }
  return copy
}

/** `shape` made ready for the reader, once per shape object. */
function compile (shape: Shape): Compiled {
  if (typeof shape === 'boolean') return shape
  let members = compiled.get(shape)
  if (members === undefined) {
    const strings = Object.keys(shape).filter(name => name !== '*')
    const shapes = strings.map(name => compile(shape[name] as Shape))
    const others = Object.hasOwn(shape, '*') ? compile(shape['*'] as Shape) : false
    const memo = memoizedShapes.has(shape) ? `${++memoShapes}:` : ''
    members = {
      names: strings.map(name => Buffer.from(name, 'utf8')),
      strings,
      shapes,
      others,
      memo,
      hasMemo: memo !== '' || [...shapes, others].some(s => typeof s !== 'boolean' && s.hasMemo)
    }
    compiled.set(shape, members)
  }
  return members
}

/**
 * The JSON value in `body` built as `shape` says. Throws NotProjected when the body is not one
 * JSON value this reader accepts (see above).
 */
export function project (body: Buffer, shape: Shape): unknown {
  const reader = new Reader(body)
  const ready = compile(shape)
  reader.skipBlanks()
  reader.value(ready, 0)
  reader.skipBlanks()
  if (reader.at !== body.length) reader.fail('bytes after the value')
  const built = JSON.parse(reader.kept()) as unknown
  if (typeof ready !== 'boolean' && ready.hasMemo) reader.restore(built, ready)
  return built
}

/** Buffer's own decoders, without the argument checks of toString around them (hot paths). */
interface Slicing {
  utf8Slice: (start: number, end: number) => string
  latin1Slice: (start: number, end: number) => string
}

/**
 * The buffer the kept bytes are copied into, kept from one body to the next: a fresh one of
 * megabytes is paid for in page faults and brings garbage collections forward. Up to
 * SCRATCH_MAX_BYTES; a larger one is used once and dropped.
 */
let scratch: Buffer = Buffer.alloc(0)
const SCRATCH_MAX_BYTES = 64 * 1024 * 1024

/**
 * The kept bytes, in order: runs of the body's bytes, a run growing while what is kept next
 * comes right after it in the body (compact JSON, as Metacontroller sends it, keeps most of a
 * kept object in one run).
 */
class Kept {
  /** Allocated by the first copy: a reader that only checks (refuseUnsafeKept) never needs one. */
  private out: Buffer = Buffer.alloc(0)
  private length = 0
  /** The run of the body not copied yet: from `runStart` to `runEnd`. */
  private runStart = 0
  private runEnd = 0

  constructor (private readonly body: Buffer) {}

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

  /** Room for `size` more bytes after the kept ones. */
  private reserve (size: number): void {
    if (this.length + size <= this.out.length) return
    if (this.out.length === 0) {
      // The text is copied out of it by text(): one buffer serves every body, one after the other.
      const wanted = Math.max(4096, this.body.length >>> 3, size)
      this.out = scratch.length >= wanted ? scratch : Buffer.allocUnsafeSlow(wanted)
    } else {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.length + size))
      this.out.copy(grown, 0, 0, this.length)
      this.out = grown
    }
  }

  /** Keeps the digits of `n`, a whole number that is not in the body (a stand-in). */
  number (n: number): void {
    this.flush()
    let digits = 1
    for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++
    this.reserve(digits)
    const out = this.out
    for (let i = this.length + digits - 1, rest = n; i >= this.length; i--, rest = Math.floor(rest / 10)) out[i] = 0x30 + rest % 10
    this.length += digits
  }

  /** The buffer the kept bytes are in, up to mark(): another, larger one once more are kept. */
  get bytes (): Buffer {
    return this.out
  }

  /** Forgets the bytes kept after the first `length` (a mark()). */
  truncate (length: number): void {
    this.flush()
    this.length = length
  }

  /** How many bytes are kept so far. */
  mark (): number {
    this.flush()
    return this.length
  }

  private flush (): void {
    const start = this.runStart
    const size = this.runEnd - start
    if (size === 0) return
    this.runStart = this.runEnd
    this.reserve(size)
    // Most runs are a member or two: a loop copies them sooner than a call into C++ would.
    if (size < SHORT_RUN) {
      const out = this.out
      const body = this.body
      let to = this.length
      for (let from = start; from < this.runEnd; from++) out[to++] = body[from] as number
    } else {
      this.body.copy(this.out, this.length, start, this.runEnd)
    }
    this.length += size
  }

  /** The kept bytes as text, once everything is kept. */
  text (): string {
    this.flush()
    const out = this.out
    if (out.length > scratch.length && out.length <= SCRATCH_MAX_BYTES) scratch = out
    return this.decode(0, this.length)
  }

  /** The kept bytes from `start` to `end` as text, once no unsafe name is found in them. */
  private decode (start: number, end: number): string {
    const kept = this.out.subarray(start, end)
    refuseUnsafeKept(kept)
    // ASCII (what Kubernetes' JSON mostly is) becomes a string by a copy; UTF-8 is decoded.
    const slicing = this.out as unknown as Slicing
    return isAscii(kept) ? slicing.latin1Slice(start, end) : slicing.utf8Slice(start, end)
  }
}

class Reader {
  at = 0
  /** The objects of memoized shapes found in the memo, in the order of their stand-ins in the kept text. */
  private readonly recalled: unknown[] = []
  /**
   * Where the objects of memoized shapes not in the memo lie, by memo key, to remember once built:
   * in the body, or (`byText`) in the kept text.
   */
  private readonly unknown = new Map<string, { start: number, end: number, textLength: number, byText: boolean }>()
  private readonly now = Date.now()
  private readonly slicing: Slicing
  private readonly out: Kept
  /** The body as 32-bit words, when it starts on a word boundary (a body read off a socket does). */
  private readonly words: Int32Array | undefined
  /** WebAssembly's skip (src/protocol/skip-wasm.ts), when the body lies in a memory of its. */
  private readonly skip: ((at: number, end: number) => number) | undefined
  constructor (private readonly body: Buffer) {
    this.slicing = body as unknown as Slicing
    this.out = new Kept(body)
    this.skip = skipperOf(body)
    this.words = LITTLE_ENDIAN && (body.byteOffset & 3) === 0 ? new Int32Array(body.buffer, body.byteOffset, body.length >>> 2) : undefined
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
    while (BLANK[body[at] as number] === 1) at++
    this.at = at
  }

  /** Keeps the value at the cursor (no blanks before it) as `shape` says; `depth` is how deep the walk is. */
  value (shape: Compiled, depth: number): void {
    if (typeof shape === 'boolean') return this.whole()
    const byte = this.body[this.at]
    if (byte === OPEN_BRACE) return this.object(shape, depth + 1)
    if (byte === OPEN_BRACKET) return this.array(shape, depth + 1)
    this.whole()
  }

  /**
   * Keeps the value at the cursor whole. Its strings are judged once everything is kept
   * (refuseUnsafeKept), so that it is skipped as fast as what is not kept.
   */
  private whole (): void {
    const start = this.at
    this.skipValue(false)
    this.out.range(start, this.at)
  }

  private object (shape: Members, depth: number): void {
    if (depth > MAX_WALK_DEPTH) this.fail('nesting too deep')
    const body = this.body
    this.out.byte(this.at)
    this.at++
    if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
    // -1 before anything is kept, -2 right after, then where the comma after it is.
    let comma = -1
    if (body[this.at] !== CLOSE_BRACE) {
      for (;;) {
        if (body[this.at] !== QUOTE) this.fail('expected a member name')
        const start = this.at
        const member = this.member(shape)
        const keyEnd = this.at
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        if (body[this.at] !== COLON) this.fail('expected :')
        const colon = this.at
        this.at++
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        if (member === false) {
          this.skipValue(false)
        } else {
          if (comma >= 0) this.out.byte(comma)
          this.out.range(start, keyEnd)
          this.out.byte(colon)
          if (typeof member !== 'boolean' && member.memo !== '') this.memoObject(member, start, keyEnd, depth)
          else this.value(member, depth)
          comma = -2
        }
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        const next = body[this.at]
        if (next === CLOSE_BRACE) break
        if (next !== COMMA) this.fail('expected , or }')
        // The comma that goes before the next member kept, once one was kept before it.
        if (comma !== -1) comma = this.at
        this.at++
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
      }
    }
    this.out.byte(this.at)
    this.at++
  }

  /**
   * The object at the cursor, the value of the member named by the bytes from `nameStart` to
   * `nameEnd` (quotes included), of a memoized shape. When the memo has it (the same name, the
   * same bytes), a stand-in is kept for it: its index in `recalled`, a number. Else it is kept as
   * any other object; an object read to a sliver (not worth remembering by its bytes) is then
   * looked up by the text kept of it, and given a stand-in too when that text is the one the memo
   * has. Where an object not in the memo lies (in the body, or in the kept text) is noted, for
   * restore to remember what is built of it. Any other value is kept as the shape says, but a
   * number, which the strict parser judges: no number there may be taken for a stand-in. A name
   * written with escapes or other than ASCII is not memoized: restore finds what to remember by
   * the decoded name, which is then the name's bytes.
   */
  private memoObject (shape: Members, nameStart: number, nameEnd: number, depth: number): void {
    const body = this.body
    const start = this.at
    const first = body[start] as number
    if (first !== OPEN_BRACE) {
      if (first === 0x2d || (first >= 0x30 && first <= 0x39)) this.fail('a number where an object is remembered')
      return this.value(shape, depth)
    }
    for (let i = nameStart + 1; i < nameEnd - 1; i++) {
      const byte = body[i] as number
      if (byte === BACKSLASH || byte >= 0x80) return this.object(shape, depth + 1)
    }
    const key = shape.memo + this.slicing.latin1Slice(nameStart + 1, nameEnd - 1)
    const known = OBJECT_MEMO.recall(key, body, start, this.now)
    if (known !== undefined) {
      this.at = start + known.bytes.length
      this.standIn(known.built)
      return
    }
    const mark = this.out.mark()
    const standIns = this.recalled.length
    this.object(shape, depth + 1)
    const textEnd = this.out.mark()
    const textLength = textEnd - mark
    // With stand-ins inside (a memoized shape within this one; none today), neither its kept text
    // nor what is built of it is the object's: the stand-ins say what stands where in this
    // request only, and restore does not look inside what it remembers.
    if (this.recalled.length !== standIns) return
    if (worthRemembering(this.at - start, textLength)) {
      if (OBJECT_MEMO.hasRoom(this.now)) this.unknown.set(key, { start, end: this.at, textLength, byText: false })
      return
    }
    const byText = OBJECT_MEMO.recallText(key, this.out.bytes, mark, textEnd, this.now)
    if (byText !== undefined) {
      this.out.truncate(mark)
      this.standIn(byText.built)
      return
    }
    if (OBJECT_MEMO.hasRoom(this.now)) this.unknown.set(key, { start: mark, end: textEnd, textLength, byText: true })
  }

  /** Keeps a stand-in for `built`, an object of the memo: its index in `recalled`. */
  private standIn (built: unknown): void {
    this.out.number(this.recalled.push(built) - 1)
  }

  /**
   * Completes what JSON.parse built of the kept text, following the shape as the reader did: the
   * objects the memo had in place of their stand-ins, and the objects of memoized shapes it did
   * not have remembered.
   */
  restore (value: unknown, shape: Members): void {
    if (value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const element of value) this.restore(element, shape)
      return
    }
    const record = value as Record<string, unknown>
    for (const name in record) {
      const index = shape.strings.indexOf(name)
      const member = index >= 0 ? shape.shapes[index] as Compiled : shape.others
      if (typeof member === 'boolean' || !member.hasMemo) continue
      const built = record[name]
      if (member.memo === '') {
        this.restore(built, member)
      } else if (typeof built === 'number') {
        record[name] = this.recalled[built]
      } else {
        const key = member.memo + name
        const at = this.unknown.get(key)
        if (at !== undefined) OBJECT_MEMO.remember(key, at.byText ? this.out.bytes : this.body, at.start, at.end, built, at.textLength, this.now, at.byText)
      }
    }
  }

  private array (shape: Members, depth: number): void {
    if (depth > MAX_WALK_DEPTH) this.fail('nesting too deep')
    const body = this.body
    this.out.byte(this.at)
    this.at++
    if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
    if (body[this.at] !== CLOSE_BRACKET) {
      for (;;) {
        this.value(shape, depth)
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        const next = body[this.at]
        if (next === CLOSE_BRACKET) break
        if (next !== COMMA) this.fail('expected , or ]')
        this.out.byte(this.at)
        this.at++
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
      }
    }
    this.out.byte(this.at)
    this.at++
  }

  /**
   * Moves the cursor past the member name at it and gives the shape `shape` has for that member.
   * A name without escapes is compared with the shape's names as bytes; one with escapes is
   * decoded first.
   */
  private member (shape: Members): Compiled {
    const body = this.body
    const start = this.at + 1
    let at = start
    const stop = Math.min(start + SHORT_STRING, body.length)
    let escaped = false
    while (at < stop) {
      const byte = body[at] as number
      if (byte === QUOTE) break
      if (byte === BACKSLASH) {
        escaped = true
        at += 2
      } else {
        at++
      }
    }
    if (at >= stop) {
      at = this.endOfString(at - 1) - 1
      if (!escaped) for (let i = start; i < at && !escaped; i++) escaped = body[i] === BACKSLASH
    }
    this.at = at + 1
    const length = at - start
    if (escaped) {
      const name = JSON.parse(this.slicing.utf8Slice(start - 1, at + 1)) as string
      if (UNSAFE_NAMES.includes(name)) this.fail(`member ${name}`)
      const index = shape.strings.indexOf(name)
      return index >= 0 ? shape.shapes[index] as Compiled : shape.others
    }
    if (UNSAFE_LENGTHS.has(length + 2)) this.refuseUnsafe(start - 1, at + 1)
    const names = shape.names
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as Buffer
      if (name.length !== length) continue
      let j = 0
      while (j < length && name[j] === body[start + j]) j++
      if (j === length) return shape.shapes[i] as Compiled
    }
    return shape.others
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

  /**
   * The index just after the string whose bytes up to `from` (at least its opening quote) were
   * looked at already, found by indexOf: the first quote not escaped by an odd number of
   * backslashes before it.
   */
  private endOfString (from: number): number {
    const body = this.body
    let at = from + 1
    for (;;) {
      at = body.indexOf(QUOTE, at)
      if (at < 0) {
        this.at = body.length
        this.fail('a string that never closes')
      }
      let backslashes = 0
      while (body[at - 1 - backslashes] === BACKSLASH) backslashes++
      if ((backslashes & 1) === 0) return at + 1
      at++
    }
  }

  /**
   * Moves the cursor past the value at it, checking its structure (see the top of the file); with
   * `built`, refusing the strings the strict parser must judge.
   */
  skipValue (built: boolean): void {
    const body = this.body
    const length = body.length
    let at = this.at
    const first = body[at] as number
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      if (first === QUOTE) {
        const end = this.skipString(at)
        if (built) this.refuseUnsafe(at, end)
        this.at = end
        return
      }
      while (SCALAR[body[at] as number] === 1) at++
      if (at === this.at) this.fail('expected a value')
      this.at = at
      return
    }
    if (this.skip !== undefined) {
      const end = this.skip(at, length)
      if (end < 0) {
        this.at = at
        this.fail(`a value skipped by WebAssembly (${end})`)
      }
      this.at = end
      return
    }
    // The closer each open bracket waits for, innermost last. The bytes between strings are
    // looked at one by one (Metacontroller's JSON has few), strings are run through to their
    // closing quote.
    const closers = CLOSERS
    let depth = 0
    while (at < length) {
      const byte = body[at] as number
      const kind = CLASS[byte] as number
      if (kind === STRING) {
        const end = this.skipString(at)
        if (built) this.refuseUnsafe(at, end)
        at = end
        continue
      }
      if (kind === BETWEEN) {
        at++
        continue
      }
      if (kind === OPEN) {
        if (depth === MAX_DEPTH) {
          this.at = at
          this.fail('nesting too deep')
        }
        // `[` + 2 is `]`, `{` + 2 is `}`.
        closers[depth++] = byte + 2
      } else if (kind === CLOSE) {
        if (depth === 0 || closers[--depth] !== byte) {
          this.at = at
          this.fail('a bracket that does not match')
        }
        if (depth === 0) {
          this.at = at + 1
          return
        }
      } else {
        this.at = at
        this.fail('a byte JSON does not allow there')
      }
      at++
    }
    this.at = length
    this.fail('a value that never closes')
  }

  /** The index just after the string that opens at `start`. */
  private skipString (start: number): number {
    const words = this.words
    if (words === undefined) return this.skipStringBytes(start)
    let at = start + 1
    let index = at >> 2
    if (index >= words.length) return this.skipStringBytes(start)
    // Four bytes at a time: the bytes of the first word before the string are masked out.
    let found = quoteOrBackslash(words[index] as number) & (-1 << ((at & 3) << 3))
    // Past a few words, indexOf finds the end sooner (a long image name, a message).
    const far = index + SHORT_STRING_WORDS
    for (;;) {
      while (found === 0) {
        if (++index === words.length) return this.skipStringBytes((index << 2) - 1)
        if (index === far) return this.endOfString((index << 2) - 1)
        found = quoteOrBackslash(words[index] as number)
      }
      // The lowest byte found: 31 - clz32 of the lowest bit is its bit, / 8 its byte.
      at = (index << 2) + ((31 - Math.clz32(found & -found)) >> 3)
      if (this.body[at] === QUOTE) return at + 1
      // A backslash: the byte after it is escaped, whatever it is.
      at += 2
      index = at >> 2
      if (index >= words.length) return this.skipStringBytes(at - 1)
      found = quoteOrBackslash(words[index] as number) & (-1 << ((at & 3) << 3))
    }
  }

  /** skipString, a byte at a time: `start` is the opening quote, or the last byte looked at already. */
  private skipStringBytes (start: number): number {
    const body = this.body
    let at = start + 1
    const stop = Math.min(at + SHORT_STRING, body.length)
    while (at < stop) {
      const byte = body[at] as number
      if (byte === QUOTE) return at + 1
      at += byte === BACKSLASH ? 2 : 1
    }
    return this.endOfString(at - 1)
  }
}

/**
 * The high bit of each byte of `word` that is a quote or a backslash, and no other bit: the exact
 * form of the "has a zero byte" test (no carry crosses from one byte into the next).
 */
function quoteOrBackslash (word: number): number {
  const quote = word ^ 0x22222222
  const backslash = word ^ 0x5c5c5c5c
  return ~((((quote & 0x7f7f7f7f) + 0x7f7f7f7f) | quote) & (((backslash & 0x7f7f7f7f) + 0x7f7f7f7f) | backslash)) & 0x80808080
}

/**
 * Throws NotProjected when the kept JSON holds a string the strict parser must judge (see the top
 * of the file). An unsafe name is either spelled out or written with an escape of one of its
 * characters (`\u005f` for `_`, `\u006…` and `\u007…` for its letters): without any of these the
 * kept bytes are passed by a few searches at memory speed; with one, each of their strings is
 * looked at.
 */
function refuseUnsafeKept (kept: Buffer): void {
  if (!UNSAFE_HINTS.some(hint => kept.includes(hint))) return
  new Reader(kept).skipValue(true)
}
