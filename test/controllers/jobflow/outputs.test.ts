// A step's output is its succeeded pod's termination message: remembered in its record (law 6),
// handed to dependants as JOBHOOKS_OUTPUT_<FLOW>, and read by `when`.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import {
  cutOutput, OUTPUT_MAX_BYTES, OUTPUT_SHOWN_BYTES, outputEnvName, shownOutputs
} from '../../../src/controllers/jobflow/outputs.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import { responseOf } from '../../helpers/hooks.js'
import type { SyncRequest, SyncResponse } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { at, childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { listOf } from '../../helpers/records.js'
import { containerEnvironment } from '../../../src/k8s/expansion.js'

const respond = responseOf(syncJobFlow)
const POD1 = 'default/jobflow-example-job1-11111'
const JOB1 = 'default/jobflow-example-job1'

function record (response: SyncResponse, name: string): JobRecord | undefined {
  return listOf<JobRecord>(response.status, 'jobs').find(j => j.name === name)
}
function envOf (response: SyncResponse, job: string): Array<{ name: string, value?: string }> | undefined {
  return at(childrenOf(response.children, 'Job').get(job), 'spec.template.spec.containers.0.env')
}
function pod1 (request: SyncRequest): KubeObject {
  return request.related['Pod.v1']?.[POD1] as KubeObject
}
function withMessage (request: SyncRequest, message: string | undefined): SyncRequest {
  const terminated = at(pod1(request), 'status.containerStatuses.0.state.terminated')
  if (message === undefined) delete terminated.message
  else terminated.message = message
  return request
}

t.test('the succeeded pod\'s termination message is the output: recorded, and in the dependant\'s env', async t => {
  const response = respond(fixture('jobflow/sync-outputs.v2.json'), context())
  t.equal(record(response, 'job1')?.output, 'v1.2.3')
  t.same(envOf(response, 'jobflow-example-job2')?.slice(-1), [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: 'v1.2.3' }],
    'for Kubernetes\' own $(JOBHOOKS_OUTPUT_JOB1) expansion')
  t.notOk(record(response, 'job4')?.output, 'a running step has no output')
})

t.test('the output outlives the Job and its pod (law 6), and is not taken again', async t => {
  const first = respond(fixture('jobflow/sync-outputs.v2.json'), context())
  const request = fixture('jobflow/sync-outputs.v2.json')
  request.parent.status = first.status
  delete request.children['Job.batch/v1']?.[JOB1]
  request.related['Pod.v1'] = {}
  const later = respond(request, context())
  t.equal(record(later, 'job1')?.output, 'v1.2.3')
  t.equal(record(later, 'job1')?.phase, 'Succeeded')
  const changed = withMessage(fixture('jobflow/sync-outputs.v2.json'), 'v9')
  changed.parent.status = first.status
  t.equal(record(respond(changed, context()), 'job1')?.output, 'v1.2.3', 'the first output seen is the one kept')
})

t.test('no termination message: an empty output, never a failure', async t => {
  const response = respond(withMessage(fixture('jobflow/sync-outputs.v2.json'), undefined), context())
  t.equal(record(response, 'job1')?.output, '')
  t.equal(record(response, 'job1')?.phase, 'Succeeded')
  t.same(envOf(response, 'jobflow-example-job2')?.slice(-1), [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: '' }])
})

t.test('an output with $( and $$ reaches the dependant escaped, so its container sees it as written', async t => {
  const written = '$(HOME) and $$(X) cost $5'
  const request = withMessage(fixture('jobflow/sync-outputs.v2.json'), written)
  const containers = at(request.parent, 'spec.flows')[1].jobTemplate.template.spec.containers
  containers[0].env = [{ name: 'HOME', value: '/root' }, { name: 'X', value: 'x' }]
  const response = respond(request, context())
  t.equal(record(response, 'job1')?.output, written, 'the record keeps what was written')
  const env = envOf(response, 'jobflow-example-job2') ?? []
  t.same(env.slice(-1), [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: '$$(HOME) and $$$$(X) cost $5' }])
  t.equal(containerEnvironment({ env }).get('JOBHOOKS_OUTPUT_JOB1'), written,
    'after the kubelet\'s expansion, though HOME and X are defined before it')
  t.same(env.filter(e => e.name === 'HOME' || e.name === 'X'), containers[0].env,
    'the template\'s own values are left as the user wrote them')
})

t.test('an output is read whole up to 4 KiB, what Kubernetes keeps; longer, cut with a note of its size', async t => {
  const whole = 'é'.repeat(2000)
  const response = respond(withMessage(fixture('jobflow/sync-outputs.v2.json'), whole), context())
  t.equal(record(response, 'job1')?.output, whole, '4,000 bytes, kept whole while job2 may read it')
  t.equal(envOf(response, 'jobflow-example-job2')?.at(-1)?.value, whole, 'and handed on whole')
  const long = 'é'.repeat(3000)
  const output = record(respond(withMessage(fixture('jobflow/sync-outputs.v2.json'), long), context()), 'job1')?.output
  t.ok(Buffer.byteLength(output as string) <= OUTPUT_MAX_BYTES)
  t.match(output, /^é+ … \(cut: 6000 bytes\)$/)
  t.equal(cutOutput('short'), 'short')
})

