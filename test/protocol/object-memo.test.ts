// What the projection builds of a child or related object is remembered and given again only for
// the same bytes under the same group and name; a parent's spec and status under its UID; what is
// given again is frozen; a memo never grows past its limit, and what was used in the last seconds
// is never pushed out; two apps' memos are their own.
import t from 'tap'
import { memoized, project } from '../../src/protocol/projection.js'
import { ObjectMemo, RECENT_MS } from '../../src/protocol/object-memo.js'
import { WireState } from '../../src/protocol/wire-state.js'
import { freezeForGood } from '../../src/k8s/derived.js'
import type { Shape } from '../../src/k8s/reads.js'
import { syncRequestShape } from '../../src/protocol/hooks.js'

const POD = memoized({ metadata: { name: true }, status: { phase: true } })
const SHAPE: Shape = { parent: true, related: { '*': { '*': POD } } }

function request (pods: Record<string, unknown>, parent: unknown = { n: 1 }): Buffer {
  return Buffer.from(JSON.stringify({ parent, related: { 'Pod.v1': pods } }))
}
function pod (name: string, phase: string, extra = 'x'): unknown {
  return { metadata: { name, uid: extra }, spec: { big: extra.repeat(50) }, status: { phase } }
}
type Built = {
  parent: unknown
  related: Record<string, Record<string, { metadata: { name: string }; status: { phase: string } }>>
}
let wire = new WireState()
const build = (body: Buffer, shape: Shape = SHAPE): Built => project(body, shape, wire) as Built

t.beforeEach(() => {
  wire = new WireState()
})

t.test('the same bytes under the same name give the object built before, frozen', async (t) => {
  const body = request({ a: pod('a', 'Running'), b: pod('b', 'Pending') })
  const first = build(body)
  t.same(first, {
    parent: { n: 1 },
    related: {
      'Pod.v1': {
        a: { metadata: { name: 'a' }, status: { phase: 'Running' } },
        b: { metadata: { name: 'b' }, status: { phase: 'Pending' } },
      },
    },
  })
  const second = build(request({ a: pod('a', 'Running'), b: pod('b', 'Pending') }, { n: 2 }))
  t.equal(second.related['Pod.v1']?.a, first.related['Pod.v1']?.a, 'the same object')
  t.same(second.parent, { n: 2 }, 'the rest built anew')
  t.ok(Object.isFrozen(second.related['Pod.v1']?.a?.status), 'frozen all the way down')
  t.throws(
    () => {
      ;(second.related['Pod.v1']?.a?.status as { phase: string }).phase = 'x'
    },
    TypeError,
    'a hook cannot write into it'
  )
  t.notOk(Object.isFrozen(second.related['Pod.v1']), "the maps around it are the request's own")
  t.equal(wire.memo.count, 2)
})

t.test('changed bytes, even in what the shape skips, are built anew; so is another name', async (t) => {
  const first = build(request({ a: pod('a', 'Running') }))
  const skippedChanged = build(request({ a: pod('a', 'Running', 'y') }))
  t.not(skippedChanged.related['Pod.v1']?.a, first.related['Pod.v1']?.a)
  t.same(skippedChanged.related['Pod.v1']?.a, first.related['Pod.v1']?.a)
  const readChanged = build(request({ a: pod('a', 'Succeeded', 'y') }))
  t.equal(readChanged.related['Pod.v1']?.a?.status.phase, 'Succeeded')
  const renamed = build(request({ b: pod('a', 'Succeeded', 'y') }))
  t.not(renamed.related['Pod.v1']?.b, readChanged.related['Pod.v1']?.a, 'the same bytes under another name')
  t.equal(wire.memo.count, 2, "a name's changed object replaces its entry")
})

