import t from 'tap'
import { findCondition, hasTrueCondition, setCondition } from '../../src/k8s/conditions.js'

const then = new Date('2026-01-01T00:00:00Z')
const now = new Date('2026-02-01T00:00:00Z')

t.test('a condition keeps its transition time until its status changes', async t => {
  const first = setCondition(undefined, { type: 'Valid', status: 'True', reason: 'A' }, then)
  t.same(first, [{ type: 'Valid', status: 'True', reason: 'A', lastTransitionTime: '2026-01-01T00:00:00Z' }])
  const same = setCondition(first, { type: 'Valid', status: 'True', reason: 'B' }, now)
  t.equal(same[0]?.lastTransitionTime, '2026-01-01T00:00:00Z')
  t.equal(same[0]?.reason, 'B')
  const flipped = setCondition(same, { type: 'Valid', status: 'False' }, now)
  t.equal(flipped[0]?.lastTransitionTime, '2026-02-01T00:00:00Z')
  const two = setCondition(flipped, { type: 'Complete', status: 'True' }, now)
  t.same(two.map(c => c.type), ['Valid', 'Complete'])
  t.same(
    setCondition([null, 'x', { type: 'Valid', status: 'True' }], { type: 'Other', status: 'True' }, now).length,
    2,
    'garbage entries are dropped'
  )
})

t.test('reading conditions tolerates anything', async t => {
  t.equal(findCondition(undefined, 'X'), undefined)
  t.equal(findCondition([{ type: 'X', status: 'True' }], 'X')?.status, 'True')
  t.ok(hasTrueCondition({ conditions: [{ type: 'Complete', status: 'True' }] }, 'Complete'))
  t.notOk(hasTrueCondition({ conditions: [{ type: 'Complete', status: 'False' }] }, 'Complete'))
  t.notOk(hasTrueCondition('nope', 'Complete'))
})
