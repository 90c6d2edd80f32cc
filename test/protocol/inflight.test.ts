import t from 'tap'
import { getHeapStatistics } from 'node:v8'
import { chargeOf, defaultInflightBudget, InflightBudget } from '../../src/protocol/inflight.js'

t.test('calls are admitted while their bytes fit the budget; a call alone always is', async (t) => {
  const budget = new InflightBudget(100)
  t.ok(budget.admit(60))
  t.ok(budget.admit(40), 'exactly the budget')
  t.notOk(budget.admit(1), 'one byte more: shed')
  t.equal(budget.inflight, 100, 'a shed call takes nothing')
  budget.release(60)
  t.ok(budget.admit(50))
  budget.release(50)
  budget.release(40)
  t.equal(budget.inflight, 0)
  t.ok(budget.admit(1000), 'alone, larger than the budget: admitted, or it would never be served')
  t.notOk(budget.admit(1), 'and while it runs, nothing else')
  budget.release(1000)
  budget.release(1000)
  t.equal(budget.inflight, 0, 'never below zero')
  t.ok(budget.admit(100) && !budget.admit(1), 'a release too many does not open the budget')
})

t.test('a call is charged its Content-Length, or the body limit without a usable one', async (t) => {
  t.equal(chargeOf('1234', 10_000), 1234)
  t.equal(chargeOf('0', 10_000), 0)
  t.equal(chargeOf('99999', 10_000), 10_000, 'never more than the body limit (fastify refuses it with 413 anyway)')
  for (const header of [undefined, '', 'abc', '-1', '1.5']) {
    t.equal(chargeOf(header, 10_000), 10_000, JSON.stringify(header))
  }
})

t.test(
  'the default budget is three quarters of the heap the process may grow to, less the memo of built objects',
  async (t) => {
    const threeQuarters = Math.floor((getHeapStatistics().heap_size_limit * 3) / 4)
    t.equal(defaultInflightBudget(0), threeQuarters)
    t.equal(defaultInflightBudget(36 * 1024 * 1024), threeQuarters - 36 * 1024 * 1024)
    t.equal(defaultInflightBudget(threeQuarters + 1), 0)
  }
)
