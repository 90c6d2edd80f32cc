import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import type { SyncResponse } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { FIXED_NOW } from '../../helpers/app.js'
import { timestamp } from '../../../src/k8s/time.js'
import { condition } from '../../helpers/conditions.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import { specOf } from '../../helpers/objects.js'
import { applyUpdate } from '../../../src/simulator/apply.js'
import { type JobFlowManifestSpec, jobOf, listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)

const NOW = timestamp(FIXED_NOW)

function jobsOf (response: SyncResponse): Map<string, KubeObject> {
  return childrenOf(response.children, 'Job')
}
function record (response: SyncResponse, name: string): JobRecord | undefined {
  return listOf<JobRecord>(response.status, 'jobs').find(j => j.name === name)
}

t.test('a new flow creates only the Jobs without dependencies', async t => {
  const response = respond(fixture('jobflow/sync-new.v2.json'), context())
  t.same([...jobsOf(response).keys()], ['jobflow-example-job1', 'jobflow-example-job4'])
  t.equal(response.status.phase, 'Pending')
  t.equal(response.status.jobsSucceeded, '0/5', 'the JOBS column: none of five yet')
  t.equal(response.status.startTime, NOW)
  t.notOk('completionTime' in response.status)
  t.same(
    record(response, 'job1'),
    { name: 'job1', jobName: 'jobflow-example-job1', phase: 'Pending', message: 'creating the Job' }
  )
  t.same(
    record(response, 'job3'),
    { name: 'job3', jobName: 'jobflow-example-job3', phase: 'Pending', message: 'waiting for job1, job2' }
  )
  t.same(
    listOf<JobRecord>(response.status, 'jobs').map(j => j.name),
    ['job1', 'job2', 'job3', 'job4', 'job5'],
    'records follow spec order'
  )
  t.match(condition(response.status, 'Valid'), { status: 'True', lastTransitionTime: NOW })
  t.notOk('resyncAfterSeconds' in response, 'nothing here depends on time')
})

t.test('a created Job carries the flow, the globals and Never', async t => {
  const response = respond(fixture('jobflow/sync-new.v2.json'), context())
  const job = jobsOf(response).get('jobflow-example-job1') as KubeObject
  t.same(job.metadata, {
    name: 'jobflow-example-job1',
    namespace: 'default',
    labels: { key1: 'value1', key2: 'value2', 'jobhooks.io/jobflow': 'jobflow-example', 'jobhooks.io/flow': 'job1' },
    annotations: { key1: 'value1', key2: 'value2' }
  })
  const pod = at(job, 'spec.template')
  t.same(
    pod.metadata.labels,
    { key1: 'value1', key2: 'value2', 'jobhooks.io/jobflow': 'jobflow-example', 'jobhooks.io/flow': 'job1' }
  )
  t.same(pod.metadata.annotations, { key1: 'value1', key2: 'value2' })
  t.equal(pod.spec.restartPolicy, 'Never')
  t.equal(pod.spec.nodeName, 'node-1')
  t.same(pod.spec.containers[0].env, [{ name: 'FOO', value: 'bar' }, { name: 'QUE', value: 'pasa' }])
  t.same(pod.spec.containers[0].command, ['sh', '-c', 'sleep 10s'])
  t.equal(at(job, 'spec.backoffLimit'), undefined, 'no backoffLimit is invented: the Job default applies')
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call', async t => {
  for (const name of ['sync-new', 'sync-job1-done']) {
    const v1 = JSON.stringify(respond(fixture(`jobflow/${name}.v1.json`), context()))
    const v2 = JSON.stringify(respond(fixture(`jobflow/${name}.v2.json`), context()))
    t.equal(v1, v2, name)
    t.equal(JSON.stringify(respond(fixture(`jobflow/${name}.v2.json`), context())), v2, `${name} again`)
  }
})

t.test('a succeeded dependency starts the next flow; existing Jobs are kept as observed', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const response = respond(request, context())
  const jobs = jobsOf(response)
  t.same([...jobs.keys()], ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'])
  const kept = jobs.get('jobflow-example-job1') as KubeObject
  const observed = request.children['Job.batch/v1']?.['default/jobflow-example-job1'] as KubeObject
  t.same(
    kept,
    { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: observed.metadata.name, namespace: 'default' } },
    'its identity: under OnDelete Metacontroller leaves it as it is'
  )
  t.equal(response.status.phase, 'Running')
  t.equal(response.status.jobsSucceeded, '1/5', 'job1 succeeded')
  t.equal(response.status.startTime, '2026-01-02T03:00:05Z', 'carried forward')
  t.same(
    record(response, 'job1'),
    {
      name: 'job1',
      jobName: 'jobflow-example-job1',
      phase: 'Succeeded',
      startTime: '2026-01-02T03:00:05Z',
      completionTime: '2026-01-02T03:00:17Z'
    }
  )
  t.same(
    record(response, 'job4'),
    { name: 'job4', jobName: 'jobflow-example-job4', phase: 'Running', startTime: '2026-01-02T03:00:05Z' }
  )
  t.equal(record(response, 'job2')?.message, 'creating the Job')
  t.equal(record(response, 'job5')?.message, 'waiting for job4, job2')
})

