// The bytes of a body the projection keeps (src/protocol/projection.ts), copied in order into one
// buffer: JSON text of their own, which JSON.parse then builds once. A run grows while what is
// kept next comes right after it in the body: compact JSON, as Metacontroller sends it, keeps most
// of a kept object in one run, copied by one call.
import { isAscii } from 'node:buffer'
import { refuseUnsafeKept } from './json-skip.js'

/** Runs of kept bytes shorter than this are copied by a loop, longer ones by Buffer's copy. */
const SHORT_RUN = 48
/** The largest buffer kept from one body to the next (KeptSpace); a larger one is used once. */
const SCRATCH_MAX_BYTES = 64 * 1024 * 1024

/**
 * The buffer kept text is copied into, kept from one body to the next by the app that reads them
 * (src/protocol/wire-state.ts): a fresh one of megabytes is paid for in page faults and brings
 * garbage collections forward. Bodies are built one at a time (the projection is synchronous).
 */
export interface KeptSpace {
  scratch: Buffer
}

/** Buffer's own decoders, without the argument checks of toString around them (hot paths). */
interface Slicing {
  utf8Slice: (start: number, end: number) => string
  latin1Slice: (start: number, end: number) => string
}

export class Kept {
  /** Taken by the first copy: a body of which nothing is kept needs none. */
  private out: Buffer = Buffer.alloc(0)
  private length = 0
  /** The run of the body not copied yet: from `runStart` to `runEnd`. */
  private runStart = 0
  private runEnd = 0

  constructor (private readonly body: Buffer, private readonly space: KeptSpace) {}

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

  /** Keeps the digits of `n`, a whole number that is not in the body (a stand-in). */
  number (n: number): void {
    this.flush()
    const digits = String(n)
    this.reserve(digits.length)
    this.length += this.out.write(digits, this.length, 'latin1')
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

  /** The kept bytes as text, once everything is kept and no unsafe name is found in them. */
  text (): string {
    this.flush()
    const out = this.out
    if (out.length > this.space.scratch.length && out.length <= SCRATCH_MAX_BYTES) this.space.scratch = out
    const kept = out.subarray(0, this.length)
    refuseUnsafeKept(kept)
    // ASCII (what Kubernetes' JSON mostly is) becomes a string by a copy; UTF-8 is decoded.
    const slicing = out as unknown as Slicing
    return isAscii(kept) ? slicing.latin1Slice(0, this.length) : slicing.utf8Slice(0, this.length)
  }

  /** Room for `size` more bytes after the kept ones. */
  private reserve (size: number): void {
    if (this.length + size <= this.out.length) return
    if (this.out.length === 0) {
      const wanted = Math.max(4096, this.body.length >>> 3, size)
      const scratch = this.space.scratch
      this.out = scratch.length >= wanted ? scratch : Buffer.allocUnsafeSlow(wanted)
    } else {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.length + size))
      this.out.copy(grown, 0, 0, this.length)
      this.out = grown
    }
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
}