t.test('a longer object that starts with the remembered bytes is not taken for it', async (t) => {
  build(request({ a: { status: { phase: 'Running' } } }))
  const text = '{"parent":{},"related":{"Pod.v1":{"a":{"status":{"phase":"Running"}},"b":1}}}'
  t.throws(
    () => build(Buffer.from(text)),
    { name: 'NotProjected' },
    'a number where an object is memoized: the strict parser decides'
  )
  const nulled = build(
    Buffer.from('{"parent":{},"related":{"Pod.v1":{"a":null,"b":"x","c":[{"status":{"phase":"P","x":1}}]}}}')
  )
  t.same(
    nulled.related['Pod.v1'],
    { a: null, b: 'x', c: [{ status: { phase: 'P' } }] },
    'other values are built as the shape says'
  )
  const longer = build(
    Buffer.from('{"parent":{},"related":{"Pod.v1":{"a":{"status":{"phase":"Running"},"metadata":{"name":"z"}}}}}')
  )
  t.same(longer.related['Pod.v1']?.a, { status: { phase: 'Running' }, metadata: { name: 'z' } })
})

t.test('numbers in the rest of the request are never taken for objects of the memo', async (t) => {
  build(request({ a: pod('a', 'Running') }))
  const body = Buffer.from(
    JSON.stringify({
      parent: { n: 0, m: [0, 1] },
      related: { 'Pod.v1': { a: pod('a', 'Running'), 0: pod('0', 'Failed') } },
    })
  )
  const built = build(body)
  t.same(built.parent, { n: 0, m: [0, 1] })
  t.equal(built.related['Pod.v1']?.['0']?.status.phase, 'Failed', 'a name like an array index')
  t.equal(build(body).related['Pod.v1']?.['0']?.status.phase, 'Failed', 'and again from the memo')
})

t.test('names written with escapes or beyond ASCII are built every time, correctly', async (t) => {
  const text = (phase: string): Buffer =>
    Buffer.from(
      `{"parent":{},"related":{"Pod.v1":{"a\\\\b":{"status":{"phase":"${phase}"}},` +
        `"a\\u005cb":{"status":{"phase":"${phase}2"}},"é":{"status":{"phase":"${phase}"}}}}}`
    )
  const first = build(text('Running'))
  t.same(
    first.related['Pod.v1'],
    { 'a\\b': { status: { phase: 'Running2' } }, é: { status: { phase: 'Running' } } },
    'the last of two members of one name counts, as for JSON.parse'
  )
  t.equal(wire.memo.count, 0)
  t.same(build(text('Failed')).related['Pod.v1'], {
    'a\\b': { status: { phase: 'Failed2' } },
    é: { status: { phase: 'Failed' } },
  })
})

t.test("arrays met by a memoized shape: each element's objects are memoized the same way", async (t) => {
  const text =
    '{"parent":{},"related":[{"Pod.v1":{"a":{"status":{"phase":"A"}}}},{"Pod.v1":{"a":{"status":{"phase":"B"}}}}]}'
  const expected = [{ 'Pod.v1': { a: { status: { phase: 'A' } } } }, { 'Pod.v1': { a: { status: { phase: 'B' } } } }]
  t.same(build(Buffer.from(text)).related, expected)
  t.same(build(Buffer.from(text)).related, expected, 'again, with the memo')
})

t.test('a memo never holds more than its limit, and keeps what was used in the last seconds', async (t) => {
  const body = Buffer.from('{"x":"' + 'a'.repeat(300) + '"}')
  const memo = new ObjectMemo(3 * (body.length + 100))
  const now = 1_000_000
  memo.remember('a', body, 0, body.length, { a: 1 }, 100, now)
  memo.remember('b', body, 0, body.length, { b: 1 }, 100, now)
  memo.remember('c', body, 0, body.length, { c: 1 }, 100, now + 1)
  t.equal(memo.count, 3)
  t.ok(memo.size <= memo.limit)
  memo.remember('d', body, 0, body.length, { d: 1 }, 100, now + RECENT_MS - 1)
  t.equal(memo.count, 3, 'no room, and everything was used recently: not remembered')
  t.notOk(memo.hasRoom(now + RECENT_MS - 1))
  t.ok(memo.recall('a', body, 0, now + RECENT_MS - 1), 'a used again: now the most recent')
  t.ok(memo.hasRoom(now + RECENT_MS + 1), 'b has not been used for a while')
  memo.remember('d', body, 0, body.length, { d: 1 }, 100, now + RECENT_MS + 1)
  t.notOk(memo.recall('b', body, 0, now + RECENT_MS + 1), 'the least recently used went')
  t.ok(memo.recall('a', body, 0, now + RECENT_MS + 1))
  t.ok(memo.recall('d', body, 0, now + RECENT_MS + 1))
  t.ok(memo.size <= memo.limit)
  memo.remember('huge', Buffer.alloc(2000, 0x20), 0, 2000, {}, 1, now + 10 * RECENT_MS)
  t.notOk(memo.recall('huge', Buffer.alloc(2000, 0x20), 0, now + 10 * RECENT_MS), 'larger than the memo: never')
  t.equal(memo.count, 3, 'and nothing pushed out for it')
})

