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