t.test('once every step that reads an output succeeded, status shows its first KiB', async t => {
  const records: JobRecord[] = [
    { name: 'a', jobName: 'f-a', phase: 'Succeeded', output: 'x'.repeat(3000) },
    { name: 'b', jobName: 'f-b', phase: 'Succeeded', output: 'y'.repeat(3000) }
  ]
  const shown = shownOutputs(records, name => name === 'a')
  t.equal(shown[0], records[0], 'a is still read: whole')
  t.equal(Buffer.byteLength(shown[1]?.output as string), OUTPUT_SHOWN_BYTES)
  t.match(shown[1]?.output, /^y+ … \(cut: 3000 bytes\)$/)
})

t.test('a succeeded Job whose pod was not seen yet: dependants wait for its output, then go without it', async t => {
  const request = fixture('jobflow/sync-outputs.v2.json')
  delete request.related['Pod.v1']?.[POD1]
  const soon = respond(request, context(new Date('2026-01-02T03:00:20Z')))
  t.notOk(childrenOf(soon.children, 'Job').has('jobflow-example-job2'), 'not created without its input')
  t.equal(record(soon, 'job2')?.message, 'waiting for the output of job1')
  t.equal(soon.resyncAfterSeconds, 27, 'until 30 s after job1 completed at 03:00:17')
  const late = respond(request, context(new Date('2026-01-02T03:00:48Z')))
  t.same(envOf(late, 'jobflow-example-job2')?.slice(-1), [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: '' }])
  t.notOk(record(late, 'job1')?.output, 'nothing recorded: a pod seen later may still give it')
  const noPods = fixture('jobflow/sync-job1-done.v2.json')
  t.ok(childrenOf(respond(noPods, context()).children, 'Job').has('jobflow-example-job2'),
    'without any Pods from Metacontroller (customize not registered), nothing waits')
})

t.test('outputFrom picks the container; a name the pod does not have makes the spec invalid', async t => {
  const request = fixture('jobflow/sync-outputs.v2.json')
  const statuses = at(pod1(request), 'status.containerStatuses')
  statuses.push({ name: 'sidecar', state: { terminated: { exitCode: 0, message: 'from the sidecar' } } })
  const flows = at(request.parent, 'spec.flows')
  flows[0].outputFrom = 'sidecar'
  t.equal(record(respond(request, context()), 'job1')?.output, 'from the sidecar')
  const bad = fixture('jobflow/sync-outputs.v2.json')
  at(bad.parent, 'spec.flows')[1].outputFrom = 'nowhere'
  const response = respond(bad, context())
  t.equal(response.status.phase, 'Invalid')
  t.match(JSON.stringify(response.status.conditions), /outputFrom names no container of its pod: nowhere/)
  at(bad.parent, 'spec.flows')[1].outputFrom = 'Not A Name'
  t.match(JSON.stringify(respond(bad, context()).status.conditions), /outputFrom must name a container/)
})

t.test('when reads flows.<name>.output and outputJSON', async t => {
  const cases: Array<[string, string, boolean]> = [
    ['v1.2.3', "flows.job1.output == 'v1.2.3'", true],
    ['v1.2.3', "flows.job1.output.startsWith('v2')", false],
    ['{"deploy": true, "replicas": 3}', 'flows.job1.outputJSON.deploy && flows.job1.outputJSON.replicas > 2', true],
    ['not json', 'has(flows.job1.outputJSON)', false]
  ]
  for (const [output, when, runs] of cases) {
    const request = withMessage(fixture('jobflow/sync-outputs.v2.json'), output)
    at(request.parent, 'spec.flows')[1].when = when
    const response = respond(request, context())
    t.equal(childrenOf(response.children, 'Job').has('jobflow-example-job2'), runs, `${when} on ${output}`)
    if (!runs) t.match(record(response, 'job2')?.message, /^skipped: its when is false/)
  }
})

t.test('the variable of a dependency: upper-cased, dashes as underscores', async t => {
  t.equal(outputEnvName('build-image'), 'JOBHOOKS_OUTPUT_BUILD_IMAGE')
  const request = fixture('jobflow/sync-outputs.v2.json')
  const containers = at(request.parent, 'spec.flows')[1].jobTemplate.template.spec.containers
  containers[0].env = [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: 'mine' }]
  const env = envOf(respond(request, context()), 'jobflow-example-job2') ?? []
  t.same(env.filter(e => e.name === 'JOBHOOKS_OUTPUT_JOB1'), [{ name: 'JOBHOOKS_OUTPUT_JOB1', value: 'mine' }],
    'a variable the template sets is the template\'s')
})
