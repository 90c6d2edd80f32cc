// The JobFlow-against-echo bench checks the hook's answer before it times anything: that check
// passes on the hook's real answer for each size the bench uses (records grouped into
// status.jobGroups included), and notices an answer that drops records or Jobs.
import t from 'tap'
import { checkHookAnswer } from '../../bench/jobflow-echo.js'
import { jobFlowFixture } from '../../bench/fixtures.js'
import { syncJobFlow } from '../../src/controllers/jobflow/sync.js'
import type { KubeObject } from '../../src/k8s/types.js'
import type { SyncRequest } from '../../src/protocol/hooks.js'
import { context } from '../helpers/fixtures.js'

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

for (const size of [10, 100, 1000]) {
  t.test(`${size} Jobs: the hook's answer passes the bench's check`, async t => {
    const fixture = jobFlowFixture(size)
    const request = fixture.request as unknown as SyncRequest
    const observed = Object.values(request.children['Job.batch/v1'] ?? {}).map(j => (j as KubeObject).metadata.name)
    const answer = wire(syncJobFlow(request, context(fixture.now)).response)
    t.doesNotThrow(() => checkHookAnswer(answer, fixture.expected, observed))
    if (size === 1000) t.ok(Array.isArray(answer.status.jobGroups), 'records grouped, as the hook writes them')

    const jobs = answer.status.jobs as unknown[]
    const fewer = { ...answer, status: { ...answer.status, jobs: jobs.slice(1) } }
    t.throws(() => checkHookAnswer(fewer, fixture.expected, observed), /records, want/)
    if (size === 1000) {
      const ungrouped = { ...answer, status: { ...answer.status, jobGroups: [] } }
      t.throws(() => checkHookAnswer(ungrouped, fixture.expected, observed), /records, want/, 'the groups count')
    }
    const dropped = { ...answer, children: answer.children.slice(1) }
    t.throws(() => checkHookAnswer(dropped, fixture.expected, observed), /would delete|creates/)
  })
}
