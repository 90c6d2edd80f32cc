// Skipping a JSON value at memory speed: a WebAssembly function, with SIMD, that does for an
// object or an array no hook reads what the projection's skipValue does (src/protocol/
// projection.ts), sixteen bytes at a time inside strings, where Kubernetes' JSON has most of its
// bytes. The projection calls it when the body lies in a WebAssembly memory: the body reader
// reads a large body into one (bodyMemory, from src/protocol/body-reader.ts).
//
// The module is assembled here, instruction by instruction, rather than shipped as a binary: no
// toolchain is needed to build it or to read it. It checks what skipValue checks (strings closed,
// brackets balanced and matched, nothing between strings but blanks, punctuation, numbers and
// literals) and answers the index just after the value, or a negative number saying why not.
// Where WebAssembly's SIMD is missing, nothing changes but the speed: the projection skips in
// JavaScript.
//
// A memory holds, from its start: the class of each byte value (256 bytes), the closers of the
// open brackets (MAX_DEPTH bytes), then from BODY_OFFSET the body, then PADDING bytes that a
// 16-byte load at the body's end may read (whatever they hold: nothing at or past the body's end
// is taken for the body's).

// What is used of WebAssembly, which the project's types (Node's, without the DOM's) do not declare.
declare namespace WebAssembly {
  class Module {
    constructor (bytes: Uint8Array)
  }
  class Memory {
    constructor (descriptor: { initial: number })
    readonly buffer: ArrayBuffer
  }
  class Instance {
    constructor (module: Module, imports: Record<string, Record<string, unknown>>)
    readonly exports: Record<string, unknown>
  }
}

/**
 * How deep a skipped value may nest before the body is left to the strict parser. Kubernetes
 * objects nest a few dozen levels.
 */
export const MAX_DEPTH = 10_000

/** Why skip failed: the value does not close, a byte JSON does not allow there, a bracket that does not match, too deep. */
export const UNCLOSED = -1
export const INVALID_BYTE = -2
export const MISMATCH = -3
export const TOO_DEEP = -4

/**
 * What a byte is between strings, for skipping a value (here and in projection.ts's skipValue):
 * 0 a byte JSON does not allow there; BETWEEN blanks, `,` `:`, and the bytes of numbers and of
 * `true` `false` `null`; STRING a quote; OPEN and CLOSE brackets.
 */
export const BETWEEN = 1
export const STRING = 2
export const OPEN = 3
export const CLOSE = 4
export const CLASS = new Uint8Array(256)
for (const c of ' \t\r\n,:0123456789+-.eEtruefalsn') CLASS[c.charCodeAt(0)] = BETWEEN
CLASS[0x22] = STRING
CLASS[0x7b] = OPEN
CLASS[0x5b] = OPEN
CLASS[0x7d] = CLOSE
CLASS[0x5d] = CLOSE

const TABLE = 0
const STACK = 256
/** Where the body starts: past the table and the stack, on a 64-byte boundary. */
export const BODY_OFFSET = (STACK + MAX_DEPTH + 63) & ~63
const PADDING = 64
const PAGE = 65536

// The instructions used, by their opcodes in the WebAssembly binary format.
const LOOP = 0x03
const IF = 0x04
const END = 0x0b
const BR = 0x0c
const RETURN = 0x0f
const VOID = 0x40
const LOCAL_GET = 0x20
const LOCAL_SET = 0x21
const LOCAL_TEE = 0x22
const I32_LOAD8_U = 0x2d
const I32_STORE8 = 0x3a
const I32_CONST = 0x41
const I32_EQZ = 0x45
const I32_EQ = 0x46
const I32_NE = 0x47
const I32_GE_U = 0x4f
const I32_CTZ = 0x68
const I32_ADD = 0x6a
const I32_SUB = 0x6b
const SIMD = 0xfd
const V128_LOAD = 0x00
const I8X16_SPLAT = 0x0f
const I8X16_EQ = 0x23
const V128_OR = 0x50
const I8X16_BITMASK = 0x64
const I32 = 0x7f
const V128 = 0x7b

