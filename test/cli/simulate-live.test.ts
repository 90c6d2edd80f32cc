// `npm run simulate -- --live` / `--kubeconfig`: the read-only preview, against a fake API server
// that answers GETs from memory and records every request.
import t, { type Test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { KubeObject } from '../../src/k8s/types.js'
import { main } from '../../src/cli/simulate.js'
import { liveMain } from '../../src/cli/simulate-live.js'
import { exampleJobFlow } from '../helpers/examples.js'
import { fakeReadApi, FAKE_TOKEN, kubeconfigFor, type FakeReadApi } from '../helpers/fake-read-api.js'

interface Run {
  code: number
  out: string[]
  err: string[]
}

async function run (argv: string[], entry: typeof liveMain = liveMain): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await entry(
    argv,
    (line) => out.push(line),
    (line) => err.push(line)
  )
  return { code, out, err }
}

interface Setup {
  fake: FakeReadApi
  kubeconfig: string
  manifest: string
}

/** A fake API server over `objects`, a kubeconfig for it (context namespace `team-a`) and `manifest` in a file. */
async function setup (t: Test, objects: KubeObject[], manifest: KubeObject[]): Promise<Setup> {
  const fake = await fakeReadApi(t, objects)
  const dir = t.testdir({ 'manifest.yaml': manifest.map((o) => stringify(o)).join('---\n') })
  return { fake, kubeconfig: kubeconfigFor(dir, fake.url, 'team-a'), manifest: join(dir, 'manifest.yaml') }
}

/** Whether the output has `line`; when not, the output goes into the test's comments. */
function hasLine (t: Test, out: string[], line: string, message: string): void {
  if (!t.ok(out.includes(line), message)) t.comment(out.join('\n'))
}

/** Every request was a read, with the kubeconfig's token. */
function onlyReads (t: Test, fake: FakeReadApi): void {
  t.ok(fake.requests.length > 0, 'the cluster was read')
  t.same(
    fake.requests.filter((r) => r.method !== 'GET'),
    [],
    'and only with GET requests'
  )
  t.ok(
    fake.requests.every((r) => r.headers.authorization === `Bearer ${FAKE_TOKEN}`),
    "each with the kubeconfig's token"
  )
}

/** The JobFlow of the running-flow fixture, its Jobs (job1 Complete, job4 running) and the manifest it came from. */
function runningFlow (): { objects: KubeObject[]; manifest: KubeObject } {
  const request = JSON.parse(
    readFileSync(new URL('../fixtures/jobflow/sync-job1-done.v2.json', import.meta.url), 'utf8')
  )
  const parent = request.parent as KubeObject
  const jobs = Object.values(request.children['Job.batch/v1'] as Record<string, KubeObject>)
  const manifest: KubeObject = {
    apiVersion: parent.apiVersion,
    kind: parent.kind,
    metadata: { name: parent.metadata.name, namespace: parent.metadata.namespace },
    spec: parent.spec
  }
  return { objects: [parent, ...jobs], manifest }
}

t.test('a JobFlow not in the cluster: its first sync would create the Jobs without dependencies', async (t) => {
  const { fake, kubeconfig, manifest } = await setup(t, [], [exampleJobFlow('team-a')])
  const { code, out, err } = await run(['--kubeconfig', kubeconfig, '-f', manifest])
  t.equal(code, 0)
  t.same(err, [])
  t.match(out[0], new RegExp(`^Live preview of .*manifest\\.yaml against ${fake.url.replaceAll('.', '\\.')} at `))
  hasLine(
    t,
    out,
    'JobFlow team-a/jobflow-example: not in the cluster: the first sync after apply',
    'a JobFlow the cluster does not have'
  )
  hasLine(
    t,
    out,
    '    create Jobs jobflow-example-job1, jobflow-example-job4',
    'job1 and job4, which depend on nothing'
  )
  t.ok(
    out.some((l) => /^ {4}write status: phase Pending/.test(l)),
    'the status it would write'
  )
  t.ok(
    out.some((l) => /^ {8}job5\s+Pending: waiting for job(2, job4|4, job2)$/.test(l)),
    "each job's record"
  )
  t.match(out.at(-1), /^Nothing was written \(\d+ GET requests, no other\)\.$/)
  onlyReads(t, fake)
  t.ok(
    fake.requests.some((r) => r.url === '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example'),
    "the JobFlow was looked for in the manifest's namespace"
  )
  t.ok(
    fake.requests.some((r) =>
      r.url.startsWith('/apis/batch/v1/namespaces/team-a/jobs?labelSelector=controller-uid%3D')
    ),
    "its Jobs were listed with the parent's selector"
  )
})

