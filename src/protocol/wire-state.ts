// What the wire keeps from one request to the next, owned by one app (created by createFastify,
// decorated on it as `wire`): the memo of built objects, the buffers large bodies are read into
// (WebAssembly memories where the accelerated skip runs), the buffer kept text is copied into, the
// shapes made ready for reading. Two apps in one process (the server and a test, the simulator's)
// share none of it. docs/wire.md says what each part buys.
import { BodyBuffers } from './body-reader.js'
import { ShapeCompiler } from './compiled-shape.js'
import type { KeptSpace } from './kept.js'
import { defaultMemoLimit, ObjectMemo } from './object-memo.js'
import { WasmSkip } from './skip-wasm.js'

export interface WireOptions {
  /** Bytes the memo of built objects may hold; 0 turns it off. Default: defaultMemoLimit(). */
  memoBytes?: number
}

export class WireState implements KeptSpace {
  readonly memo: ObjectMemo
  /** The WebAssembly skip and its memories (src/protocol/skip.wat). */
  readonly wasm = new WasmSkip()
  readonly bodies = new BodyBuffers(this.wasm)
  readonly shapes = new ShapeCompiler()
  scratch: Buffer = Buffer.alloc(0)

  constructor (options: WireOptions = {}) {
    this.memo = new ObjectMemo(options.memoBytes ?? defaultMemoLimit())
  }

  /** Lets go of the buffers and the memo (the app closes). */
  close (): void {
    this.bodies.close()
    this.memo.clear()
    this.scratch = Buffer.alloc(0)
  }
}
