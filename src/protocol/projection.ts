// Building a hook request from its bytes, only as far as its shape says (src/k8s/reads.ts). What a
// shape skips is scanned, never built (src/protocol/json-skip.ts): the memory and the time a
// request costs follow what the hooks read rather than what Metacontroller sent. docs/wire.md
// tells the whole path of a request; in short:
// - the reader walks the body once, copying the bytes of what the shape keeps (member names,
//   values, the punctuation between them) into a compact JSON text of their own (src/protocol/
//   kept.ts); then JSON.parse builds that text, once;
// - member names are matched against the shape's names as bytes (no string is made for a name,
//   except one written with escapes);
// - an object or array kept whole or skipped is run through by WebAssembly with SIMD when the body
//   lies in one of the app's memories (a large body, src/protocol/skip-wasm.ts), else by the
//   TypeScript skipper;
// - the walk that follows the shape calls itself at most MAX_WALK_DEPTH deep, so deeply nested
//   garbage cannot overflow the stack: past it the reader throws, and the strict parser judges;
// - an object the memo of the app has (src/protocol/object-memo.ts) for the same bytes is not
//   walked: a stand-in (its index in `recalled`, a number) is kept for it, and the object built
//   before takes its place after JSON.parse (restore).
//
// Anything this reader does not accept throws NotProjected, and the caller parses the body whole
// with its strict JSON parser, which gives the usual answer: a 400 that says what is wrong, or, if
// the body is valid after all, the whole request. A `"__proto__"` or `"constructor"` string in
// anything kept, or as the name of a member of an object the shape names members of, throws too.
import type { Shape } from '../k8s/reads.js'
import type { Compiled, Members } from './compiled-shape.js'
import {
  BACKSLASH, endOfString, fail, MAX_DEPTH, QUOTE, refuseUnsafe, SHORT_STRING, skipValue, UNSAFE_LENGTHS, UNSAFE_NAMES
} from './json-skip.js'
import { Kept } from './kept.js'
import { worthRemembering } from './object-memo.js'
import type { BodySkip } from './skip-wasm.js'
import { WireState } from './wire-state.js'

export { MAX_DEPTH }
export { NotProjected } from './json-skip.js'
export { memoized, memoizedPart, PARENT_UID } from './compiled-shape.js'

const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/** Blanks JSON allows between tokens. */
const BLANK = new Uint8Array(256)
for (const c of ' \t\r\n') BLANK[c.charCodeAt(0)] = 1

/**
 * How deep the walk that follows the shape may go: it calls itself for each level (arrays in
 * arrays go on with the same shape), and stays far from the end of the stack.
 */
export const MAX_WALK_DEPTH = 512

/**
 * The JSON value in `body` built as `shape` says, with the memo, the shapes made ready and the
 * buffers of `wire` (a fresh one, remembering nothing, when none is given). Throws NotProjected
 * when the body is not one JSON value this reader accepts (see above).
 */
export function project (body: Buffer, shape: Shape, wire: WireState = new WireState({ memoBytes: 0 })): unknown {
  const reader = new Reader(body, wire)
  const ready = wire.shapes.compile(shape)
  reader.skipBlanks()
  reader.value(ready, 0)
  reader.skipBlanks()
  if (reader.at !== body.length) fail('bytes after the value', reader.at)
  const built = JSON.parse(reader.out.text()) as unknown
  if (typeof ready !== 'boolean' && ready.hasMemo) reader.restore(built, ready, undefined)
  return built
}

/** Buffer's own decoders, without the argument checks of toString around them (hot paths). */
interface Slicing {
  utf8Slice: (start: number, end: number) => string
  latin1Slice: (start: number, end: number) => string
}

/** Where an object of a remembered shape not in the memo lies: in the body, or (`byText`) in the kept text. */
interface Unknown {
  start: number
  end: number
  textLength: number
  byText: boolean
}

class Reader {
  at = 0
  readonly out: Kept
  /** The objects found in the memo, in the order of their stand-ins in the kept text. */
  private readonly recalled: unknown[] = []
  /** Where the objects not in the memo lie, by memo key, to remember once built. */
  private readonly unknown = new Map<string, Unknown>()
  /** The group of the remembered objects being read: the name of the map they are in. */
  private group: string | undefined
  /** The parent's UID, once read: the memo key of its remembered parts. */
  private parentUid: string | undefined
  /**
   * Set when a name the memo keys by is written with escapes, or the parent's UID comes twice:
   * restore, which sees names decoded and the last UID, could then take one object for another.
   */
  private rememberNothing = false
  private readonly now = Date.now()
  private readonly closers = new Uint8Array(MAX_DEPTH)
  /** The WebAssembly skip, when the body lies in one of the app's memories. */
  private readonly wasmSkip: BodySkip | undefined