t.test(
  'a running JobFlow whose job1 is Complete: the next sync creates exactly job2, ' +
    'the one job whose dependencies are all done',
  async (t) => {
    const { objects, manifest: flow } = runningFlow()
    const { fake, kubeconfig, manifest } = await setup(t, objects, [flow])
    const { code, out, err } = await run(['--kubeconfig', kubeconfig, manifest, '-n', 'default'])
    t.equal(code, 0)
    t.same(err, [])
    hasLine(
      t,
      out,
      'JobFlow default/jobflow-example: in the cluster, phase Running',
      'the JobFlow as the cluster has it'
    )
    hasLine(t, out, '    create Job jobflow-example-job2', 'job2 only: job3 waits for job2, job5 for job2')
    hasLine(t, out, '    keep Jobs jobflow-example-job1, jobflow-example-job4', 'the children it keeps')
    t.notOk(
      out.some((l) => /delete/.test(l)),
      'nothing deleted'
    )
    t.ok(
      out.some((l) => /^ {8}job1\s+Succeeded$/.test(l)),
      'job1 recorded as Succeeded'
    )
    t.notOk(
      out.some((l) => l.startsWith('  note:')),
      "the manifest's spec is the cluster's: no note"
    )
    onlyReads(t, fake)
  }
)

t.test("a JobFlow whose manifest spec differs from the cluster's: previewed with the manifest's spec", async (t) => {
  const { objects, manifest: flow } = runningFlow()
  const spec = structuredClone(flow.spec) as { flows: Array<{ name: string; dependencies?: string[] }> }
  // job3 no longer waits for job2: with job1 done, it would start now.
  for (const f of spec.flows) if (f.name === 'job3') f.dependencies = ['job1']
  const { kubeconfig, manifest } = await setup(t, objects, [{ ...flow, spec }])
  const { code, out } = await run(['--kubeconfig', kubeconfig, '-f', manifest])
  t.equal(code, 0)
  t.ok(
    out.some((l) =>
      /^ {2}note: its spec in the cluster differs from the manifest's: the preview uses the manifest's spec/.test(l)
    ),
    'the preview says so'
  )
  hasLine(
    t,
    out,
    '    create Jobs jobflow-example-job2, jobflow-example-job3',
    'job3 too, which now waits for job1 alone'
  )
})

t.test('an OperationJob Label not in the cluster: its effects in words, none applied', async (t) => {
  const pod = (name: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'team-a',
      uid: `uid-${name}`,
      labels: { app: 'web' },
      creationTimestamp: '2026-01-01T00:00:00Z'
    },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }
  })
  const opj: KubeObject = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'OperationJob',
    metadata: { name: 'web-canary' },
    spec: {
      action: 'Label',
      partition: 1,
      targets: [{ name: 'web-0' }, { name: 'web-1' }],
      label: { labels: { track: 'canary' } }
    }
  }
  const { fake, kubeconfig, manifest } = await setup(t, [pod('web-0'), pod('web-1'), pod('web-2')], [pod('web-0'), opj])
  const { code, out, err } = await run(['--kubeconfig', kubeconfig, '-f', manifest])
  t.equal(code, 0)
  t.same(err, [])
  hasLine(
    t,
    out,
    'OperationJob team-a/web-canary: not in the cluster: the first sync after apply',
    'an OperationJob the cluster does not have'
  )
  t.ok(
    out.some((l) =>
      l.startsWith(
        '  note: Metacontroller would first add its finalizer ' +
          'metacontroller.io/compositecontroller-operationjob-controller'
      )
    ),
    'the finalizer Metacontroller adds first'
  )
  hasLine(
    t,
    out,
    '    label Pod team-a/web-0 track=canary (an effect the service applies)',
    'web-0, within the partition'
  )
  t.notOk(
    out.some((l) => l.includes('web-1 track=canary')),
    'not web-1, beyond it'
  )
  t.ok(out.some((l) => /^ {4}write status: progress Processing/.test(l)))
  t.ok(
    fake.requests.some((r) => r.url === '/api/v1/namespaces/team-a/pods/web-0'),
    'the targets were read by name'
  )
  t.notOk(
    fake.requests.some((r) => r.url.startsWith('/api/v1/namespaces/team-a/pods?')),
    'not by listing every Pod'
  )
  onlyReads(t, fake)
  t.same(fake.objects.find((o) => o.metadata.name === 'web-0')?.metadata.labels, { app: 'web' }, 'the Pod is as it was')
})

