// The accelerated skip (src/protocol/skip.wat; docs/wire.md, "The skipper"): loading it, and the
// memories large bodies are read into, so that it runs through a body where it lies, without a
// copy. The body reader asks for a memory for each large body (src/protocol/body-reader.ts), the
// projection for the skip of the memory a body lies in (src/protocol/projection.ts). Each app has
// its own WasmSkip (src/protocol/wire-state.ts); where there is no skip.wasm, no WebAssembly SIMD,
// or no memory of a body's size, nothing changes but the speed: the TypeScript skipper runs.
import { readFileSync } from 'node:fs'
import { CLASS, fail, MAX_DEPTH } from './json-skip.js'

// What is used of WebAssembly, which the project's types (Node's, without the DOM's) do not declare.
declare namespace WebAssembly {
  class Module {
    constructor (bytes: Uint8Array)
  }
  class Memory {
    constructor (descriptor: { initial: number, maximum?: number, shared?: boolean })
    readonly buffer: ArrayBuffer | SharedArrayBuffer
    grow (pages: number): number
  }
  class Instance {
    constructor (module: Module, imports: Record<string, Record<string, unknown>>)
    readonly exports: Record<string, unknown>
  }
}

/** A WebAssembly memory a body lies in: shared, so that another thread may read it where it lies. */
export type BodyMemory = WebAssembly.Memory

/** The layout of a memory, as skip.wat reads it: the byte classes, then the closers' stack. */
const TABLE = 0
const STACK = 256
/** Where the body starts: past the table and the stack, on a 64-byte boundary (10,304). */
export const BODY_OFFSET = (STACK + MAX_DEPTH + 63) & ~63
/** Bytes after the body that a 16-byte load at its end may read. */
const PADDING = 64
const PAGE = 65536
/** The most a memory may grow to (skip.wat's import): 4 GiB, address space only until it is used. */
const MAX_PAGES = 65536

/** What skip.wat's negative answers mean, by their negation, in the words of json-skip.ts. */
export const REFUSALS = [
  '',
  'a value that never closes',
  'a byte JSON does not allow there',
  'a bracket that does not match',
  'nesting too deep'
]

/** skip(at, end) of skip.wat, in addresses of its memory. */
type Skip = (at: number, end: number) => number

/** Skips the object or array that opens at `at` of a body, to the index just after it; throws NotProjected. */
export type BodySkip = (at: number) => number

/** skip.wasm, compiled; undefined when it is missing or this Node cannot run it (no SIMD). */
function compile (): WebAssembly.Module | undefined {
  try {
    // Beside this module: dist/src/protocol/ (npm run build), or src/protocol/ for the tests (tap's `before`).
    return new WebAssembly.Module(readFileSync(new URL('./skip.wasm', import.meta.url)))
  } catch {
    return undefined
  }
}

/** The WebAssembly skip of one app: its compiled module, and the skip of each memory it made. */
export class WasmSkip {
  /** Compiled on the first large body: undefined until then, false when there is none to be had. */
  private compiled: WebAssembly.Module | false | undefined
  private readonly skips = new WeakMap<ArrayBufferLike, Skip>()
  /** The memory of each body buffer made here or adopted, to hand it to the hook thread. */
  private readonly memories = new WeakMap<ArrayBufferLike, WebAssembly.Memory>()

  /** Whether the WebAssembly skip runs here (skip.wasm is there and compiles). */
  get available (): boolean {
    return this.module() !== undefined
  }

  private module (): WebAssembly.Module | undefined {
    this.compiled ??= compile() ?? false
    return this.compiled === false ? undefined : this.compiled
  }

  /**
   * A buffer of `size` bytes inside a WebAssembly memory of its own, for a body to be read into
   * and skipped where it lies; undefined when the skip is not available or no memory of that size
   * can be had (the address space of a 32-bit process): a plain buffer will do.
   */
  bodyMemory (size: number): Buffer | undefined {
    const pages = Math.ceil((BODY_OFFSET + size + PADDING) / PAGE)
    let memory: WebAssembly.Memory
    try {
      // Shared, so that the hook thread can skip the body where this thread read it (skip.wat);
      // growable, so that a pool (src/protocol/body-pool.ts) can fit a larger body in it.
      memory = new WebAssembly.Memory({ initial: pages, maximum: MAX_PAGES, shared: true })
    } catch {
      return undefined
    }
    if (!this.adopt(memory)) return undefined
    new Uint8Array(memory.buffer, TABLE, CLASS.length).set(CLASS)
    return Buffer.from(memory.buffer, BODY_OFFSET, size)
  }

  /**
   * Runs the skip on a memory of bodyMemory, made here or on another thread (the body read there
   * and handed over, src/thread/hook-thread.ts); false when the skip is not available here.
   */
  adopt (memory: WebAssembly.Memory): boolean {
    const compiled = this.module()
    if (compiled === undefined) return false
    try {
      const instance = new WebAssembly.Instance(compiled, { env: { memory } })
      this.skips.set(memory.buffer, instance.exports.skip as Skip)
      this.memories.set(memory.buffer, memory)
      return true
    } catch {
      return false
    }
  }

  /**
   * The buffer of bodyMemory that `whole` is, grown in place to hold `size` bytes; undefined when
   * it is not one of this skip's or cannot grow (the address space of a 32-bit process).
   */
  grow (whole: Buffer, size: number): Buffer | undefined {
    const memory = this.memories.get(whole.buffer)
    const skip = this.skips.get(whole.buffer)
    if (memory === undefined || skip === undefined) return undefined
    const pages = Math.ceil((BODY_OFFSET + size + PADDING) / PAGE)
    try {
      memory.grow(pages - memory.buffer.byteLength / PAGE)
    } catch {
      return undefined
    }
    // A grown memory's buffer is another object: the skip and the memory are found by it now.
    this.skips.set(memory.buffer, skip)
    this.memories.set(memory.buffer, memory)
    return Buffer.from(memory.buffer, BODY_OFFSET, size)
  }

  /** The memory `body` lies in, when it was made by bodyMemory (here) or adopted. */
  memoryOf (body: Buffer): WebAssembly.Memory | undefined {
    return this.memories.get(body.buffer)
  }

  /** The skip for `body` when it lies in a memory of bodyMemory (whole or a start of it), else undefined. */
  skipperOf (body: Buffer): BodySkip | undefined {
    const buffer = body.buffer
    const skip = this.skips.get(buffer)
    const offset = body.byteOffset
    // Whatever the memory holds after the body's end is not the body's: `end` bounds every read that counts.
    if (skip === undefined || offset + body.length + PADDING > buffer.byteLength) return undefined
    const end = offset + body.length
    return at => {
      const next = skip(at + offset, end)
      return next >= 0 ? next - offset : fail(REFUSALS[-next] ?? 'a refusal', at)
    }
  }
}
