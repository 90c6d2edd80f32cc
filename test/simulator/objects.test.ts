import t from 'tap'
import { wire } from '../../src/simulator/objects.js'

t.test('wire copies as a trip through JSON does, without the trip', async t => {
  const values: unknown[] = [
    null, 'text', 0, -1.5, true, [], {},
    { a: 1, b: undefined, c: [1, undefined, () => 1, Number.NaN, Infinity], d: { e: null } },
    { when: new Date('2026-01-02T03:04:05Z'), nested: [{ f: Symbol('s'), g: 'kept' }] },
    JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'),
    { metadata: { name: 'a', labels: { 'jobhooks.io/flow': 'b' } }, spec: { list: [[1], [2, [3]]] } }
  ]
  for (const value of values) {
    const copy = wire(value)
    t.same(JSON.stringify(copy), JSON.stringify(value), `${JSON.stringify(value)} as JSON`)
    t.same(copy, JSON.parse(JSON.stringify(value)))
    if (typeof value === 'object' && value !== null) t.not(copy, value, 'a new object')
  }
  const copied = wire(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>
  t.ok(Object.hasOwn(copied, '__proto__'), '__proto__ stays an own field, as JSON.parse makes it')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype is changed')
})
