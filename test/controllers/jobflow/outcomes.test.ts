// Kubernetes decides a step's outcome: its verdict (SuccessCriteriaMet / FailureTarget, before
// Complete / Failed) counts, a failure by the Job's own podFailurePolicy is final (no retry), and
// the Job policies that decide it reach the Job untouched.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import type { SyncRequest, SyncResponse } from '../../../src/protocol/hooks.js'
import type { Condition, KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import { listOf } from '../../helpers/records.js'
import { statusOf } from '../../helpers/objects.js'
import { JOB_POLICIES, policiesAsWritten, policiesOf } from '../../helpers/job-policies.js'

const respond = responseOf(syncJobFlow)
const JOBS = 'Job.batch/v1'
const FINAL = " (final: the Job's podFailurePolicy marked it; no retry)"

function jobNames (response: SyncResponse): string[] {
  return [...childrenOf(response.children, 'Job').keys()]
}
function records (response: SyncResponse, name: string): JobRecord[] {
  return listOf<JobRecord>(response.status, 'jobs').filter(j => j.name === name)
}

t.test('SuccessCriteriaMet without Complete: the step succeeded and its dependant starts', async t => {
  const request = fixture('jobflow/sync-job1-criteria-met.v2.json')
  const job1 = request.children[JOBS]?.['default/jobflow-example-job1'] as KubeObject
  t.same(at(job1, 'status.conditions').map((c: any) => c.type), ['SuccessCriteriaMet'], 'the fixture: no Complete')
  t.equal(at(job1, 'status.terminating'), 2, 'its other pods still terminate')
  const response = respond(request, context())
  t.same(jobNames(response), ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'])
  t.same(records(response, 'job1'), [{
    name: 'job1',
    jobName: 'jobflow-example-job1',
    phase: 'Succeeded',
    startTime: '2026-01-02T03:00:05Z',
    completionTime: '2026-01-02T03:00:17Z'
  }], 'finished when SuccessCriteriaMet turned True')
  t.same(records(response, 'job2').map(r => [r.phase, r.message]), [['Pending', 'creating the Job']])
  t.equal(response.status.jobsSucceeded, '1/5')

  request.parent.status = response.status
  job1.status = {
    ...(job1.status as object),
    terminating: 0,
    completionTime: '2026-01-02T03:00:48Z',
    conditions: [...at(job1, 'status.conditions'), { ...at(job1, 'status.conditions')[0], type: 'Complete' }]
  }
  t.same(
    records(respond(request, context()), 'job1'),
    records(response, 'job1'),
    'Complete later changes nothing: the remembered finish time stays'
  )
})

t.test('FailureTarget without Failed: the step failed, the same answer as with Failed', async t => {
  const request = fixture('jobflow/sync-job2-failure-target.v2.json')
  const job2 = request.children[JOBS]?.['default/jobflow-example-job2'] as KubeObject
  t.same(at(job2, 'status.conditions').map((c: any) => c.type), ['FailureTarget'], 'the fixture: no Failed')
  const response = respond(request, context())
  t.match(records(response, 'job2'), [{
    phase: 'Failed',
    completionTime: '2026-01-02T03:00:29Z',
    message: 'BackoffLimitExceeded: Job has reached the specified backoff limit'
  }])
  t.match(records(response, 'job3'), [{ phase: 'Skipped' }])
  t.equal(
    JSON.stringify(response),
    JSON.stringify(respond(fixture('jobflow/sync-job2-failed.v2.json'), context())),
    'byte-identical to the answer for the same Job with Failed'
  )
})

t.test('a failure by the podFailurePolicy with retry set: no new attempt, and the record says why', async t => {
  const request = fixture('jobflow/sync-job2-pod-failure-policy.v2.json')
  t.match(request.parent.spec, { flows: [{}, { name: 'job2', retry: { limit: 1, backoffSeconds: 30 } }] })
  const response = respond(request, context())
  t.same(jobNames(response), ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'], 'no job2-2')
  t.same(records(response, 'job2'), [{
    name: 'job2',
    jobName: 'jobflow-example-job2',
    phase: 'Failed',
    startTime: '2026-01-02T03:00:20Z',
    completionTime: '2026-01-02T03:00:29Z',
    message: 'PodFailurePolicy: Container nginx for pod default/jobflow-example-job2-8xk2p failed with exit code ' +
      '42 matching FailJob rule at index 0' + FINAL
  }])
  t.same(records(response, 'job3').map(r => r.phase), ['Skipped'], 'FailFast: its dependants never start')
  t.notOk('resyncAfterSeconds' in response, 'no retry to wake for')

  // Later: the status recorded it, the backoff would long be over, and then the Job is gone.
  request.parent.status = response.status
  const later = respond(request, context(new Date('2026-01-02T04:00:00Z')))
  t.same(jobNames(later), jobNames(response), 'still no retry once the backoff would have passed')
  delete request.children[JOBS]?.['default/jobflow-example-job2']
  const gone = respond(request, context(new Date('2026-01-02T04:00:00Z')))
  t.same(records(gone, 'job2'), records(response, 'job2'), 'the record alone keeps the failure final')
  t.notOk(jobNames(gone).includes('jobflow-example-job2-2'))
})

t.test('a failure by the podFailurePolicy at FailureTarget is final too', async t => {
  const request = fixture('jobflow/sync-job2-pod-failure-policy.v2.json')
  const status = statusOf<{ conditions: Condition[] }>(request.children[JOBS]?.['default/jobflow-example-job2'])
  status.conditions = status.conditions.filter(c => c.type === 'FailureTarget')
  const response = respond(request, context())
  t.notOk(jobNames(response).includes('jobflow-example-job2-2'))
  t.match(records(response, 'job2'), [{ phase: 'Failed', message: /^PodFailurePolicy: .*no retry\)$/ }])
})

t.test('a rerun after a final failure runs the step again: the user asked for it', async t => {
  const request = fixture('jobflow/sync-job2-pod-failure-policy.v2.json')
  const job4 = request.children[JOBS]?.['default/jobflow-example-job4'] as KubeObject
  job4.status = { completionTime: '2026-01-02T03:01:00Z', conditions: [{ type: 'Complete', status: 'True' }] }
  const failed = respond(request, context()).status
  t.equal(failed.phase, 'Failed')
  request.parent.status = failed
  request.parent.metadata.annotations = { 'jobhooks.io/rerun': '1' }
  const response = respond(request, context())
  t.match(records(response, 'job2'), [{ phase: 'Failed' }, { jobName: 'jobflow-example-job2-2', rerun: '1' }])
})

function builtJob (request: SyncRequest, name: string): KubeObject | undefined {
  return childrenOf(respond(request, context()).children, 'Job').get(name)
}

t.test('the Job policies pass through a template, a JobTemplate and a patch untouched', async t => {
  const inline = fixture<any>('jobflow/sync-new.v2.json')
  Object.assign(inline.parent.spec.flows[0].jobTemplate, structuredClone(JOB_POLICIES))
  t.same(policiesOf(builtJob(inline, 'jobflow-example-job1')), policiesAsWritten(), 'jobTemplate')

  const referenced = fixture<any>('jobflow/sync-template-ref.v2.json')
  const template = referenced.related['JobTemplate.jobhooks.io/v1alpha1']['default/builder']
  Object.assign(template.spec.jobTemplate, structuredClone(JOB_POLICIES))
  t.same(policiesOf(builtJob(referenced, 'release-build')), policiesAsWritten(), 'jobTemplateRef')

  referenced.parent.spec.flows[0].patch = { backoffLimit: 5, template: { spec: { nodeSelector: { pool: 'a' } } } }
  t.same(policiesOf(builtJob(referenced, 'release-build')), policiesAsWritten(), 'jobTemplateRef, patched elsewhere')

  const patched = fixture<any>('jobflow/sync-template-ref.v2.json')
  patched.parent.spec.flows[0].patch = structuredClone(JOB_POLICIES)
  t.same(policiesOf(builtJob(patched, 'release-build')), policiesAsWritten(), 'set by flows[].patch')
})

t.test('an Indexed Job is one step: its outcome is its conditions\', not its indexes\'', async t => {
  const request = fixture<any>('jobflow/sync-job1-criteria-met.v2.json')
  const job1 = request.children[JOBS]['default/jobflow-example-job1']
  job1.status = { ...job1.status, failedIndexes: '1', failed: 1, conditions: [] }
  const running = respond(request, context())
  t.match(records(running, 'job1'), [{ phase: 'Running' }], 'a failed index and a succeeded one: still running')
  t.notOk(jobNames(running).includes('jobflow-example-job2'))
})
