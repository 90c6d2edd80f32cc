// bench/parents.ts: parents of every kind synced in turn, then again; the second round must find
// objects in the memo (a parent's spec and status by its UID, its children by group and key).
// Counts only, at a small size: no timing is judged here.
import t from 'tap'
import { hitRateGoals, memoHitRates } from '../../bench/parents.js'
import { CASES } from '../../bench/kinds.js'

t.test('syncing parents of every kind in turn, the memo hits the second time', async t => {
  // 100 objects: the smallest every kind's fixture allows.
  const rows = await memoHitRates(() => 100, 3)
  t.equal(rows.length, CASES.length, 'every kind')
  for (const row of rows) {
    t.ok(row.again.lookups > 0, `${row.kind}: looked up`)
    t.ok(row.again.hits > 0, `${row.kind}: hit rate above zero`)
    t.ok(row.again.hits >= row.first.hits, `${row.kind}: more hits once every parent was seen`)
  }
  t.notMatch(hitRateGoals(rows).join('\n'), /FAIL/)
})