/** An unsigned LEB128 number, as the binary format writes sizes, indices and opcodes after a prefix. */
function unsigned (value: number): number[] {
  const bytes: number[] = []
  do {
    let byte = value & 0x7f
    value >>>= 7
    if (value !== 0) byte |= 0x80
    bytes.push(byte)
  } while (value !== 0)
  return bytes
}

/** A signed LEB128 number (the operand of i32.const). */
function signed (value: number): number[] {
  const bytes: number[] = []
  for (;;) {
    const byte = value & 0x7f
    value >>= 7
    if ((value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0)) {
      bytes.push(byte)
      return bytes
    }
    bytes.push(byte | 0x80)
  }
}

function vector (items: number[][]): number[] {
  return [...unsigned(items.length), ...items.flat()]
}

function section (id: number, content: number[]): number[] {
  return [id, ...unsigned(content.length), ...content]
}

function name (text: string): number[] {
  return vector([...Buffer.from(text)].map(byte => [byte]))
}

// The function's parameters, then its locals, by index.
const AT = 0
const END_AT = 1
const DEPTH = 2
const BYTE = 3
const KIND = 4
const FOUND = 5
const CHUNK = 6
const QUOTES = 7
const BACKSLASHES = 8

const get = (local: number): number[] => [LOCAL_GET, local]
const set = (local: number): number[] => [LOCAL_SET, local]
const tee = (local: number): number[] => [LOCAL_TEE, local]
const constant = (value: number): number[] => [I32_CONST, ...signed(value)]
/** A byte at the address on the stack (alignment 1, offset 0). */
const load8 = [I32_LOAD8_U, 0, 0]
const simd = (op: number): number[] => [SIMD, ...unsigned(op)]
/** `local += n` */
const add = (local: number, n: number): number[] => [...get(local), ...constant(n), I32_ADD, ...set(local)]
/** if (condition on the stack) return value */
const returnIf = (value: number[]): number[] => [IF, VOID, ...value, RETURN, END]
const unclosedAtEnd = [...get(AT), ...get(END_AT), I32_GE_U, ...returnIf(constant(UNCLOSED))]
const isKind = (kind: number): number[] => [...get(KIND), ...constant(kind), I32_EQ]

/**
 * skip(at, end) → the address just after the object or array that opens at `at`, or a negative
 * number. `br n` leaves n enclosing blocks: the outer loop goes on with the next byte between
 * strings, the inner one with the next sixteen bytes of a string.
 */
const SKIP = [
  ...constant(0x22), ...simd(I8X16_SPLAT), ...set(QUOTES),
  ...constant(0x5c), ...simd(I8X16_SPLAT), ...set(BACKSLASHES),
  LOOP, VOID, // the next byte between strings
  ...unclosedAtEnd,
  ...get(AT), ...load8, ...tee(BYTE), ...constant(TABLE), I32_ADD, ...load8, ...set(KIND),

  ...isKind(STRING), IF, VOID,
  ...add(AT, 1),
  LOOP, VOID, // the next sixteen bytes of the string
  // found: a bit for each of the sixteen bytes that is a quote or a backslash
  ...get(AT), ...simd(V128_LOAD), 0, 0, ...set(CHUNK),
  ...get(CHUNK), ...get(QUOTES), ...simd(I8X16_EQ),
  ...get(CHUNK), ...get(BACKSLASHES), ...simd(I8X16_EQ),
  ...simd(V128_OR), ...simd(I8X16_BITMASK), ...tee(FOUND),
  I32_EQZ, IF, VOID,
  ...add(AT, 16), ...unclosedAtEnd, BR, 1,
  END,
  ...get(AT), ...get(FOUND), I32_CTZ, I32_ADD, ...set(AT),
  ...unclosedAtEnd,
  ...get(AT), ...load8, ...constant(0x22), I32_EQ, IF, VOID,
  ...add(AT, 1), BR, 3, // the closing quote: on with the bytes after it
  END,
  // A backslash: the byte after it is escaped, whatever it is.
  ...add(AT, 2), BR, 0,
  END,
  END,

  ...isKind(BETWEEN), IF, VOID,
  ...add(AT, 1), BR, 1,
  END,

  ...isKind(OPEN), IF, VOID,
  ...get(DEPTH), ...constant(MAX_DEPTH), I32_GE_U, ...returnIf(constant(TOO_DEEP)),
  // The closer it waits for: `[` + 2 is `]`, `{` + 2 is `}`.
  ...get(DEPTH), ...constant(STACK), I32_ADD, ...get(BYTE), ...constant(2), I32_ADD, I32_STORE8, 0, 0,
  ...add(DEPTH, 1), ...add(AT, 1), BR, 1,
  END,

  ...isKind(CLOSE), IF, VOID,
  ...get(DEPTH), I32_EQZ, ...returnIf(constant(MISMATCH)),
  ...get(DEPTH), ...constant(1), I32_SUB, ...tee(DEPTH),
  ...constant(STACK), I32_ADD, ...load8, ...get(BYTE), I32_NE, ...returnIf(constant(MISMATCH)),
  ...add(AT, 1),
  ...get(DEPTH), I32_EQZ, ...returnIf(get(AT)),
  BR, 1,
  END,

  // Any other byte.
  ...constant(INVALID_BYTE), RETURN,
  END,
  ...constant(INVALID_BYTE)
]

