// A DaemonJob's Job that waits for Kueue is counted as queued: not active, not finished, and the
// DaemonJob does not finish while one waits.
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'

const respond = responseOf(syncDaemonJob)
const JOBS = 'Job.batch/v1'

t.test('a queued Job counts as queued, the new one is created suspended with the queue', async t => {
  const request = fixture('daemonjob/sync-queued.v2.json')
  const response = respond(request, context())
  t.match(response.status, { phase: 'Running', desired: 2, active: 1, queued: 1, succeeded: 0, failed: 0 },
    'node-3 waits for Kueue; node-6\'s Job is being created')
  const created = childrenOf(response.children, 'Job').get('daemonjob-example-node-6')
  t.equal(at(created, 'spec.suspend'), true)
  t.equal(at(created, 'metadata.labels')['kueue.x-k8s.io/queue-name'], 'team-a')
})

t.test('a DaemonJob does not finish while a Job waits in the queue', async t => {
  const request = fixture('daemonjob/sync-queued.v2.json')
  delete request.related['Node.v1']?.['node-6']
  const response = respond(request, context())
  t.match(response.status, { phase: 'Running', desired: 1, active: 0, queued: 1 })
  t.notOk(response.status.completionTime, 'not finished')

  t.test('once Kueue admits it and it succeeds, the DaemonJob does', async t => {
    const done = structuredClone(request)
    const job = done.children[JOBS]?.['default/daemonjob-example-node-3'] as KubeObject
    job.spec = { ...(job.spec as object), suspend: false }
    job.status = {
      succeeded: 1,
      conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:00:20Z' }]
    }
    const { status } = respond(done, context())
    t.match(status, { phase: 'Succeeded', active: 0, succeeded: 1 })
    t.notOk('queued' in status, 'no queued count once none waits')
  })
})