t.test('an object the shape reads a sliver of is remembered by the text kept of it', async (t) => {
  const sparse = memoized({ metadata: { name: true }, status: { phase: true } })
  const shape: Shape = { parent: true, related: { '*': { '*': sparse } } }
  const long = 'long'.repeat(200)
  const first = build(request({ a: pod('a', 'Running', long), b: pod('b', 'Pending', long) }), shape)
  t.equal(wire.memo.count, 2)
  const bytes = request({ a: pod('a', 'Running', long) }).length
  t.ok(wire.memo.size < bytes, "what it holds is the kept text, not the object's bytes")
  const again = build(
    request({ a: pod('a', 'Running', 'other'.repeat(160)), b: pod('b', 'Pending', long) }, { n: 2 }),
    shape
  )
  t.equal(
    again.related['Pod.v1']?.a,
    first.related['Pod.v1']?.a,
    'what is skipped changed, what is kept did not: the same object'
  )
  t.equal(again.related['Pod.v1']?.b, first.related['Pod.v1']?.b)
  t.ok(Object.isFrozen(again.related['Pod.v1']?.a?.metadata), 'frozen all the way down')
  t.same(again.parent, { n: 2 })
  const changed = build(request({ a: pod('a', 'Failed', long), b: pod('b', 'Pending', long) }), shape)
  t.not(changed.related['Pod.v1']?.a, first.related['Pod.v1']?.a, 'what is kept changed: built anew')
  t.same(changed.related['Pod.v1']?.a, { metadata: { name: 'a' }, status: { phase: 'Failed' } })
  t.equal(changed.related['Pod.v1']?.b, first.related['Pod.v1']?.b, 'the other one still from the memo')
  const text = JSON.stringify({
    parent: {},
    related: { 'Pod.v1': { a: pod('a', 'Failed', long), b: pod('b', 'Pending', long) } },
  })
  const spaced = build(Buffer.from(text.replace('"phase":"Failed"', '"phase": "Failed"')), shape)
  t.same(
    spaced.related['Pod.v1']?.a,
    { metadata: { name: 'a' }, status: { phase: 'Failed' } },
    'other kept bytes, the same value: built anew, rightly'
  )
  t.equal(
    build(Buffer.from(text), shape).related['Pod.v1']?.b,
    first.related['Pod.v1']?.b,
    'and the stand-ins after it stay in place'
  )
  t.throws(
    () => build(Buffer.from(text.replace('"phase":"Pending"', '"phase":"Pending"]')), shape),
    { name: 'NotProjected' },
    'a broken object is refused, remembered text or not'
  )
})

t.test('an object read to a sliver whose kept text holds an unsafe name is never remembered', async (t) => {
  const sparse = memoized({ metadata: true })
  const shape: Shape = { parent: true, related: { '*': { '*': sparse } } }
  const text = `{"parent":{},"related":{"Pod.v1":{"a":{"metadata":{"__proto__":{"x":1}},"spec":"${'s'.repeat(500)}"}}}}`
  t.throws(() => build(Buffer.from(text), shape), { name: 'NotProjected' })
  t.equal(wire.memo.count, 0)
  t.throws(() => build(Buffer.from(text), shape), { name: 'NotProjected' }, 'and refused again')
})

