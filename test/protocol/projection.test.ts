// Building a request from its bytes only as far as a shape says: what is built equals what
// JSON.parse builds of the same members, what is skipped is never built, and anything the reader
// does not accept throws NotProjected (the route then parses the body whole, strictly).
import t from 'tap'
import { project } from '../../src/protocol/projection.js'
import { mergeShapes, WHOLE_OBJECT, type Shape } from '../../src/k8s/reads.js'

const NOT_PROJECTED = { name: 'NotProjected' }
const build = (text: string, shape: Shape): unknown => project(Buffer.from(text), shape)

t.test('a shape names the members built; "*" builds the others; false skips', async (t) => {
  const text = '{"a":1,"b":{"c":"x","d":[1,2]},"e":null,"f":true}'
  t.same(build(text, true), JSON.parse(text), 'true builds everything')
  t.same(build(text, { a: true }), { a: 1 })
  t.same(build(text, { b: { d: true } }), { b: { d: [1, 2] } })
  t.same(build(text, { '*': true, b: false }), { a: 1, e: null, f: true })
  t.same(build(text, { '*': true, b: { c: true } }), { a: 1, b: { c: 'x' }, e: null, f: true })
  t.same(build(text, {}), {}, 'nothing named, nothing built')
})

t.test('an object shape applies to each element of an array, and a scalar is kept as it is', async (t) => {
  const text =
    '{"containers":[{"name":"a","image":"x"},{"name":"b","env":[{"name":"E"}]},"odd",3],"spec":"not an object"}'
  t.same(build(text, { containers: { name: true }, spec: { x: true } }), {
    containers: [{ name: 'a' }, { name: 'b' }, 'odd', 3],
    spec: 'not an object',
  })
  t.same(build('[]', { a: true }), [])
  t.same(build(' [ { "a" : 1 , "b" : 2 } ] ', { a: true }), [{ a: 1 }], 'blanks anywhere')
})

t.test('strings, numbers and literals come out as JSON.parse makes them', async (t) => {
  const values = [
    '"plain"',
    '"esc\\"aped \\\\ \\n \\u00e9"',
    '"€ ü 😀"',
    '""',
    '0',
    '-1.5e3',
    '12345678901234567890',
    'true',
    'false',
    'null',
    `"${'long '.repeat(40)}\\" still"`,
    `"${'x'.repeat(100)}"`,
  ]
  for (const value of values) {
    t.same(
      build(`{"v":${value},"w":[${value}]}`, { v: true, w: { x: true } }),
      { v: JSON.parse(value), w: [JSON.parse(value)] },
      value.slice(0, 30)
    )
  }
  t.same(
    build('{"k\\u0065y":1,"ké":2,"a\\"b":3}', { key: true, ké: true, 'a"b': true }),
    { key: 1, ké: 2, 'a"b': 3 },
    'member names decoded before they are looked up'
  )
})

t.test('a whole Kubernetes object is built as JSON.parse builds it, without managedFields', async (t) => {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'n',
      labels: { a: 'b' },
      managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:status': { 'k:{"type":"Ready"}': {} } } }],
    },
    status: { images: [{ names: ['x@sha256:' + 'a'.repeat(64)], sizeBytes: 1 }] },
  }
  const { managedFields, ...metadata } = node.metadata
  t.ok(managedFields)
  t.same(build(JSON.stringify(node), WHOLE_OBJECT), { ...node, metadata })
  t.same(build(JSON.stringify(node, null, 2), WHOLE_OBJECT), { ...node, metadata }, 'pretty-printed')
})

t.test('anything the reader does not accept throws NotProjected, skipped or built', async (t) => {
  const bad = [
    '',
    ' ',
    '{',
    '{"a":1',
    '{"a":1}}',
    '{"a":1} x',
    '{"a" 1}',
    '{"a":1 "b":2}',
    '{a:1}',
    '{"a":[1,2}',
    '{"a":{"b":1]}',
    '{"a":"unclosed}',
    '{"a":[1,"unclosed]}',
    '{"a":[1,x]}',
    '{"a":[1,@]}',
    '{"a":}',
  ]
  for (const text of bad) {
    t.throws(() => build(text, {}), NOT_PROJECTED, `skipped: ${JSON.stringify(text)}`)
  }
  for (const text of ['{"a":tru}', '{"a":[1,}']) {
    t.throws(() => build(text, { a: true }), `built: ${text}`)
  }
  t.doesNotThrow(() => build('{"a":[1 2 tru]}', {}), 'the order of the tokens of a skipped value is not checked')
})

t.test(
  '__proto__ and constructor as names of anything built throw; in skipped parts they are never built',
  async (t) => {
    t.throws(() => build('{"__proto__":{"x":1}}', { '*': true }), NOT_PROJECTED)
    t.throws(() => build('{"a":{"b":{"__proto__":{"x":1}}}}', { a: true }), NOT_PROJECTED, 'inside a value kept whole')
    t.throws(() => build('{"a":{"constructor":{"prototype":{}}}}', { a: true }), NOT_PROJECTED)
    t.throws(
      () => build('{"a":{"\\u005f_proto__":1}}', { a: { '*': true } }),
      NOT_PROJECTED,
      'escaped, as a member name'
    )
    t.same(build('{"a":{"__proto__":{"x":1}},"b":1}', { b: true }), { b: 1 }, 'skipped')
    t.same(Object.getPrototypeOf(build('{"a":{"b":1}}', { a: true })), Object.prototype)
  }
)

t.test('merged shapes build what either builds', async (t) => {
  const text =
    '{"spec":{"containers":[{"name":"a","image":"x","ports":[1]}],"nodeName":"n","other":1},' +
      '"status":{"phase":"Running"}}'
  const merged = mergeShapes(
    { spec: { containers: { name: true } } },
    { spec: { nodeName: true, containers: { image: true } } }
  )
  t.same(build(text, merged), { spec: { containers: [{ name: 'a', image: 'x' }], nodeName: 'n' } })
  t.same(
    build(
      text,
      mergeShapes({ spec: { '*': true, containers: { name: true } } }, { spec: { containers: { ports: true } } })
    ),
    { spec: { containers: [{ name: 'a', ports: [1] }], nodeName: 'n', other: 1 } },
    '"*" and a named member'
  )
  t.equal(mergeShapes({ a: true }, true), true)
  t.same(mergeShapes(false, { a: true }), { a: true })
  t.same(mergeShapes({ a: true }, false), { a: true })
})