t.test('after a failure no new Job starts and the flow fails once nothing runs', async t => {
  const request = fixture('jobflow/sync-job2-failed.v2.json')
  const response = respond(request, context())
  t.same([...jobsOf(response).keys()], ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'])
  t.equal(response.status.phase, 'Running', 'job4 still runs')
  t.match(
    record(response, 'job2'),
    {
      phase: 'Failed',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
      completionTime: '2026-01-02T03:00:29Z'
    }
  )
  t.match(record(response, 'job3'), { phase: 'Skipped', message: 'not started: job2 failed' })
  t.match(record(response, 'job5'), { phase: 'Skipped' })
  t.notOk(condition(response.status, 'Failed'))

  // job4 finishes: nothing runs any more.
  const job4 = jobOf(request.children['Job.batch/v1']?.['default/jobflow-example-job4'])
  job4.status = {
    ...job4.status,
    active: 0,
    succeeded: 1,
    completionTime: '2026-01-02T03:01:00Z',
    conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:01:00Z' }]
  }
  request.parent.status = response.status
  const done = respond(request, context())
  t.equal(done.status.phase, 'Failed')
  t.equal(done.status.jobsSucceeded, '2/5', 'failed and skipped flows count in the total only')
  t.equal(done.status.completionTime, NOW)
  t.match(condition(done.status, 'Failed'), {
    status: 'True',
    reason: 'JobFailed',
    message: /job2: BackoffLimitExceeded/
  })
  t.same(
    [...jobsOf(done).keys()],
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'],
    'failed Jobs stay for their logs'
  )

  // Terminal is terminal: the same answer later, and a Job deleted afterwards is not re-run.
  request.parent.status = done.status
  delete request.children['Job.batch/v1']?.['default/jobflow-example-job2']
  const later = respond(request, context(new Date('2026-01-03T00:00:00Z')))
  t.equal(later.status.phase, 'Failed')
  t.equal(later.status.jobsSucceeded, '2/5', 'a deleted Job counts by its record')
  t.same(later.status.completionTime, NOW)
  t.same([...jobsOf(later).keys()], ['jobflow-example-job1', 'jobflow-example-job4'])
  t.same(later.status.jobs, done.status.jobs, 'the record of the deleted failed Job is kept')
})

t.test('a finished Job that disappears is remembered, not re-run', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const first = respond(request, context())
  request.parent.status = first.status
  delete request.children['Job.batch/v1']?.['default/jobflow-example-job1']
  const response = respond(request, context())
  t.notOk(jobsOf(response).has('jobflow-example-job1'), 'not recreated')
  t.match(record(response, 'job1'), { phase: 'Succeeded', completionTime: '2026-01-02T03:00:17Z' })
  t.ok(jobsOf(response).has('jobflow-example-job2'), 'its dependant still starts')
})

t.test('a Job we asked for that does not show yet is asked for again', async t => {
  const request = fixture('jobflow/sync-new.v2.json')
  const first = respond(request, context())
  request.parent.status = first.status
  const again = respond(request, context(new Date('2026-01-02T03:05:00Z')))
  t.same(again.children, first.children)
  t.equal(again.status.startTime, first.status.startTime)
})

t.test('a running Job deleted by hand is created again', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  delete request.children['Job.batch/v1']?.['default/jobflow-example-job4']
  const response = respond(request, context())
  const job4 = jobsOf(response).get('jobflow-example-job4')
  t.ok(job4, 'recreated from the spec')
  t.notOk(job4?.status)
  t.match(record(response, 'job4'), { phase: 'Pending', startTime: '2026-01-02T03:00:05Z' })
})

