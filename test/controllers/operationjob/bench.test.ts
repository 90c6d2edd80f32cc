import t from 'tap'
import { operationJobFixture } from '../../../bench/operationjob.js'
import { syncOperationJob } from '../../../src/controllers/operationjob/sync.js'
import { context } from '../../helpers/fixtures.js'

t.test('the bench fixture for 5,000 targets is answered as it expects, quickly and deterministically', async t => {
  const fixture = operationJobFixture(5000)
  const started = performance.now()
  const answer = syncOperationJob(fixture.request, context(fixture.now))
  const ms = performance.now() - started
  t.doesNotThrow(() => fixture.verify(answer.response))
  t.equal(answer.effects.length, 10, 'ten containers to inject')
  t.ok(ms < 2000, `answered in ${ms.toFixed(0)} ms`)
  t.equal(
    JSON.stringify(syncOperationJob(operationJobFixture(5000).request, context(fixture.now))),
    JSON.stringify(answer)
  )
  t.throws(() => fixture.verify({ status: {}, children: [] }))
})
