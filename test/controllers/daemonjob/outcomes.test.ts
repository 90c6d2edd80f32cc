// Kubernetes decides each node's outcome: its Job's verdict (SuccessCriteriaMet / FailureTarget,
// before Complete / Failed) counts, and the Job policies that decide it reach every Job untouched.
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { jobLikeSpecOf } from '../../helpers/records.js'
import { JOB_POLICIES, policiesAsWritten, policiesOf } from '../../helpers/job-policies.js'

const respond = responseOf(syncDaemonJob)
const JOBS = 'Job.batch/v1'

t.test('SuccessCriteriaMet and FailureTarget alone: the same answer as with Complete and Failed', async t => {
  const request = fixture('daemonjob/sync-verdicts.v2.json')
  const types = (name: string): string[] =>
    at(request.children[JOBS]?.[`default/${name}`], 'status.conditions').map((c: { type: string }) => c.type)
  t.same(types('daemonjob-example-node-3'), ['SuccessCriteriaMet'], 'the fixture: no Complete')
  t.same(types('daemonjob-example-node-6'), ['FailureTarget'], 'the fixture: no Failed')
  const response = respond(request, context())
  t.match(response.status, {
    phase: 'Failed',
    succeeded: 1,
    failed: 1,
    active: 0,
    succeededNodes: ['node-3'],
    failedNodes: [{ name: 'node-6', message: /^BackoffLimitExceeded: /, completionTime: '2026-01-02T03:02:10Z' }]
  })
  t.equal(
    JSON.stringify(response),
    JSON.stringify(respond(fixture('daemonjob/sync-finished.v2.json'), context())),
    'byte-identical to the answer for the same Jobs with Complete and Failed'
  )
})

t.test('a node\'s failure by its podFailurePolicy says so', async t => {
  const request = fixture('daemonjob/sync-verdicts.v2.json')
  const failed = at(request.children[JOBS]?.['default/daemonjob-example-node-6'], 'status.conditions.0')
  Object.assign(failed, { reason: 'PodFailurePolicy', message: 'Container nginx ... matching FailJob rule at index 0' })
  t.match(respond(request, context()).status, {
    failedNodes: [{ name: 'node-6', message: 'PodFailurePolicy: Container nginx ... matching FailJob rule at index 0' }]
  })
})

t.test('the Job policies inline under spec reach every Job byte for byte', async t => {
  const request = fixture('daemonjob/sync-new.v2.json')
  Object.assign(jobLikeSpecOf(request.parent), structuredClone(JOB_POLICIES))
  const job = childrenOf(respond(request, context()).children, 'Job').get('daemonjob-example-node-3')
  t.same(policiesOf(job), policiesAsWritten())
})