t.test('Succeeded: every flow succeeded, Complete condition, and later flows are skipped', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const spec = specOf<JobFlowManifestSpec>(request.parent)
  spec.flows = spec.flows.filter(f => f.name === 'job1' || f.name === 'job4')
  const job4 = jobOf(request.children['Job.batch/v1']?.['default/jobflow-example-job4'])
  job4.status.conditions = [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:00:40Z' }]
  const response = respond(request, context())
  t.equal(response.status.phase, 'Succeeded')
  t.equal(response.status.jobsSucceeded, '2/2')
  t.equal(response.status.completionTime, NOW)
  t.match(
    condition(response.status, 'Complete'),
    { status: 'True', reason: 'AllJobsSucceeded', message: '2 of 2 jobs succeeded' }
  )
  t.match(
    record(response, 'job4'),
    { phase: 'Succeeded', completionTime: '2026-01-02T03:00:40Z' },
    'from the condition when completionTime is missing'
  )

  request.parent.status = response.status
  spec.flows.push({ name: 'late', jobTemplate: spec.flows[0]!.jobTemplate })
  const later = respond(request, context())
  t.equal(later.status.phase, 'Succeeded')
  t.match(record(later, 'late'), { phase: 'Skipped', message: 'added after the JobFlow finished' })
  t.notOk(jobsOf(later).has('jobflow-example-late'))
})

t.test('a flow removed from a valid spec loses its Job and its record', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const spec = specOf<JobFlowManifestSpec>(request.parent)
  spec.flows = spec.flows.filter(f => f.name !== 'job4' && f.name !== 'job5')
  const response = respond(request, context())
  t.notOk(jobsOf(response).has('jobflow-example-job4'))
  t.notOk(listOf<JobRecord>(response.status, 'jobs').some(j => j.name === 'job4'))
})

t.test('retry: a failed Job with a retry left waits out its backoff, then its next attempt is a new Job; the failed ' +
  'one is kept', async t => {
  const request = fixture('jobflow/sync-job2-retry.v2.json')
  const waiting = respond(request, context(new Date('2026-01-02T03:00:40Z')))
  t.same(
    [...jobsOf(waiting).keys()],
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'],
    'no new Job during the backoff'
  )
  t.equal(waiting.resyncAfterSeconds, 19, 'woken when the backoff ends: failed at 03:00:29, 30 s')
  t.equal(waiting.status.phase, 'Running')
  const job2 = listOf<JobRecord>(waiting.status, 'jobs').filter(j => j.name === 'job2')
  t.same(job2, [
    {
      name: 'job2',
      jobName: 'jobflow-example-job2',
      phase: 'Failed',
      startTime: '2026-01-02T03:00:20Z',
      completionTime: '2026-01-02T03:00:29Z',
      message: 'BackoffLimitExceeded: Job has reached the specified backoff limit'
    },
    {
      name: 'job2',
      jobName: 'jobflow-example-job2-2',
      phase: 'Pending',
      message: 'retry 1 of 1 starts at 2026-01-02T03:00:59Z, after the backoff',
      attempt: 2
    }
  ])
  t.match(
    record(waiting, 'job3'),
    { phase: 'Pending', message: 'waiting for job2' },
    'its dependants wait instead of being skipped'
  )

  request.parent.status = waiting.status
  const retrying = respond(request, context())
  t.same(
    [...jobsOf(retrying).keys()],
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job2-2', 'jobflow-example-job4']
  )
  const job = jobsOf(retrying).get('jobflow-example-job2-2') as KubeObject
  t.same(job.metadata.labels?.['jobhooks.io/flow'], 'job2', 'the attempt carries its flow')
  t.match(
    listOf<JobRecord>(retrying.status, 'jobs').filter(j => j.name === 'job2').map(j => j.message),
    ['BackoffLimitExceeded: Job has reached the specified backoff limit', 'creating the Job (retry 1 of 1)']
  )
  t.equal(JSON.stringify(respond(request, context())), JSON.stringify(retrying), 'the same request, the same answer')
})

t.test('retry: a later attempt whose record was lost is found by its name and kept, not created again', async t => {
  const request = fixture('jobflow/sync-job2-retry.v2.json')
  const jobs = request.children['Job.batch/v1'] as Record<string, any>
  const failed = jobs['default/jobflow-example-job2']
  jobs['default/jobflow-example-job2-2'] = {
    ...structuredClone(failed),
    metadata: { ...structuredClone(failed.metadata), name: 'jobflow-example-job2-2', uid: 'attempt-2' },
    status: { active: 1, startTime: '2026-01-02T03:01:00Z' }
  }
  const response = respond(request, context())
  t.match(
    listOf<JobRecord>(response.status, 'jobs').filter(j => j.name === 'job2'),
    [{ phase: 'Failed' }, { jobName: 'jobflow-example-job2-2', phase: 'Running', attempt: 2 }]
  )
  t.notOk(jobsOf(response).has('jobflow-example-job2-3'))
})