t.test('a memo resized smaller drops the least recently used first; 0 turns it off', async (t) => {
  const body = Buffer.from('{"x":1}')
  const memo = new ObjectMemo(1000)
  for (const key of ['a', 'b', 'c']) memo.remember(key, body, 0, body.length, {}, 3, 1)
  memo.recall('a', body, 0, 5000)
  memo.resize(2 * (body.length + 3))
  t.same([memo.recall('b', body, 0, 6000), memo.count], [undefined, 2], 'b was the least recently used')
  t.ok(memo.recall('a', body, 0, 6000) !== undefined && memo.recall('c', body, 0, 6000) !== undefined)
  memo.resize(0)
  t.equal(memo.count, 0)
  memo.remember('d', body, 0, body.length, {}, 3, 4)
  t.notOk(memo.hasRoom(4))
  t.equal(memo.count, 0, 'off: nothing remembered')
})

t.test('freezeForGood freezes what JSON.parse builds, shared or not', async (t) => {
  const value = freezeForGood(
    JSON.parse('{"a":[{"b":1}],"c":{"d":null}}') as { a: Array<{ b: number }>; c: { d: null } }
  )
  t.ok(Object.isFrozen(value) && Object.isFrozen(value.a) && Object.isFrozen(value.a[0]) && Object.isFrozen(value.c))
  t.equal(freezeForGood(3), 3)
})

t.test("a parent's spec and status are remembered by its UID: two parents synced in turn both hit", async (t) => {
  const shape = syncRequestShape({})
  const parent = (uid: string, phase: string): unknown => ({
    apiVersion: 'x/v1',
    kind: 'P',
    metadata: { name: uid, uid },
    spec: { size: uid },
    status: { phase },
  })
  const body = (uid: string, phase: string): Buffer => Buffer.from(JSON.stringify({ parent: parent(uid, phase) }))
  type Parent = { parent: { spec: unknown; status: unknown } }
  const sync = (uid: string, phase: string): Parent['parent'] =>
    (project(body(uid, phase), shape, wire) as Parent).parent
  const first = [sync('u1', 'Running'), sync('u2', 'Running')]
  t.same([wire.memo.hits, wire.memo.misses], [0, 4], 'nothing remembered yet')
  const second = [sync('u1', 'Running'), sync('u2', 'Running')]
  t.same([wire.memo.hits, wire.memo.misses], [4, 4], "each parent's spec and status from the memo")
  t.equal(second[0]?.spec, first[0]?.spec, 'the same object')
  t.equal(second[1]?.status, first[1]?.status)
  t.same(sync('u1', 'Succeeded').status, { phase: 'Succeeded' }, 'a changed status is built anew')
  const late = Buffer.from('{"parent":{"spec":{"size":"u1"},"metadata":{"uid":"u1"}}}')
  const built = (project(late, shape, wire) as Parent).parent.spec
  t.same(built, { size: 'u1' }, 'a UID after the spec: built, not remembered')
})

t.test('a child is remembered by its group and key: the same key in another group is another object', async (t) => {
  const shape: Shape = { parent: true, related: { '*': { '*': POD } } }
  const related = { 'Pod.v1': { a: pod('a', 'Running') }, 'Pod.v2': { a: pod('a', 'Running') } }
  const text = JSON.stringify({ parent: {}, related })
  const first = build(Buffer.from(text), shape)
  t.equal(wire.memo.count, 2, 'one entry per group')
  const again = build(Buffer.from(text), shape)
  t.equal(again.related['Pod.v2']?.a, first.related['Pod.v2']?.a)
  t.not(again.related['Pod.v1']?.a, again.related['Pod.v2']?.a, 'each group its own object')
  t.equal(wire.memo.hits, 2)
})

t.test("two apps' wire states share nothing: a hit in one is a miss in the other", async (t) => {
  const other = new WireState()
  const body = request({ a: pod('a', 'Running') })
  build(body)
  build(body)
  t.equal(wire.memo.hits, 1)
  project(body, SHAPE, other)
  t.same([other.memo.hits, other.memo.misses], [0, 1], 'the other app remembered nothing')
  t.not(other.bodies, wire.bodies, 'nor shares the body buffers')
})
