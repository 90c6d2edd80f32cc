// The hook routes' body reader: one buffer per body, fastify's limits and errors; and through
// HTTP, what the routes build of a body (src/protocol/projection.ts) answers as the whole would.
import t from 'tap'
import { PassThrough } from 'node:stream'
import { readBody } from '../../src/protocol/body-reader.js'
import { daemonJobFixture } from '../../bench/daemonjob.js'
import { testApp } from '../helpers/app.js'

/** The value with every `managedFields` member removed, whatever its depth. */
function dropped (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropped)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'managedFields').map(([k, v]) => [k, dropped(v)]))
  }
  return value
}

t.test('reading a body keeps fastify\'s limits', async t => {
  const errors = { tooLarge: () => Object.assign(new Error('too large'), { statusCode: 413 }), badLength: () => Object.assign(new Error('bad length'), { statusCode: 400 }) }
  const read = async (parts: string[], contentLength: string | undefined, limit: number, fail?: Error): Promise<{ error: Error | null, text: string }> => {
    const stream = new PassThrough()
    const result = new Promise<{ error: Error | null, text: string }>(resolve => {
      readBody(stream, contentLength, limit, errors, (error, body) => resolve({ error, text: body.toString() }))
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
  t.same(await read(['{"a"', ':1', '}'], undefined, 100), { error: null, text: '{"a":1}' }, 'no Content-Length, chunks joined')
  t.match((await read(['{"a":1}'], '3', 100)).error, { statusCode: 400, message: 'bad length' }, 'more bytes than announced')
  t.match((await read(['{}'], '1000', 100)).error, { statusCode: 413 }, 'Content-Length over the limit')
  t.match((await read(['x'.repeat(60), 'y'.repeat(60)], undefined, 100)).error, { statusCode: 413 }, 'bytes over the limit')
  t.match((await read(['{}'], '5', 100)).error, { statusCode: 400, message: 'bad length' }, 'bytes differ from Content-Length')
  t.match((await read([], undefined, 100, new Error('reset'))).error, { statusCode: 400, message: 'reset' }, 'a failing stream')
})

t.test('through HTTP, managedFields change nothing in a hook\'s answer', async t => {
  const app = await testApp(t)
  const { request, now } = daemonJobFixture(30)
  const withFields = JSON.stringify(request)
  const without = JSON.stringify(dropped(request))
  const url = '/hooks/daemonjob/sync'
  const a = await app.inject({ method: 'POST', url, payload: withFields, headers: { 'content-type': 'application/json' } })
  const b = await app.inject({ method: 'POST', url, payload: without, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(a.statusCode, 200)
  t.equal(a.body, b.body, 'byte-identical answers, whatever the content type')
  t.ok(now instanceof Date)
  const bad = await app.inject({ method: 'POST', url, payload: '{"parent":{"apiVersion":"v1","kind":"X","metadata":{"name":"a","managedFields":[1]}},"__proto__":{"x":1}}', headers: { 'content-type': 'application/json' } })
  t.equal(bad.statusCode, 400, 'the JSON parser still refuses __proto__ keys')
  const broken = await app.inject({ method: 'POST', url, payload: '{"parent":{"metadata":{"managedFields":[1]}', headers: { 'content-type': 'application/json' } })
  t.equal(broken.statusCode, 400, 'and malformed JSON')
})
