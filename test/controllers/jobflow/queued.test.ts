// A step whose Job waits for Kueue shows as Queued: first while it waits for admission, then again
// after a preemption, which is never a failure and uses no retry. Kueue's `spec.suspend` is its own.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { readRecords, type JobRecord } from '../../../src/controllers/jobflow/records.js'
import { responseOf } from '../../helpers/hooks.js'
import type { SyncRequest, SyncResponse } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)
const JOBS = 'Job.batch/v1'
const JOB4 = 'default/jobflow-example-job4'

function record (response: SyncResponse, name: string): JobRecord[] {
  return listOf<JobRecord>(response.status, 'jobs').filter(j => j.name === name)
}
function job4Of (request: SyncRequest): KubeObject {
  return request.children[JOBS]?.[JOB4] as KubeObject
}
/** What Kueue does on admission: unsuspends the Job, and the Job controller starts its pod. */
function admitted (request: SyncRequest, at: string): SyncRequest {
  const job = job4Of(request)
  job.spec = { ...(job.spec as object), suspend: false }
  job.status = {
    startTime: at,
    active: 1,
    conditions: [
      { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed', lastTransitionTime: at }
    ]
  }
  return request
}

t.test('a Job waiting for admission: Queued, the queue named, not started, counted', async t => {
  const request = fixture('jobflow/sync-queued.v2.json')
  t.equal(at(job4Of(request), 'spec.suspend'), true, 'the fixture: Kueue holds job4')
  const response = respond(request, context())
  t.same(record(response, 'job4'), [{
    name: 'job4',
    jobName: 'jobflow-example-job4',
    phase: 'Queued',
    message: 'waiting in queue team-a for Kueue to admit it'
  }], 'no startTime: its pods have not run')
  t.equal(response.status.jobsQueued, 1, 'the QUEUED column')
  t.equal(response.status.phase, 'Running', 'job1 ran: the flow is under way')
  const answered = childrenOf(response.children, 'Job').get('jobflow-example-job4')
  t.equal(at(answered, 'spec.suspend'), true, 'answered as we created it: suspended until Kueue says otherwise')
  t.equal(at(childrenOf(response.children, 'Job').get('jobflow-example-job2'), 'spec.suspend'), true,
    'the next step is created suspended too')
})

t.test('a flow whose only started steps wait in the queue is Pending, and not finished', async t => {
  const request = fixture('jobflow/sync-queued.v2.json')
  delete request.children[JOBS]?.['default/jobflow-example-job1']
  const status = request.parent.status as { jobs: JobRecord[] }
  status.jobs[0] = { name: 'job1', jobName: 'jobflow-example-job1', phase: 'Pending', message: 'creating the Job' }
  const job1 = structuredClone(job4Of(request))
  const labels = { ...job1.metadata.labels, 'jobhooks.io/flow': 'job1' }
  job1.metadata = { ...job1.metadata, name: 'jobflow-example-job1', labels }
  request.children[JOBS]!['default/jobflow-example-job1'] = job1
  const response = respond(request, context())
  t.equal(response.status.phase, 'Pending', 'nothing has run yet')
  t.equal(response.status.jobsQueued, 2)
  t.notOk(response.status.completionTime)
})

t.test('preempted: Queued again with the reason, its first start kept, no retry, no new Job', async t => {
  const request = fixture('jobflow/sync-preempted.v2.json')
  const response = respond(request, context())
  t.same(record(response, 'job4'), [{
    name: 'job4',
    jobName: 'jobflow-example-job4',
    phase: 'Queued',
    startTime: '2026-01-02T03:00:07Z',
    message: 'preempted by Kueue: back in queue team-a, waiting to be admitted again (no retry used)'
  }])
  t.notOk(childrenOf(response.children, 'Job').has('jobflow-example-job4-2'), 'no second attempt')
  t.equal(response.status.jobsQueued, 1)
  t.equal(at(childrenOf(response.children, 'Job').get('jobflow-example-job4'), 'spec.suspend'), true,
    'the Job is answered as applied: we never unsuspend it')

  t.test('the preemption is remembered while it waits, then the step runs again', async t => {
    const again = fixture('jobflow/sync-preempted.v2.json')
    again.parent.status = response.status
    const waiting = respond(again, context())
    t.match(record(waiting, 'job4')[0]?.message, /^preempted by Kueue/, 'still the preemption, not a first wait')
    const readmitted = respond(admitted(structuredClone(again), '2026-01-02T03:00:30Z'), context())
    t.same(record(readmitted, 'job4').map(r => [r.phase, r.startTime, r.message]),
      [['Running', '2026-01-02T03:00:07Z', undefined]])
    t.notOk('jobsQueued' in readmitted.status, 'no queued count once none waits')
  })
})

t.test('an old status with a Queued record reads back, and a record of an unknown phase is dropped', async t => {
  const memory = readRecords({
    jobs: [
      { name: 'a', jobName: 'f-a', phase: 'Queued', message: 'waiting in queue q for Kueue to admit it' },
      { name: 'b', jobName: 'f-b', phase: 'Waiting' }
    ]
  }, 'f')
  t.same([...memory.keys()], ['a'])
  t.equal(memory.get('a')?.[0]?.phase, 'Queued')
})

t.test('a suspended Job without a queue is not queued: the JobFlow suspended it', async t => {
  const request = fixture('jobflow/sync-queued.v2.json')
  const job4 = job4Of(request)
  delete job4.metadata.labels?.['kueue.x-k8s.io/queue-name']
  const response = respond(request, context())
  t.same(record(response, 'job4').map(r => [r.phase, r.message]), [['Running', 'the Job is suspended']])
  t.notOk('jobsQueued' in response.status, 'no queued count: none waits')
})

t.test('a Job whose spec.managedBy names another controller is never shown as queued by us', async t => {
  const request = fixture('jobflow/sync-queued.v2.json')
  const job4 = job4Of(request)
  job4.spec = { ...(job4.spec as object), managedBy: 'kueue.x-k8s.io/multikueue' }
  const response = respond(request, context())
  t.equal(record(response, 'job4')[0]?.phase, 'Running', 'its status is the other cluster\'s to tell')
})

t.test('an invalid spec answers an admitted queued Job with the suspend Kueue gave it', async t => {
  const request = fixture('jobflow/sync-suspend-queued.v2.json')
  delete (request.parent.spec as { suspend?: boolean }).suspend
  at(request.parent, 'spec.flows')[0].dependencies = ['job3']
  const job4 = job4Of(request)
  t.equal(at(job4, 'spec.suspend'), false, 'the fixture: Kueue admitted job4')
  t.match(job4.metadata.annotations?.['metacontroller.k8s.io/last-applied-configuration'], /"suspend":true/)
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  t.equal(at(childrenOf(response.children, 'Job').get('jobflow-example-job4'), 'spec.suspend'), false,
    'Metacontroller\'s merge takes every value of the answer: true would suspend it again')
})
