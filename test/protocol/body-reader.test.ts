// The hook routes' body reader: managedFields cut out of the raw bytes before parsing, the rest
// untouched; bodies read into a kept buffer with fastify's limits and errors.
import t from 'tap'
import { PassThrough } from 'node:stream'
import { BodyBuffer, cutManagedFields, keptRanges, readChunks, withoutManagedFields } from '../../src/protocol/body-reader.js'
import { daemonJobFixture } from '../../bench/daemonjob.js'
import { collaSetFixture } from '../../bench/collaset.js'
import { testApp } from '../helpers/app.js'

const cut = (text: string): string => withoutManagedFields(Buffer.from(text)).toString('utf8')

/** The value with every `managedFields` member removed, whatever its depth. */
function dropped (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropped)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'managedFields').map(([k, v]) => [k, dropped(v)]))
  }
  return value
}

t.test('managedFields members go, wherever they are in an object, and nothing else', async t => {
  const mf = '[{"manager":"kubelet","fieldsV1":{"f:status":{"k:{\\"type\\":\\"Ready\\"}":{}},"f:spec":{"f:podCIDRs":{"v:\\"10.0.0.0/24]\\"":{}}}},"time":"x"}]'
  t.equal(cut(`{"metadata":{"managedFields":${mf},"name":"a"}}`), '{"metadata":{"name":"a"}}', 'first member')
  t.equal(cut(`{"metadata":{"name":"a","managedFields":${mf},"uid":"u"}}`), '{"metadata":{"name":"a","uid":"u"}}', 'middle member')
  t.equal(cut(`{"metadata":{"name":"a","managedFields":${mf}}}`), '{"metadata":{"name":"a"}}', 'last member')
  t.equal(cut(`{"metadata":{"managedFields":${mf}}}`), '{"metadata":{}}', 'only member')
  t.equal(cut('{"metadata":{"name":"a","managedFields":null}}'), '{"metadata":{"name":"a"}}', 'null')
  t.same(JSON.parse(cut(`{\n  "metadata": {\n    "name": "a",\n    "managedFields" : ${mf}\n  }\n}`)), { metadata: { name: 'a' } }, 'pretty-printed')
  t.same(JSON.parse(cut(`{\n  "metadata": {\n    "managedFields" : ${mf} ,\n    "name": "a"\n  }\n}`)), { metadata: { name: 'a' } }, 'pretty-printed, first')
  t.equal(cut('{"a":"€ ü 😀","metadata":{"managedFields":[{"m":"ß"}],"name":"ü"}}'), '{"a":"€ ü 😀","metadata":{"name":"ü"}}', 'UTF-8 around and inside')
})

t.test('what only looks like managedFields is left alone', async t => {
  const same = (text: string, why: string): void => { t.equal(cut(text), text, why) }
  same('{"metadata":{"annotations":{"last-applied":"{\\"managedFields\\":[1]}"}}}', 'inside a string')
  same('{"x\\"managedFields":[1],"y":2}', 'the end of a longer member name')
  same('{"managedFields":{"a":1}}', 'not an array')
  same('{"managedFields":[1,{"a":[2}]}', 'brackets that do not match')
  same('{"managedFields":[1,"unclosed]}', 'a string that does not close')
  same('{"managedFields":[1] "name":"a"}', 'no comma or brace after it')
  same('{"managedFields":[1],"managedFields":[2]}', 'a duplicate right after it')
  same('{"a":1}', 'no managedFields at all')
  t.same(keptRanges(Buffer.from('{"a":1}')), [0, 7])
})

t.test('cutting in place returns the kept length; the copy leaves its input alone', async t => {
  const text = '{"metadata":{"name":"a","managedFields":[{"m":1}]},"spec":{}}'
  const bytes = Buffer.from(text)
  t.equal(withoutManagedFields(bytes).toString(), '{"metadata":{"name":"a"},"spec":{}}')
  t.equal(bytes.toString(), text, 'withoutManagedFields copies')
  const length = cutManagedFields(bytes)
  t.equal(bytes.toString('utf8', 0, length), '{"metadata":{"name":"a"},"spec":{}}')
})

t.test('on whole bench requests the parsed body is the request without its managedFields', async t => {
  for (const request of [daemonJobFixture(100).request, collaSetFixture(20).request]) {
    const text = JSON.stringify(request)
    t.ok(text.includes('"managedFields"'))
    const kept = cut(text)
    t.notOk(kept.includes('"managedFields"'))
    t.same(JSON.parse(kept), dropped(JSON.parse(text)))
  }
})

t.test('the kept buffer holds each body in turn', async t => {
  const kept = new BodyBuffer()
  t.equal(kept.fill([Buffer.from('{"a":'), Buffer.from('1}')], 7).toString(), '{"a":1}')
  t.equal(kept.fill([Buffer.from('[]')], 2).toString(), '[]', 'a shorter body after a longer one')
  const big = Buffer.alloc(3 * 1024 * 1024, 0x20)
  t.equal(kept.fill([big, Buffer.from('1')], big.length + 1).length, big.length + 1, 'grows')
})

t.test('reading chunks keeps fastify\'s limits', async t => {
  const errors = { tooLarge: () => Object.assign(new Error('too large'), { statusCode: 413 }), badLength: () => Object.assign(new Error('bad length'), { statusCode: 400 }) }
  const read = async (parts: string[], contentLength: string | undefined, limit: number, fail?: Error): Promise<{ error: Error | null, text: string }> => {
    const stream = new PassThrough()
    const result = new Promise<{ error: Error | null, text: string }>(resolve => {
      readChunks(stream, contentLength, limit, errors, (error, chunks, length) => resolve({ error, text: Buffer.concat(chunks, length).toString() }))
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
