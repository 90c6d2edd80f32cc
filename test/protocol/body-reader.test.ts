// The hook routes' body reader: one buffer per body, fastify's limits and errors; and through
// HTTP, what the routes build of a body (src/protocol/projection.ts) answers as the whole would.
import t from 'tap'
import { PassThrough } from 'node:stream'
import { BodyBuffers, readBody, SPARE_MIN_BYTES } from '../../src/protocol/body-reader.js'
import { daemonJobFixture } from '../../bench/daemonjob.js'
import { testApp } from '../helpers/app.js'
import { WireState } from '../../src/protocol/wire-state.js'

/** The value with every `managedFields` member removed, whatever its depth. */
function dropped (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropped)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'managedFields')
        .map(([k, v]) => [k, dropped(v)])
    )
  }
  return value
}

t.test("reading a body keeps fastify's limits", async (t) => {
  const errors = {
    tooLarge: () => Object.assign(new Error('too large'), { statusCode: 413 }),
    badLength: () => Object.assign(new Error('bad length'), { statusCode: 400 }),
  }
  const read = async (
    parts: string[],
    contentLength: string | undefined,
    limit: number,
    fail?: Error
  ): Promise<{ error: Error | null; text: string }> => {
    const stream = new PassThrough()
    const result = new Promise<{ error: Error | null; text: string }>((resolve) => {
      readBody(new BodyBuffers(), stream, contentLength, limit, errors, (error, body) =>
        resolve({ error, text: body.toString() })
      )
    })
    if (fail !== undefined) stream.emit('error', fail)
    else {
      for (const part of parts) stream.write(part)
      stream.end()
    }
    return await result
  }
  t.same(await read(['{"a"', ':1}'], '7', 100), { error: null, text: '{"a":1}' })
  t.same(await read(['{}'], undefined, 100), { error: null, text: '{}' }, 'no Content-Length')
  t.same(
    await read(['{"a"', ':1', '}'], undefined, 100),
    { error: null, text: '{"a":1}' },
    'no Content-Length, chunks joined'
  )
  t.match(
    (await read(['{"a":1}'], '3', 100)).error,
    { statusCode: 400, message: 'bad length' },
    'more bytes than announced'
  )
  t.match((await read(['{}'], '1000', 100)).error, { statusCode: 413 }, 'Content-Length over the limit')
  t.match(
    (await read(['x'.repeat(60), 'y'.repeat(60)], undefined, 100)).error,
    { statusCode: 413 },
    'bytes over the limit'
  )
  t.match(
    (await read(['{}'], '5', 100)).error,
    { statusCode: 400, message: 'bad length' },
    'bytes differ from Content-Length'
  )
  t.match(
    (await read([], undefined, 100, new Error('reset'))).error,
    { statusCode: 400, message: 'reset' },
    'a failing stream'
  )
})

t.test(
  'a large body is read into the buffer the last one gave back, when no other was being read; a small one never',
  async (t) => {
    const errors = { tooLarge: () => new Error('too large'), badLength: () => new Error('bad length') }
    const buffers = new BodyBuffers()
    t.teardown(() => {
      buffers.close()
    })
    const read = async (text: string): Promise<Buffer> => {
      const stream = new PassThrough()
      const result = new Promise<Buffer>((resolve, reject) => {
        readBody(buffers, stream, String(Buffer.byteLength(text)), 1e9, errors, (error, body) =>
          error === null ? resolve(body) : reject(error)
        )
      })
      // In chunks, as a socket gives them.
      for (let at = 0; at < text.length; at += 65536) stream.write(text.slice(at, at + 65536))
      stream.end()
      return await result
    }
    const large = 'a'.repeat(SPARE_MIN_BYTES + 10)
    const first = await read(large)
    t.equal(first.toString(), large)
    buffers.release(first)
    const smaller = 'b'.repeat(SPARE_MIN_BYTES + 5)
    const second = await read(smaller)
    t.equal(second.buffer, first.buffer, 'the same memory')
    t.equal(second.toString(), smaller, 'holding the new body, at its own length')
    const third = await read(large)
    t.not(third.buffer, first.buffer, 'taken: a body read meanwhile gets a buffer of its own')
    t.equal(third.toString(), large)
    buffers.release(second)
    buffers.release(second)
    buffers.release(third)
    const again = await read(smaller)
    t.equal(
      again.buffer,
      third.buffer,
      'given back while another body was read, a buffer is dropped; the last one given back is kept'
    )
    buffers.release(again)
    const larger = 'c'.repeat(SPARE_MIN_BYTES * 2)
    const fourth = await read(larger)
    t.not(fourth.buffer, first.buffer, 'a spare too small is not used')
    t.not(fourth.buffer, third.buffer)
    t.equal(fourth.toString(), larger)
    buffers.release(fourth)
    const small = await read('{"a":1}')
    t.not(small.buffer, fourth.buffer, 'a small body is read into a buffer of its own')
    buffers.release(small)
    buffers.release(Buffer.from(larger))
    t.equal((await read(larger)).buffer, fourth.buffer, 'buffers the reader did not allocate are not taken back')
  }
)

