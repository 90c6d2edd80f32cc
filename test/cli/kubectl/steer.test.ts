// `kubectl jobhooks rerun|suspend|resume|logs|preview`: the patches sent (their bodies), the logs
// of a step's pods, the live preview, and what each says when it cannot act.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { cronJobFlowObjects, daemonJobObjects, NOW, operationJob, plugin, runningFlow } from '../../helpers/plugin.js'
import { exampleJobFlow } from '../../helpers/examples.js'

const FLOW_PATH = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example'

function failedFlow (annotations: Record<string, string> = {}): KubeObject {
  const flow = runningFlow()
  flow.metadata.annotations = annotations
  ;(flow.status as Record<string, unknown>).phase = 'Failed'
  return flow
}

const patches = (requests: Array<{ method: string, url: string, body?: unknown, contentType?: string }>): unknown[] =>
  requests.filter(r => r.method === 'PATCH').map(r => ({ url: r.url, body: r.body, contentType: r.contentType }))

t.test('rerun jf: the rerun annotation with a fresh value, on a finished JobFlow only', async t => {
  const value = String(NOW.getTime() / 1000)
  const { run, fake } = await plugin(t, [failedFlow()])
  t.same(await run(['rerun', 'jf', 'jobflow-example']),
    { code: 0, out: `jobflow.jobhooks.io/jobflow-example rerun requested (jobhooks.io/rerun=${value})\n`, err: '' })
  t.same(patches(fake.requests), [{
    url: FLOW_PATH,
    body: { metadata: { annotations: { 'jobhooks.io/rerun': value } } },
    contentType: 'application/merge-patch+json'
  }])
  const again = await plugin(t, [failedFlow({ 'jobhooks.io/rerun': value })])
  await again.run(['rerun', 'jf', 'jobflow-example'])
  t.same(patches(again.fake.requests).map(p => (p as { body: unknown }).body),
    [{ metadata: { annotations: { 'jobhooks.io/rerun': `${value}-2` } } }], 'never the value it has')
  const running = await plugin(t, [runningFlow()])
  t.same(await running.run(['rerun', 'jf', 'jobflow-example']), {
    code: 1,
    out: '',
    err: 'error: jobflow.jobhooks.io/jobflow-example is Running: a rerun acts on a finished JobFlow only ' +
      '(the hook would use the value up and do nothing)\n'
  })
  t.same(patches(running.fake.requests), [], 'nothing sent')
  t.same((await running.run(['rerun', 'dj', 'audit'])).err, 'error: this command acts on JobFlow, not DaemonJob\n')
})

t.test('suspend and resume jf|dj|cjf: a merge patch of spec.suspend', async t => {
  const { run, fake } = await plugin(t, [runningFlow(), ...daemonJobObjects(), operationJob(), ...cronJobFlowObjects()])
  t.same(await run(['suspend', 'jf', 'jobflow-example']),
    { code: 0, out: 'jobflow.jobhooks.io/jobflow-example suspended\n', err: '' })
  t.same(await run(['resume', 'jobflow', 'jobflow-example']),
    { code: 0, out: 'jobflow.jobhooks.io/jobflow-example resumed\n', err: '' })
  t.same(await run(['suspend', 'dj', 'audit']), { code: 0, out: 'daemonjob.jobhooks.io/audit suspended\n', err: '' })
  t.same(await run(['suspend', 'cjf', 'nightly']),
    { code: 0, out: 'cronjobflow.jobhooks.io/nightly suspended\n', err: '' })
  t.same(patches(fake.requests).slice(3), [{
    url: '/apis/jobhooks.io/v1alpha1/namespaces/team-a/cronjobflows/nightly',
    body: { spec: { suspend: true } },
    contentType: 'application/merge-patch+json'
  }])
  t.same(patches(fake.requests).slice(0, 3), [
    { url: FLOW_PATH, body: { spec: { suspend: true } }, contentType: 'application/merge-patch+json' },
    { url: FLOW_PATH, body: { spec: { suspend: false } }, contentType: 'application/merge-patch+json' },
    {
      url: '/apis/jobhooks.io/v1alpha1/namespaces/team-a/daemonjobs/audit',
      body: { spec: { suspend: true } },
      contentType: 'application/merge-patch+json'
    }
  ])
  const flow = fake.objects.find(o => o.metadata.name === 'jobflow-example')
  t.equal((flow?.spec as { suspend: boolean }).suspend, false, 'applied')
  t.same((await run(['suspend', 'opj', 'opj-replace'])).err,
    'error: this command acts on JobFlow or DaemonJob or CronJobFlow, not OperationJob\n')
  t.same(await run(['suspend', 'jf', 'nope']),
    { code: 1, out: '', err: 'Error from server (NotFound): jobflows.jobhooks.io "nope" not found\n' })
  fake.deny = method => method === 'PATCH'
  t.match(await run(['resume', 'jf', 'jobflow-example']), {
    code: 1,
    err: 'Error from server (Forbidden): jobflows.jobhooks.io "jobflow-example" is forbidden: User "tester" cannot ' +
      'patch resource "jobflows" in API group "jobhooks.io" in the namespace "team-a"\n'
  })
})

