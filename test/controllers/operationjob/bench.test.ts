// Its speed is measured by `npm run bench`, never asserted here.
import t from 'tap'
import { operationJobFixture } from '../../../bench/operationjob.js'
import { syncOperationJob } from '../../../src/controllers/operationjob/sync.js'
import { context } from '../../helpers/fixtures.js'

t.test('the bench fixture for 5,000 targets is answered as it expects, and deterministically', async t => {
  const fixture = operationJobFixture(5000)
  const answer = syncOperationJob(fixture.request, context(fixture.now))
  t.doesNotThrow(() => fixture.verify(answer.response))
  t.equal(answer.effects.length, 10, 'ten containers to inject')
  t.equal(
    JSON.stringify(syncOperationJob(operationJobFixture(5000).request, context(fixture.now))),
    JSON.stringify(answer)
  )
  t.throws(() => fixture.verify({ status: {}, children: [] }))
})
