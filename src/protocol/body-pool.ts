// The buffers the bodies handed to the hook thread are read into (src/plugins/thread-routes.ts):
// shared WebAssembly memories (src/protocol/skip-wasm.ts), which the thread skips where they lie,
// kept and read into again by the next body, grown in place when it is larger (a parent's body
// grows as its children do). Unlike BodyBuffers' single spare, every memory given back is kept
// (for IDLE_MS): a shared memory is freed only once both threads have collected every object
// that refers to it, and this thread, which builds little, collects rarely, so memories dropped
// here stayed resident (a fresh memory per body: 827 MiB at 15,000 Nodes; one per slightly larger
// body, in the tier's DaemonJob over 2,000 Nodes, 2 GiB within ten minutes). The memories in use
// are bounded by the in-flight budget, which admits a call by its Content-Length; the pool holds
// no more than were in use at once.
import { SPARE_MIN_BYTES, type BodyStore } from './body-reader.js'
import type { WasmSkip } from './skip-wasm.js'

/** How long a memory is kept without a body read into it. */
const IDLE_MS = 60_000
/** A new or grown memory holds this much more than the body it is for: the next one is likely larger. */
const SLACK = 1.125

interface Idle {
  buffer: Buffer
  since: number
}

export class BodyPool implements BodyStore {
  private readonly idle: Idle[] = []
  /** The whole buffer of each memory in use, by the memory its bodies lie in. */
  private readonly wholeBuffers = new WeakMap<ArrayBufferLike, Buffer>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly wasm: WasmSkip) {
    this.sweeper = setInterval(() => { this.sweep(performance.now()) }, IDLE_MS)
    this.sweeper.unref()
  }

  /**
   * A buffer of `size` bytes: in the largest idle memory, grown in place when it is too small (a
   * body grows as its parent's children do), else in a new one; each with room to grow by SLACK.
   */
  take (size: number): Buffer {
    if (size < SPARE_MIN_BYTES) return Buffer.allocUnsafe(size)
    const capacity = Math.ceil(size * SLACK)
    let largest = -1
    for (let i = 0; i < this.idle.length; i++) {
      if (largest < 0 || (this.idle[i] as Idle).buffer.length > (this.idle[largest] as Idle).buffer.length) largest = i
    }
    let whole: Buffer | undefined
    if (largest >= 0) {
      whole = (this.idle.splice(largest, 1)[0] as Idle).buffer
      if (whole.length < size) whole = this.wasm.grow(whole, capacity)
    }
    whole ??= this.wasm.bodyMemory(capacity) ?? Buffer.allocUnsafeSlow(capacity)
    this.wholeBuffers.set(whole.buffer, whole)
    return whole.subarray(0, size)
  }

  /** Gives a body's memory back, once nothing refers to its bytes: the next body is read into it. */
  release (body: Buffer): void {
    const whole = this.wholeBuffers.get(body.buffer)
    if (whole === undefined) return
    this.wholeBuffers.delete(body.buffer)
    this.idle.push({ buffer: whole, since: performance.now() })
  }

  /** Memories idle, and their bytes (tests). */
  get idleBytes (): number {
    return this.idle.reduce((sum, { buffer }) => sum + buffer.length, 0)
  }

  /** Drops the memories idle for IDLE_MS. */
  sweep (now: number): void {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (now - (this.idle[i] as Idle).since >= IDLE_MS) this.idle.splice(i, 1)
    }
  }

  close (): void {
    clearInterval(this.sweeper)
    this.idle.length = 0
  }
}
