// The pool of shared memories the bodies handed to the hook thread are read into: a memory given
// back is read into again, grown in place for a larger body, and dropped once idle long enough.
import t from 'tap'
import { BodyPool } from '../../src/protocol/body-pool.js'
import { WasmSkip } from '../../src/protocol/skip-wasm.js'

const MIB = 1024 * 1024

t.test('a memory given back is read into again, and grown in place for a larger body', async t => {
  const wasm = new WasmSkip()
  t.ok(wasm.available, 'the WebAssembly skip is built (scripts/wasm.mjs)')
  const pool = new BodyPool(wasm)
  t.teardown(() => { pool.close() })
  const first = pool.take(2 * MIB)
  t.equal(first.length, 2 * MIB)
  const memory = wasm.memoryOf(first)
  t.ok(memory !== undefined, 'in a memory of the skip, where the hook thread can skip it')
  t.equal(first.buffer.constructor.name, 'SharedArrayBuffer', 'shared with the hook thread')
  first[0] = 42
  pool.release(first)
  t.equal(pool.idleBytes > 2 * MIB, true, 'kept, with room to grow')
  const again = pool.take(2 * MIB + 1000)
  t.equal(wasm.memoryOf(again), memory, 'a slightly larger body: the same memory, within its room')
  t.equal(again[0], 42)
  pool.release(again)
  const larger = pool.take(5 * MIB)
  t.equal(wasm.memoryOf(larger), memory, 'a much larger one: the same memory, grown')
  t.equal(larger[0], 42, 'its bytes where they were')
  t.equal(pool.idleBytes, 0, 'none idle while it is in use')
  const other = pool.take(3 * MIB)
  t.not(wasm.memoryOf(other), memory, 'a body read meanwhile gets a memory of its own')
  pool.release(larger)
  pool.release(other)
  pool.release(other)
  t.ok(pool.idleBytes >= 8 * MIB && pool.idleBytes < 10 * MIB, 'both kept, each once')
})

t.test('a small body is a buffer of its own; idle memories go after a minute', async t => {
  const pool = new BodyPool(new WasmSkip())
  t.teardown(() => { pool.close() })
  const small = pool.take(1000)
  t.equal(small.buffer.constructor.name, 'ArrayBuffer')
  pool.release(small)
  t.equal(pool.idleBytes, 0, 'not kept')
  pool.release(pool.take(2 * MIB))
  pool.sweep(performance.now() + 59_000)
  t.ok(pool.idleBytes > 0, 'kept for a minute')
  pool.sweep(performance.now() + 60_000)
  t.equal(pool.idleBytes, 0, 'dropped after it')
})
