// RFC 7386's own examples (its appendix A), and that nothing given is changed.
import t from 'tap'
import { mergePatch } from '../../src/k8s/merge-patch.js'

t.test("the RFC's examples", async t => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd']
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
  ]
  for (const [target, patch, expected] of cases) {
    t.same(mergePatch(target, patch), expected, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`)
  }
})

t.test('neither the target nor the patch is changed', async t => {
  const target = { spec: { containers: [{ name: 'a' }], parallelism: 1 } }
  const patch = { spec: { parallelism: 2, containers: [{ name: 'b' }] } }
  const result = mergePatch(target, patch) as typeof target
  t.same(target, { spec: { containers: [{ name: 'a' }], parallelism: 1 } })
  result.spec.containers[0]!.name = 'changed'
  t.same(patch.spec.containers, [{ name: 'b' }], 'the result shares nothing with the patch')
})