  constructor (private readonly body: Buffer, private readonly wire: WireState) {
    this.out = new Kept(body, wire)
    this.wasmSkip = wire.wasm.skipperOf(body)
  }

  /** The index just after the value at `at`, its structure checked (src/protocol/json-skip.ts). */
  private skip (at: number): number {
    const body = this.body
    const first = body[at]
    const wasmSkip = this.wasmSkip
    if (wasmSkip !== undefined) {
      if (first === OPEN_BRACE || first === OPEN_BRACKET) return wasmSkip(at)
      if (first === QUOTE) return this.skipString(at, wasmSkip)
    }
    return skipValue(body, at, this.closers, false)
  }

  /**
   * The index just after the string at `at`: a short one byte by byte, a longer one by the first
   * quote after (indexOf) when no backslash stands before it, else in WebAssembly from its start.
   * A string with escaped quotes (an annotation holding a whole object as JSON, Metacontroller's
   * last-applied copy) would otherwise cost one indexOf per escaped quote.
   */
  private skipString (at: number, wasmSkip: BodySkip): number {
    const body = this.body
    const stop = Math.min(at + 1 + SHORT_STRING, body.length)
    let i = at + 1
    while (i < stop) {
      const byte = body[i] as number
      if (byte === QUOTE) return i + 1
      i += byte === BACKSLASH ? 2 : 1
    }
    const quote = body.indexOf(QUOTE, i)
    if (quote > i && body[quote - 1] !== BACKSLASH) return quote + 1
    return wasmSkip(at)
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
   * (Kept.text), so that it is skipped as fast as what is not kept.
   */
  private whole (): void {
    const start = this.at
    this.at = this.skip(start)
    this.out.range(start, this.at)
  }

  private object (shape: Members, depth: number): void {
    if (depth > MAX_WALK_DEPTH) fail('nesting too deep', this.at)
    const body = this.body
    this.out.byte(this.at)
    this.at++
    if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
    // -1 before anything is kept, -2 right after, then where the comma after it is.
    let comma = -1
    if (body[this.at] !== CLOSE_BRACE) {
      for (;;) {
        if (body[this.at] !== QUOTE) fail('expected a member name', this.at)
        const start = this.at
        const member = this.member(shape)
        const nameEnd = this.at
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        if (body[this.at] !== COLON) fail('expected :', this.at)
        const colon = this.at
        this.at++
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        if (member === false) {
          this.at = this.skip(this.at)
        } else {
          if (comma >= 0) this.out.byte(comma)
          this.out.range(start, nameEnd)
          this.out.byte(colon)
          this.memberValue(member, start, nameEnd, depth)
          comma = -2
        }
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
        const next = body[this.at]
        if (next === CLOSE_BRACE) break
        if (next !== COMMA) fail('expected , or }', this.at)
        // The comma that goes before the next member kept, once one was kept before it.
        if (comma !== -1) comma = this.at
        this.at++
        if (BLANK[body[this.at] as number] === 1) this.skipBlanks()
      }
    }
    this.out.byte(this.at)
    this.at++
  }

  /** Keeps the value of the member named by the bytes from `nameStart` to `nameEnd` (quotes included). */
  private memberValue (member: Compiled, nameStart: number, nameEnd: number, depth: number): void {
    if (typeof member === 'boolean') return this.value(member, depth)
    if (member.memo !== undefined) return this.memoObject(member, nameStart, nameEnd, depth)
    if (member.holdsObjects) this.group = this.plainName(nameStart, nameEnd)
    const start = this.at
    this.value(member, depth)
    if (!member.isParentUid || this.body[start] !== QUOTE) return
    if (this.parentUid !== undefined) this.rememberNothing = true
    this.parentUid = this.plainName(start, this.at)
  }

  /** The text of the string from `start` to `end` (quotes included), unquoted; undefined if escaped or not ASCII. */
  private plainName (start: number, end: number): string | undefined {
    const body = this.body
    for (let i = start + 1; i < end - 1; i++) {
      const byte = body[i] as number
      if (byte === BACKSLASH || byte >= 0x80) {
        this.rememberNothing = true
        return undefined
      }
    }
    return (body as unknown as Slicing).latin1Slice(start + 1, end - 1)
  }

  /**
   * The memo key of the object named `name` of the remembered shape `shape`: its group (or the
   * parent's UID) and its name, for this reading of it; undefined when either is unknown.
   */
  private keyOf (shape: Members, name: string | undefined, group: string | undefined): string | undefined {
    const scope = shape.memo === 'object' ? group : this.parentUid
    return name === undefined || scope === undefined ? undefined : `${shape.id} ${scope} ${name}`
  }

  /**
   * The object at the cursor, of a remembered shape, the value of the member named by the bytes
   * from `nameStart` to `nameEnd`. When the memo has it for the same bytes, a stand-in is kept for
   * it. Else it is kept as any other object; one read to a sliver (not worth remembering by its
   * bytes) is then looked up by the text kept of it, and given a stand-in when that text is the
   * one the memo has. Where an object not in the memo lies is noted, for restore to remember what
   * is built of it. No number may stand where an object is remembered: it would pass for a stand-in.
   */
  private memoObject (shape: Members, nameStart: number, nameEnd: number, depth: number): void {
    const body = this.body
    const start = this.at
    const first = body[start] as number
    if (first !== OPEN_BRACE) {
      if (first === 0x2d || (first >= 0x30 && first <= 0x39)) fail('a number where an object is remembered', start)
      return this.value(shape, depth)
    }
    const key = this.keyOf(shape, this.plainName(nameStart, nameEnd), this.group)
    if (key === undefined) return this.object(shape, depth + 1)
    const memo = this.wire.memo
    const known = memo.recall(key, body, start, this.now)
    if (known !== undefined) return this.standIn(known.built, start + known.bytes.length)
    const mark = this.out.mark()
    const standIns = this.recalled.length
    this.object(shape, depth + 1)
    const textEnd = this.out.mark()
    const textLength = textEnd - mark
    // With stand-ins inside (a remembered shape within this one; none today), neither its kept
    // text nor what is built of it is the object's own.
    if (this.recalled.length !== standIns) return
    if (worthRemembering(this.at - start, textLength)) {
      if (memo.hasRoom(this.now)) this.unknown.set(key, { start, end: this.at, textLength, byText: false })
      return
    }
    const byText = memo.recallText(key, this.out.bytes, mark, textEnd, this.now)
    if (byText !== undefined) {
      this.out.truncate(mark)
      return this.standIn(byText.built, this.at)
    }
    if (memo.hasRoom(this.now)) this.unknown.set(key, { start: mark, end: textEnd, textLength, byText: true })
  }

  /** Keeps a stand-in for `built`, an object of the memo (its index in `recalled`), and moves on to `next`. */
  private standIn (built: unknown, next: number): void {
    this.out.number(this.recalled.push(built) - 1)
    this.at = next
  }

  /**
   * Completes what JSON.parse built of the kept text, following the shape as the reader did: the
   * objects the memo had in place of their stand-ins, and the objects of remembered shapes it did
   * not have remembered. `group` is the name of the map `value` is in, when it holds remembered objects.
   */
  restore (value: unknown, shape: Members, group: string | undefined): void {
    if (value === null || typeof value !== 'object') return
    if (Array.isArray(value)) {
      for (const element of value) this.restore(element, shape, group)
      return
    }
    const record = value as Record<string, unknown>
    for (const name in record) {
      const index = shape.strings.indexOf(name)
      const member = index >= 0 ? shape.shapes[index] as Compiled : shape.others
      if (typeof member === 'boolean' || !member.hasMemo) continue
      const built = record[name]
      if (member.memo === undefined) {
        this.restore(built, member, member.holdsObjects ? name : group)
      } else if (typeof built === 'number') {
        record[name] = this.recalled[built]
      } else {
        this.remember(this.keyOf(member, name, group), built)
      }
    }
  }

  /** Remembers `built`, the object under `key` that was not in the memo, where the reader noted it. */
  private remember (key: string | undefined, built: unknown): void {
    const at = key === undefined || this.rememberNothing ? undefined : this.unknown.get(key)
    if (key === undefined || at === undefined) return
    const bytes = at.byText ? this.out.bytes : this.body
    this.wire.memo.remember(key, bytes, at.start, at.end, built, at.textLength, this.now, at.byText)
  }

  private array (shape: Members, depth: number): void {
    if (depth > MAX_WALK_DEPTH) fail('nesting too deep', this.at)
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
        if (next !== COMMA) fail('expected , or ]', this.at)
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
      at = endOfString(body, at - 1) - 1
      if (!escaped) for (let i = start; i < at && !escaped; i++) escaped = body[i] === BACKSLASH
    }
    this.at = at + 1
    const length = at - start
    if (escaped) {
      const name = JSON.parse((body as unknown as Slicing).utf8Slice(start - 1, at + 1)) as string
      if (UNSAFE_NAMES.includes(name)) fail(`member ${name}`, start - 1)
      const index = shape.strings.indexOf(name)
      return index >= 0 ? shape.shapes[index] as Compiled : shape.others
    }
    if (UNSAFE_LENGTHS.has(length + 2)) refuseUnsafe(body, start - 1, at + 1)
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
}