t.test('an app reads a large body into a WebAssembly memory of its own, which its skip runs through', async (t) => {
  const errors = { tooLarge: () => new Error('too large'), badLength: () => new Error('bad length') }
  const wire = new WireState({ memoBytes: 0 })
  const other = new WireState({ memoBytes: 0 })
  t.teardown(() => {
    wire.close()
    other.close()
  })
  const read = async (text: string): Promise<Buffer> => {
    const stream = new PassThrough()
    const result = new Promise<Buffer>((resolve, reject) => {
      readBody(wire.bodies, stream, String(Buffer.byteLength(text)), 1e9, errors, (error, body) =>
        error === null ? resolve(body) : reject(error)
      )
    })
    for (let at = 0; at < text.length; at += 65536) stream.write(text.slice(at, at + 65536))
    stream.end()
    return await result
  }
  const array = (count: number): string => '[' + '"x\\"",'.repeat(count) + '{"y":[]}]'
  const large = await read(array(SPARE_MIN_BYTES / 4))
  const skip = wire.wasm.skipperOf(large)
  t.ok(skip, 'in a memory of the app')
  t.equal(skip?.(0), large.length, 'skipped whole there')
  t.equal(other.wasm.skipperOf(large), undefined, "another app's skip never runs in it")
  wire.bodies.release(large)
  const smaller = await read(array(SPARE_MIN_BYTES / 5))
  t.equal(smaller.buffer, large.buffer, 'the spare: the same memory')
  t.equal(wire.wasm.skipperOf(smaller)?.(0), smaller.length, 'what lies after the body in it does not count')
  t.throws(() => wire.wasm.skipperOf(smaller.subarray(0, -1))?.(0), { name: 'NotProjected' }, 'a truncated body')
  wire.bodies.release(smaller)
  const small = await read('[1]')
  t.equal(wire.wasm.skipperOf(small), undefined, 'a small body is a plain buffer: the TypeScript skipper runs')
})

t.test("through HTTP, managedFields change nothing in a hook's answer", async (t) => {
  const app = await testApp(t)
  const { request, now } = daemonJobFixture(30)
  const withFields = JSON.stringify(request)
  const without = JSON.stringify(dropped(request))
  const url = '/hooks/daemonjob/sync'
  const a = await app.inject({
    method: 'POST',
    url,
    payload: withFields,
    headers: { 'content-type': 'application/json' },
  })
  const b = await app.inject({
    method: 'POST',
    url,
    payload: without,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  t.equal(a.statusCode, 200)
  t.equal(a.body, b.body, 'byte-identical answers, whatever the content type')
  t.ok(now instanceof Date)
  const bad = await app.inject({
    method: 'POST',
    url,
    payload:
      '{"parent":{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[1]}},"__proto__":{"x":1}}',
    headers: { 'content-type': 'application/json' },
  })
  t.equal(bad.statusCode, 400, 'the JSON parser still refuses __proto__ keys')
  const broken = await app.inject({
    method: 'POST',
    url,
    payload: '{"parent":{"metadata":{"managedFields":[1]}',
    headers: { 'content-type': 'application/json' },
  })
  t.equal(broken.statusCode, 400, 'and malformed JSON')
})
