// A `when` that passes its cost limit while running fails its flow, with the reason, and is not
// retried (a retry would create the Job without the when holding). Outputs are cut to 1 KiB when
// observed, so only a record from elsewhere (a status edited by hand) can weigh this much.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { WHEN_OVER_LIMIT } from '../../../src/controllers/jobflow/flows.js'
import { responseOf } from '../../helpers/hooks.js'
import { childrenOf, context, fixture } from '../../helpers/fixtures.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import { listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)

t.test('over its cost limit at run time: the flow is Failed with the reason, and no Job starts', async t => {
  const request = fixture('jobflow/sync-job1-criteria-met.v2.json')
  const template = { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } }
  request.parent.spec = {
    flows: [
      { name: 'a', jobTemplate: template },
      { name: 'b', dependencies: ['a'], when: 'size(flows.a.output) > 0', retry: { limit: 2 }, jobTemplate: template }
    ]
  }
  const name = request.parent.metadata.name
  const huge = 'x'.repeat(1_000_000)
  request.parent.status = { jobs: [{ name: 'a', jobName: `${name}-a`, phase: 'Succeeded', output: huge }] }
  request.children = {}
  const response = respond(request, context())
  const b = listOf<JobRecord>(response.status, 'jobs').filter(r => r.name === 'b')
  t.same(b.map(r => [r.phase, r.message]), [[
    'Failed',
    `${WHEN_OVER_LIMIT} (it passed its cost limit of 200,000 units): size(flows.a.output) > 0`
  ]])
  t.same([...childrenOf(response.children, 'Job').keys()], [], 'no Job for b')

  request.parent.status = response.status
  const again = respond(request, context())
  t.same(
    listOf<JobRecord>(again.status, 'jobs').filter(r => r.name === 'b').map(r => r.phase),
    ['Failed'],
    'not retried: its retry policy is for its Job failing'
  )
  t.same([...childrenOf(again.children, 'Job').keys()], [])
})
