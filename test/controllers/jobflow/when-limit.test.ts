// A `when` that passes its cost limit while running fails its flow, with the reason, and is not
// retried (a retry would create the Job without the when holding). Outputs are cut to 1 KiB when
// observed, so only a record from elsewhere (a status edited by hand) can weigh this much.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { WHEN_DEFERRED, WHEN_OVER_LIMIT } from '../../../src/controllers/jobflow/when-decide.js'
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

t.test('the whens of one sync share a budget: those it has no room for wait for the next sync', async t => {
  const request = fixture('jobflow/sync-job1-criteria-met.v2.json')
  const template = { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } }
  const hundred = `[${Array(100).fill('1').join(',')}]`
  // Estimated 171,106, so each is read; each costs 151,106 when run: two fit in a sync's 400,000.
  const costly = `${hundred}.exists(x, ${hundred}.exists(y, x + y == 5))`
  const branches = ['b', 'c', 'd', 'e'].map(name => ({
    name, dependencies: ['a'], when: costly, jobTemplate: template
  }))
  request.parent.spec = { flows: [{ name: 'a', jobTemplate: template }, ...branches] }
  const name = request.parent.metadata.name
  request.parent.status = { jobs: [{ name: 'a', jobName: `${name}-a`, phase: 'Succeeded', output: '' }] }
  request.children = {}
  const phases = (response: ReturnType<typeof respond>): Array<[string, string | undefined]> =>
    listOf<JobRecord>(response.status, 'jobs').filter(r => r.name !== 'a').map(r => [r.phase, r.message])
  const first = respond(request, context())
  t.same(phases(first).map(([phase]) => phase), ['Skipped', 'Skipped', 'Pending', 'Pending'])
  t.same(phases(first)[2], ['Pending', WHEN_DEFERRED])
  t.equal(first.resyncAfterSeconds, 1, 'the next sync comes at once')
  request.parent.status = first.status
  const second = respond(request, context())
  t.same(phases(second).map(([phase]) => phase), ['Skipped', 'Skipped', 'Skipped', 'Skipped'])
})