/** The module: one function, skip, over a memory it imports (each body its own). */
function moduleBytes (): Uint8Array {
  const type = section(1, vector([[0x60, ...vector([[I32], [I32]]), ...vector([[I32]])]]))
  const imports = section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, ...unsigned(1)]]))
  const functions = section(3, vector([[0]]))
  const exports = section(7, vector([[...name('skip'), 0x00, 0]]))
  const locals = vector([[...unsigned(4), I32], [...unsigned(3), V128]])
  const code = [...locals, ...SKIP, END]
  const codeSection = section(10, vector([[...unsigned(code.length), ...code]]))
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...type, ...imports, ...functions, ...exports, ...codeSection])
}

/** The compiled module, or undefined where this Node cannot run it (no WebAssembly SIMD). */
const compiled: WebAssembly.Module | undefined = (() => {
  try {
    return new WebAssembly.Module(moduleBytes())
  } catch {
    return undefined
  }
})()

/** skip over a body's memory, by the memory's ArrayBuffer. */
const skippers = new WeakMap<ArrayBuffer, (at: number, end: number) => number>()

/**
 * A buffer of `size` bytes inside a WebAssembly memory of its own, for a body to be read into and
 * skipped by skipperOf; undefined where WebAssembly SIMD is missing or no such memory can be had.
 */
export function bodyMemory (size: number): Buffer | undefined {
  if (compiled === undefined) return undefined
  let memory: WebAssembly.Memory
  let instance: WebAssembly.Instance
  try {
    memory = new WebAssembly.Memory({ initial: Math.ceil((BODY_OFFSET + size + PADDING) / PAGE) })
    instance = new WebAssembly.Instance(compiled, { env: { memory } })
  } catch {
    // No memory of that size to be had (the address space of a 32-bit process): a plain buffer will do.
    return undefined
  }
  new Uint8Array(memory.buffer, TABLE, 256).set(CLASS)
  skippers.set(memory.buffer, instance.exports.skip as (at: number, end: number) => number)
  return Buffer.from(memory.buffer, BODY_OFFSET, size)
}

/**
 * The skip function for `body` when it lies in a memory of bodyMemory: skip(at, end), in indices
 * of `body`, gives the index just after the object or array at `at`, or a negative number.
 */
export function skipperOf (body: Buffer): ((at: number, end: number) => number) | undefined {
  const buffer = body.buffer
  if (!(buffer instanceof ArrayBuffer)) return undefined
  const skip = skippers.get(buffer)
  if (skip === undefined) return undefined
  const offset = body.byteOffset
  // Whatever the memory holds after the body's end is not the body's: `end` bounds every read that counts.
  if (offset + body.length + PADDING > buffer.byteLength) return undefined
  return (at, end) => {
    const next = skip(at + offset, end + offset)
    return next < 0 ? next : next - offset
  }
}
