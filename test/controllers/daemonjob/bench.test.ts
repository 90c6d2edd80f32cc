// The benchmark's DaemonJob request is one the hook answers correctly, and `verify` notices a
// wrong answer.
import t from 'tap'
import { daemonJobFixture, daemonJobRequestBody, verify } from '../../../bench/daemonjob.js'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { context } from '../../helpers/fixtures.js'

const respond = responseOf(syncDaemonJob)

for (const size of [1, 10, 100, 1000]) {
  t.test(`${size} nodes`, async t => {
    const fixture = daemonJobFixture(size)
    const response = respond(structuredClone(fixture.request), context(fixture.now))
    t.doesNotThrow(() => fixture.verify(response), 'the hook answers as expected')
    t.equal(daemonJobRequestBody(size).body, JSON.stringify(fixture.request), 'deterministic')
    if (size >= 100) {
      t.ok(
        fixture.expected.toCreate.length > 0 && fixture.expected.failed > 0 && fixture.expected.observedJobs > 0,
        'every kind of node is there'
      )
      const wrong = { ...response, children: response.children.slice(1) }
      t.throws(() => verify(wrong, fixture), /is missing|Jobs, expected/)
    }
  })
}