t.test('--output json: the same content for scripts', async (t) => {
  const { objects, manifest: flow } = runningFlow()
  const { fake, kubeconfig, manifest } = await setup(t, objects, [flow])
  const { code, out } = await run(['--kubeconfig', kubeconfig, '-f', manifest, '-n', 'default', '--output', 'json'])
  t.equal(code, 0)
  const report = JSON.parse(out.join('\n'))
  t.equal(report.server, fake.url)
  t.equal(report.written, false)
  t.equal(report.reads, fake.requests.length, 'every request counted')
  t.equal(report.objects.length, 1)
  const [preview] = report.objects
  t.match(preview, {
    kind: 'JobFlow',
    name: 'jobflow-example',
    namespace: 'default',
    exists: true,
    phase: 'Running',
    effects: []
  })
  t.same(preview.create, [{ kind: 'Job', name: 'jobflow-example-job2' }])
  t.same(preview.delete, [])
  t.equal(preview.status.phase, 'Running')
  t.same(
    preview.status.jobs.map((j: { name: string; phase: string }) => `${j.name} ${j.phase}`),
    ['job1 Succeeded', 'job2 Pending', 'job3 Pending', 'job4 Running', 'job5 Pending']
  )
})

t.test("--live takes the cluster of $KUBECONFIG, through simulate's main, and the context's namespace", async (t) => {
  const flow = exampleJobFlow()
  delete flow.metadata.namespace
  const { fake, kubeconfig, manifest } = await setup(t, [], [flow])
  const before = process.env.KUBECONFIG
  process.env.KUBECONFIG = kubeconfig
  t.teardown(() => {
    if (before === undefined) delete process.env.KUBECONFIG
    else process.env.KUBECONFIG = before
  })
  const { code, out, err } = await run(['--live', '-f', manifest], main)
  t.equal(code, 0)
  t.same(err, [])
  hasLine(
    t,
    out,
    'JobFlow team-a/jobflow-example: not in the cluster: the first sync after apply',
    'a JobFlow the cluster does not have'
  )
  onlyReads(t, fake)
})

t.test('bad arguments: exit 2 with the usage', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['-f', 'x.yaml'], /say which cluster: --live or --kubeconfig <file>/],
    [['--live'], /name the manifest to preview/],
    [['--live', 'a.yaml', 'b.yaml'], /one manifest at a time, not 2/],
    [['--live', '-f', 'a.yaml', '--output', 'yaml'], /--output must be json/],
    [['--live', '-f', 'a.yaml', '--bogus'], /Unknown option '--bogus'/],
    [['--kubeconfig'], /--kubeconfig/]
  ]
  for (const [argv, message] of cases) {
    const { code, out, err } = await run(argv)
    t.equal(code, 2, argv.join(' '))
    t.same(out, [])
    t.match(err[0], message)
    t.ok(
      err.some((l) => l.startsWith('usage: npm run simulate -- --live')),
      'and the usage'
    )
  }
  const help = await run(['--live', '--help'])
  t.equal(help.code, 0)
  t.match(help.out[0], /^usage:/)
})

t.test('a cluster that cannot be reached, or a manifest that cannot be read: exit 1 with the reason', async (t) => {
  const dir = t.testdir({
    'flow.yaml': stringify(exampleJobFlow()),
    'nothing.yaml': stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })
  })
  const kubeconfig = kubeconfigFor(dir, 'http://127.0.0.1:1')
  const unreachable = await run(['--kubeconfig', kubeconfig, '-f', join(dir, 'flow.yaml')])
  t.equal(unreachable.code, 1)
  t.same(unreachable.out, [])
  t.match(
    unreachable.err[0],
    /^simulate: cannot reach the API server at http:\/\/127\.0\.0\.1:1 \(.*kubeconfig\): .*ECONNREFUSED/
  )
  t.equal(unreachable.err[1], 'simulate: no preview; nothing was written')

  const missing = await run(['--kubeconfig', join(dir, 'missing'), '-f', join(dir, 'flow.yaml')])
  t.equal(missing.code, 1)
  t.match(missing.err[0], /--kubeconfig .*missing: no such file/)

  const noFile = await run(['--kubeconfig', kubeconfig, '-f', join(dir, 'absent.yaml')])
  t.equal(noFile.code, 1)
  t.match(noFile.err[0], /absent\.yaml: no such file/)

  const nothing = await run(['--kubeconfig', kubeconfig, '-f', join(dir, 'nothing.yaml')])
  t.equal(nothing.code, 1)
  t.match(nothing.err[0], /has no JobFlow, CronJobFlow, DaemonJob, EphemeralJob, OperationJob, CollaSet .* to preview/)
})

t.test("an API error is no preview: exit 1 with the API server's message", async (t) => {
  const { fake, kubeconfig, manifest } = await setup(t, [], [exampleJobFlow('team-a')])
  fake.deny = (url) => url.includes('/jobflows/')
  const { code, out, err } = await run(['--kubeconfig', kubeconfig, '-f', manifest])
  t.equal(code, 1)
  t.same(out, [])
  t.equal(
    err[0],
    'simulate: GET /apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/jobflow-example: ' +
      'HTTP 403: forbidden by the test'
  )
  onlyReads(t, fake)
})
