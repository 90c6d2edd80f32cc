// Kueue's queue: JobFlow and DaemonJob put every Job they create in the queue their spec names
// (labels, created suspended so no pod starts before admission); without a queue nothing changes.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { responseOf } from '../../helpers/hooks.js'
import { specOf } from '../../helpers/objects.js'

const QUEUE = 'kueue.x-k8s.io/queue-name'
const PRIORITY = 'kueue.x-k8s.io/priority-class'

function jobsOf (sync: typeof syncJobFlow, request: SyncRequest): KubeObject[] {
  return [...childrenOf(responseOf(sync)(request, context()).children, 'Job').values()]
}

function withSpec (path: string, change: (spec: Record<string, unknown>) => void): SyncRequest {
  const request = fixture(path)
  change(specOf(request.parent))
  return request
}

t.test('JobFlow: spec.queueName labels every new Job, created suspended; a flow may name its own queue', async t => {
  const plain = jobsOf(syncJobFlow, fixture('jobflow/sync-new.v2.json'))
  t.ok(plain.length > 0)
  t.ok(plain.every(job => job.metadata.labels?.[QUEUE] === undefined && specOf(job).suspend === undefined),
    'no queue: no label, no suspend')
  const queued = jobsOf(syncJobFlow, withSpec('jobflow/sync-new.v2.json', spec => {
    spec.queueName = 'team-a'
    spec.priorityClassName = 'batch-low'
    const flows = spec.flows as Array<Record<string, unknown>>
    flows[0] = { ...flows[0], queueName: 'urgent' }
  }))
  t.same(queued.map(job => [job.metadata.name, job.metadata.labels?.[QUEUE], job.metadata.labels?.[PRIORITY],
    specOf(job).suspend]), plain.map((job, i) => [job.metadata.name, i === 0 ? 'urgent' : 'team-a', 'batch-low', true]))
})

t.test('JobFlow: a queue name that is not a label value makes the spec invalid and creates nothing', async t => {
  const request = withSpec('jobflow/sync-new.v2.json', spec => { spec.queueName = 'not a label' })
  const response = responseOf(syncJobFlow)(request, context())
  t.equal(response.status.phase, 'Invalid')
  t.match(JSON.stringify(response.status), /spec\.queueName must be a label value/)
  t.same(childrenOf(response.children, 'Job').size, 0)
})

t.test('DaemonJob: spec.queueName labels every node\'s Job, created suspended; the field stays out of the ' +
  'JobSpec', async t => {
  const plain = jobsOf(syncDaemonJob, fixture('daemonjob/sync-new.v2.json'))
  const queued = jobsOf(syncDaemonJob, withSpec('daemonjob/sync-new.v2.json', spec => {
    spec.queueName = 'nodes'
    spec.priorityClassName = 'batch-high'
  }))
  t.ok(plain.length > 0)
  t.equal(queued.length, plain.length)
  for (const job of queued) {
    t.equal(job.metadata.labels?.[QUEUE], 'nodes')
    t.equal(job.metadata.labels?.[PRIORITY], 'batch-high')
    t.equal(specOf(job).suspend, true)
    t.notOk('queueName' in specOf(job) || 'priorityClassName' in specOf(job), 'not JobSpec fields')
  }
  t.ok(plain.every(job => job.metadata.labels?.[QUEUE] === undefined && specOf(job).suspend === undefined))
})