function jobPod (name: string, job: string, containers = ['main']): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'team-a', labels: { 'batch.kubernetes.io/job-name': job } },
    spec: { containers: containers.map(c => ({ name: c, image: 'busybox:1.36' })) }
  }
}

t.test('logs jf <name> <step>: the pods of the step\'s Job, the last attempt unless one is named', async t => {
  const { run, fake } = await plugin(t, [runningFlow(), jobPod('job2-2-abc', 'jobflow-example-job2-2'),
    jobPod('job2-xyz', 'jobflow-example-job2', ['main', 'sidecar']), jobPod('item-1-q',
      'jobflow-example-shard-item-1')])
  fake.logs.set('job2-2-abc/main', 'retrying\ndone\n')
  fake.logs.set('job2-xyz/main', 'boom\n')
  fake.logs.set('job2-xyz/sidecar', 'proxy up')
  fake.logs.set('item-1-q/main', 'shard us\n')
  t.same(await run(['logs', 'jf', 'jobflow-example', 'job2']), { code: 0, out: 'retrying\ndone\n', err: '' })
  t.ok(fake.requests.some(r => r.url === '/api/v1/namespaces/team-a/pods?labelSelector=' +
    'batch.kubernetes.io%2Fjob-name%3Djobflow-example-job2-2'), 'pods found by the Job\'s own label')
  t.same(await run(['logs', 'jf', 'jobflow-example', 'job2', '--attempt', '1']), {
    code: 0,
    out: '[pod/job2-xyz/main] boom\n[pod/job2-xyz/sidecar] proxy up\n',
    err: ''
  }, 'several containers: each line says whose')
  t.same(await run(['logs', 'jf', 'jobflow-example', 'shard', '--item', '1']), { code: 0, out: 'shard us\n', err: '' })
  const errors = [
    [['shard'], 'error: step shard runs one Job per item (2 items): name one with --item\n'],
    [['job3'], 'error: job3 has no Job that ran yet: Pending: waiting for job2\n'],
    [['job2', '--attempt', '3'], 'error: job2 has no attempt 3 (attempts: 1, 2)\n'],
    [['nope'], 'error: jobflow jobflow-example has no step "nope" (steps: job1, job2, job3, job4, job5, shard)\n'],
    [['job1'], 'error: Job jobflow-example-job1 (job1, attempt 1, Succeeded) has no pods: deleted with the Job ' +
      '(its TTL), or not created yet\n']
  ] as const
  for (const [args, err] of errors) {
    t.same(await run(['logs', 'jf', 'jobflow-example', ...args]), { code: 1, out: '', err }, args.join(' '))
  }
  t.same((await run(['logs', 'jf', 'jobflow-example', 'job2', '--attempt', '1', '--item', '0'])).err,
    "error: give --attempt or --item, not both\nSee 'kubectl jobhooks --help' for usage.\n")
  fake.deny = (_method, url) => url.includes('/log')
  t.match((await run(['logs', 'jf', 'jobflow-example', 'job2'])).err,
    /^Error from server \(Forbidden\): pods "job2-2-abc"/)
})

t.test('logs -f: the log followed as it grows, until stopped', async t => {
  const { run, fake } = await plugin(t, [runningFlow(), jobPod('job2-2-abc', 'jobflow-example-job2-2')])
  fake.logs.set('job2-2-abc/main', 'first line\n')
  const stop = new AbortController()
  const { code, out } = await run(['logs', 'jf', 'jobflow-example', 'job2', '-f'], {
    signal: stop.signal,
    onOut: all => { if (all.includes('first line')) stop.abort() }
  })
  t.same([code, out], [0, 'first line\n'])
  t.ok(fake.requests.some(r => r.url.endsWith('/pods/job2-2-abc/log?container=main&follow=true')), 'follow=true asked')
})

t.test('preview -f: the live preview, reading only', async t => {
  const { run, fake } = await plugin(t, [])
  const dir = t.testdir({ 'flow.yaml': stringify(exampleJobFlow('team-a')) })
  const { code, out, err } = await run(['preview', '-f', join(dir, 'flow.yaml')])
  t.equal(err, '')
  t.equal(code, 0)
  t.match(out, /^Live preview of .*flow\.yaml against http:\/\/127\.0\.0\.1:\d+ at /)
  t.match(out, '    create Jobs jobflow-example-job1, jobflow-example-job4')
  t.same(fake.requests.filter(r => r.method !== 'GET'), [], 'only GETs')
  t.same((await run(['preview'])).err,
    "error: preview needs a manifest: preview -f <manifest.yaml>\nSee 'kubectl jobhooks --help' for usage.\n")
})