t.test('rerun fixture: a failed JobFlow annotated jobhooks.io/rerun=1 runs job2 again as job2-2 (job3 and job5 wait ' +
  'for it), keeps job1 and job4, and records the rerun', async t => {
  const request = fixture('jobflow/sync-rerun.v2.json')
  const response = respond(request, context())
  t.same(
    [...jobsOf(response).keys()],
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job2-2', 'jobflow-example-job4']
  )
  t.equal(response.status.phase, 'Running')
  t.notOk('completionTime' in response.status, 'running again')
  t.same(response.status.rerun, { value: '1', time: NOW, message: 'rerunning job2, job3, job5' })
  t.match(
    listOf<JobRecord>(response.status, 'jobs').filter(j => j.name === 'job3'),
    [
      { phase: 'Skipped' },
      { jobName: 'jobflow-example-job3-2', phase: 'Pending', attempt: 2, rerun: '1', message: 'waiting for job2' }
    ]
  )
  t.match(condition(response.status, 'Failed'), { status: 'False', reason: 'Rerun' })
  request.parent.status = response.status
  const again = respond(request, context())
  t.same(again.status.rerun, response.status.rerun, 'the same value acts once')
  t.same([...jobsOf(again).keys()], [...jobsOf(response).keys()])
})

t.test('suspend fixture: spec.suspend answers the running job4 as last applied with spec.suspend and the mark, the ' +
  'finished job1 as last applied, and starts no job2', async t => {
  const request = fixture('jobflow/sync-suspend.v2.json')
  const response = respond(request, context())
  const jobs = jobsOf(response)
  t.same([...jobs.keys()], ['jobflow-example-job1', 'jobflow-example-job4'], 'job2 is due but not started')
  const applied = (name: string): any => JSON.parse(
    request.children['Job.batch/v1']![`default/${name}`]!
      .metadata.annotations!['metacontroller.k8s.io/last-applied-configuration']!
  )
  t.same(
    jobs.get('jobflow-example-job1'),
    applied('jobflow-example-job1'),
    'a finished Job: exactly as last applied, nothing to write'
  )
  const job4 = applied('jobflow-example-job4')
  t.same(
    jobs.get('jobflow-example-job4'),
    {
      ...job4,
      metadata: {
        ...job4.metadata,
        annotations: { ...job4.metadata.annotations, 'jobhooks.io/suspended-by-jobflow': 'true' }
      },
      spec: { ...job4.spec, suspend: true }
    }
  )
  t.match(
    record(response, 'job2'),
    { phase: 'Pending', message: 'not started: the JobFlow is suspended (creating the Job)' }
  )
  t.match(
    condition(response.status, 'Suspended'),
    { status: 'True', message: 'spec.suspend is true: no new Job starts; 1 running Job suspended' }
  )
})

t.test('suspend with a Kueue queue: the admitted Job stays as last applied with Kueue\'s suspend, Kueue\'s to ' +
  'suspend; the condition names it', async t => {
  const request = fixture('jobflow/sync-suspend-queued.v2.json')
  const response = respond(request, context())
  const observed = request.children['Job.batch/v1']!['default/jobflow-example-job4']!
  const applied = JSON.parse(observed.metadata.annotations!['metacontroller.k8s.io/last-applied-configuration']!)
  t.equal(applied.spec.suspend, true, 'created suspended, unsuspended since by Kueue')
  const answer = jobsOf(response).get('jobflow-example-job4')!
  t.same(answer, { ...applied, spec: { ...applied.spec, suspend: false } }, 'as last applied, suspend as observed')
  // Metacontroller's merge takes every scalar of the answer: the last-applied `true` would undo the admission.
  t.equal(specOf(applyUpdate(observed, answer)).suspend, false, 'Metacontroller leaves spec.suspend as Kueue set it')
  t.match(condition(response.status, 'Suspended'), {
    status: 'True',
    message: 'spec.suspend is true: no new Job starts; left as they are: jobflow-example-job4 (Kueue (queue team-a))'
  })
})

t.test('once the DAG failed, an exit step\'s Job is created and told so (sync-exit-after-failure)', async t => {
  const response = respond(fixture('jobflow/sync-exit-after-failure.v2.json'), context())
  const notify = jobsOf(response).get('jobflow-example-notify')
  t.ok(notify, 'the exit step starts in the sync that sees the DAG end')
  type Containers = Array<{ env?: Array<{ name: string }> }>
  const pod = (notify?.spec as { template: { spec: { containers: Containers } } }).template.spec
  const env = pod.containers[0]?.env ?? []
  t.match(env.filter(e => e.name.startsWith('JOBHOOKS_FLOW_')), [
    { name: 'JOBHOOKS_FLOW_PHASE', value: 'Failed' },
    { name: 'JOBHOOKS_FLOW_FAILURES', value: /^\[\{"name":"job2","message":"BackoffLimitExceeded: / }
  ])
  t.match(record(response, 'notify'), { phase: 'Pending', message: 'creating the Job' })
  t.equal(response.status.phase, 'Running', 'the flow runs on while its exit step does')
})
