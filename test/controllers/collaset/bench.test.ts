// The benchmark's CollaSet request is one the hook answers correctly, and `verify` notices a
// wrong answer.
import t from 'tap'
import { collaSetFixture } from '../../../bench/collaset.js'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { context } from '../../helpers/fixtures.js'

for (const size of [4, 100, 1000]) {
  t.test(`${size} Pods`, async t => {
    const fixture = collaSetFixture(size)
    const { response, effects } = syncCollaSet(structuredClone(fixture.request), context(fixture.now))
    t.doesNotThrow(() => fixture.verify(response), 'the hook answers as expected')
    t.same(effects.map(e => e.target.name).sort(), fixture.expected.effects, 'the two Pods owed their condition')
    t.equal(JSON.stringify(collaSetFixture(size).request), JSON.stringify(fixture.request), 'deterministic')
    t.throws(() => fixture.verify({ ...response, children: response.children.slice(1) }), /Pods, expected/)
    t.throws(() => fixture.verify({ ...response, status: { ...response.status, readyReplicas: 0 } }), /readyReplicas/)
  })
}
t.throws(() => collaSetFixture(2), /at least 4/)

t.test('npm run bench times a CollaSet of 100 and of 1,000 Pods and judges growth from one to the other', async t => {
  const { CASES, kindGoals } = await import('../../../bench/kinds.js')
  const { percentile } = await import('../../../bench/percentile.js')
  t.same(CASES.find(c => c.kind === 'CollaSet')?.sizes, [100, 1000])
  for (const c of CASES) t.equal(c.sizes[1] / c.sizes[0], 10, `${c.kind}: ten times the objects`)
  const row = (size: number, p50: number, p99: number, parseMs = 100) => ({
    kind: 'CollaSet',
    size,
    unit: 'Pods',
    bodyBytes: 1,
    responseBytes: 1,
    requests: 20,
    p50,
    p99,
    parseMs
  })
  t.match(
    kindGoals([row(100, 4, 10), row(1000, 47, 90)]),
    [
      /^- PASS: CollaSet p99 .* 1,000 Pods = 90.0 ms/,
      /^- PASS: CollaSet at 1,000 Pods: a whole sync is 2.13× as fast as JSON.parse/,
      /^- PASS: CollaSet p50 grows 11.75×/
    ]
  )
  t.match(
    kindGoals([row(100, 4, 10), row(1000, 49, 1200, 70)]),
    [
      /^- FAIL: CollaSet p99/,
      /^- FAIL: CollaSet at 1,000 Pods: a whole sync is 1.43×/,
      /^- FAIL: CollaSet p50 grows 12.25×/
    ]
  )
  t.equal(percentile([1, 2, 3, 4], 0.5), 2)
  t.equal(percentile([1, 2, 3, 4], 0.99), 4)
})