t.test('--help, and no command: the usage, exit 0; an unknown command: exit 1', async t => {
  const { run } = await plugin(t, [])
  const help = await run(['--help'])
  t.equal(help.code, 0)
  t.match(help.out, /^kubectl jobhooks: see and steer jobhooks workloads\.\n\nUsage:\n {2}kubectl jobhooks get <kind>/)
  t.equal((await run([])).out, help.out)
  t.same(await run(['delete', 'jf', 'x']),
    { code: 1, out: '', err: 'error: unknown command "delete"\nSee \'kubectl jobhooks --help\' for usage.\n' })
})

/** A JobFlow whose step `gate` waits for approval, annotated with `approved` when given. */
function gatedFlow (approved?: string): KubeObject {
  const flow = runningFlow()
  const spec = flow.spec as { flows: Array<Record<string, unknown>> }
  spec.flows = [...spec.flows, { name: 'gate', approval: {} }]
  if (approved !== undefined) flow.metadata.annotations = { 'jobhooks.io/approve': approved }
  return flow
}

t.test('approve jf: adds the step to jobhooks.io/approve, guarded by the resourceVersion it read', async t => {
  const { run, fake } = await plugin(t, [gatedFlow()])
  t.same(await run(['approve', 'jf', 'jobflow-example', 'gate']), {
    code: 0, out: 'jobflow.jobhooks.io/jobflow-example approved: gate (jobhooks.io/approve=gate)\n', err: ''
  })
  t.same(patches(fake.requests), [{
    url: FLOW_PATH,
    body: { metadata: { annotations: { 'jobhooks.io/approve': 'gate' }, resourceVersion: '101' } },
    contentType: 'application/merge-patch+json'
  }])
  const again = await plugin(t, [gatedFlow('gate')])
  t.same(await again.run(['approve', 'jf', 'jobflow-example', 'gate']),
    { code: 0, out: 'jobflow.jobhooks.io/jobflow-example already approved: gate\n', err: '' })
  t.same(patches(again.fake.requests), [], 'nothing sent twice')
  t.same(await again.run(['approve', 'jf', 'jobflow-example', 'job1']), {
    code: 1,
    out: '',
    err: 'error: jobflow.jobhooks.io/jobflow-example has no approval step "job1" (its approval steps: gate)\n'
  })
  t.match((await again.run(['approve', 'jf', 'jobflow-example'])).err, /approve needs a JobFlow and a step/)
})

t.test('approve jf: a step of a template group, known by its record waiting for approval', async t => {
  const grouped = (approved?: string): KubeObject => {
    const flow = gatedFlow(approved)
    const jobs = (flow.status as { jobs: Array<Record<string, unknown>> }).jobs
    jobs.push({ name: 'release.build', jobName: 'jobflow-example-release-build', phase: 'Running' }, {
      name: 'release.approve',
      jobName: 'jobflow-example-release-approve',
      phase: approved === undefined ? 'Pending' : 'Succeeded',
      startTime: '2026-01-02T03:04:00Z',
      message: approved === undefined
        ? 'waiting for approval since 2026-01-02T03:04:00Z: kubectl jobhooks approve jf jobflow-example ' +
          'release.approve -n team-a (it takes the patch verb on jobflows.jobhooks.io in team-a)'
        : 'approved (jobhooks.io/approve)'
    })
    return flow
  }
  const { run, fake } = await plugin(t, [grouped()])
  t.same(await run(['approve', 'jf', 'jobflow-example', 'release.approve']), {
    code: 0,
    out: 'jobflow.jobhooks.io/jobflow-example approved: release.approve (jobhooks.io/approve=release.approve)\n',
    err: ''
  })
  t.same(patches(fake.requests).map(p => (p as { body: unknown }).body),
    [{ metadata: { annotations: { 'jobhooks.io/approve': 'release.approve' }, resourceVersion: '101' } }])
  t.same((await run(['approve', 'jf', 'jobflow-example', 'release.build'])).err, 'error: jobflow.jobhooks.io/' +
    'jobflow-example has no approval step "release.build" (its approval steps: gate, release.approve)\n',
  'a step of the group that does not wait for approval')
  const done = await plugin(t, [grouped('release.approve')])
  t.same(await done.run(['approve', 'jf', 'jobflow-example', 'release.approve']),
    { code: 0, out: 'jobflow.jobhooks.io/jobflow-example already approved: release.approve\n', err: '' },
    'approved already: its record no longer waits, the annotation names it')
  t.same(patches(done.fake.requests), [], 'nothing sent twice')
})
