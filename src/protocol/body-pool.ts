// The buffers the bodies handed to the hook thread are read into (src/plugins/thread-routes.ts):
// shared WebAssembly memories (src/protocol/skip-wasm.ts), which the thread skips where they lie,
// kept and read into again by the next body that fits. Unlike BodyBuffers' single spare, every
// memory given back is kept (for SPARE_IDLE_MS): a shared memory is freed only once both threads
// have collected every object that refers to it, and this thread, which builds nothing, collects
// rarely, so a memory dropped here would stay resident long after its body (at 15,000 Nodes, a
// fresh 209 MiB memory per sync took the process past 800 MiB). The memories in use are bounded
// by the in-flight budget, which admits a call by its Content-Length; the pool holds no more than
// were in use at once.
import { SPARE_MIN_BYTES, type BodyStore } from './body-reader.js'
import type { WasmSkip } from './skip-wasm.js'

/** How long a memory is kept without a body read into it. */
const IDLE_MS = 60_000

interface Idle {
  buffer: Buffer
  since: number
}

export class BodyPool implements BodyStore {
  private readonly idle: Idle[] = []
  /** The whole buffer of each memory taken from here or made, by its memory. */
  private readonly wholeBuffers = new WeakMap<ArrayBufferLike, Buffer>()
  private readonly inUse = new WeakSet<ArrayBufferLike>()
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly wasm: WasmSkip) {
    this.sweeper = setInterval(() => { this.sweep(performance.now()) }, IDLE_MS)
    this.sweeper.unref()
  }

  /** The smallest idle memory that holds `size` bytes, else a new one (a plain buffer when there can be none). */
  take (size: number): Buffer {
    if (size < SPARE_MIN_BYTES) return Buffer.allocUnsafe(size)
    let best = -1
    for (let i = 0; i < this.idle.length; i++) {
      const length = (this.idle[i] as Idle).buffer.length
      if (length >= size && (best < 0 || length < (this.idle[best] as Idle).buffer.length)) best = i
    }
    if (best >= 0) {
      const [{ buffer }] = this.idle.splice(best, 1) as [Idle]
      this.inUse.add(buffer.buffer)
      return buffer.subarray(0, size)
    }
    const fresh = this.wasm.bodyMemory(size) ?? Buffer.allocUnsafeSlow(size)
    this.wholeBuffers.set(fresh.buffer, fresh)
    this.inUse.add(fresh.buffer)
    return fresh
  }

  /** Gives a body's memory back, once nothing refers to its bytes: the next body that fits is read into it. */
  release (body: Buffer): void {
    const whole = this.wholeBuffers.get(body.buffer)
    if (whole === undefined || !this.inUse.delete(body.buffer)) return
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
