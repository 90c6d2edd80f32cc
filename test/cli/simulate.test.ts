// The `npm run simulate` CLI, called in-process through its exported main.
import t from 'tap'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify } from 'yaml'
import { exampleJobFlow } from '../helpers/examples.js'
import { creations, run } from '../helpers/simulate-cli.js'

const MANIFEST = fileURLToPath(new URL('../../manifests/examples/jobflow.yaml', import.meta.url))

/** The example manifest, or the same JobFlow written to a temporary file while it does not exist. */
function exampleManifest (t: { testdir: (files: Record<string, string>) => string }): string {
  if (existsSync(MANIFEST)) return MANIFEST
  return join(t.testdir({ 'jobflow.yaml': stringify(exampleJobFlow()) }), 'jobflow.yaml')
}

t.test('the example runs job1 and job4, then job2, then job3 and job5, and succeeds', async (t) => {
  const { code, out, err } = await run([exampleManifest(t)])
  t.equal(code, 0)
  t.same(err, [])
  t.same(creations(out), [
    'jobflow-example-job1',
    'jobflow-example-job4',
    'jobflow-example-job2',
    'jobflow-example-job3',
    'jobflow-example-job5'
  ])
  t.match(
    out.find((l) => l.startsWith('t=0s')),
    /jobflow-example.*created Jobs jobflow-example-job1, jobflow-example-job4/
  )
  t.match(
    out.find((l) => l.startsWith('t=10s')),
    /created Job jobflow-example-job2/
  )
  t.match(
    out.find((l) => l.startsWith('t=30s')),
    /Succeeded/
  )
  t.ok(
    out.some((l) => /jobflow-example\s+Succeeded at t=30s \(5\/5 jobs succeeded\)/.test(l)),
    'the final phase'
  )
  const table = out.filter((l) => /^\s+job\d\s/.test(l))
  t.equal(table.length, 5, 'one table row per flow')
  t.match(
    table.find((l) => l.includes('job3')),
    /job3\s+job1, job2\s+jobflow-example-job3\s+Succeeded\s+t=20s\s+t=30s/
  )
})

t.test('--fail job2 stops the flow: job3 and job5 are skipped', async (t) => {
  const { code, out, err } = await run([exampleManifest(t), '--fail', 'job2'])
  t.equal(code, 0, 'the simulation ran, whatever the outcome')
  t.same(err, [])
  t.same(creations(out), ['jobflow-example-job1', 'jobflow-example-job4', 'jobflow-example-job2'])
  t.match(
    out.find((l) => l.startsWith('t=20s')),
    /Failed\s+failed jobflow-example-job2/
  )
  t.ok(
    out.some((l) => /jobflow-example\s+Failed at t=20s \(2\/5 jobs succeeded, 1 failed, 2 skipped\)/.test(l)),
    'the final phase'
  )
  t.match(
    out.find((l) => /^\s+job3\s/.test(l)),
    /Skipped/
  )
  t.match(
    out.find((l) => /^\s+job5\s/.test(l)),
    /Skipped/
  )
  t.match(
    out.find((l) => /^\s+job2\s/.test(l)),
    /Failed.*BackoffLimitExceeded/
  )
})

t.test('--duration sets how long each Job runs', async (t) => {
  const { code, out } = await run([exampleManifest(t), '--duration=5'])
  t.equal(code, 0)
  t.ok(
    out.some((l) => /Succeeded at t=15s/.test(l)),
    'three levels of 5 s'
  )
})

t.test('a --fail that names no flow is noted', async (t) => {
  const { code, err } = await run([exampleManifest(t), '--fail', 'nosuchflow'])
  t.equal(code, 0)
  t.match(err.join('\n'), /no Job, Pod or workload answered to nosuchflow/)
})

t.test('a missing file, a manifest without JobFlow and bad arguments fail clearly', async (t) => {
  const missing = await run(['does/not/exist.yaml'])
  t.equal(missing.code, 1)
  t.match(missing.err.join('\n'), /does\/not\/exist\.yaml: no such file/)

  const dir = t.testdir({
    'configmap.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\n',
    'broken.yaml': 'apiVersion: v1\nkind: [unclosed\n'
  })
  const empty = await run([join(dir, 'configmap.yaml')])
  t.equal(empty.code, 1)
  t.match(empty.err.join('\n'), /has no JobFlow/)
  const broken = await run([join(dir, 'broken.yaml')])
  t.equal(broken.code, 1)
  t.match(broken.err.join('\n'), /not valid YAML/)

  for (const argv of [
    [],
    ['--bogus'],
    [MANIFEST, '--duration', 'soon'],
    [MANIFEST, '--hook-version', 'v3'],
    [MANIFEST, '--set', 'spec.x=1'],
    [MANIFEST, '--at', '5'],
    [MANIFEST, '--output', 'yaml']
  ]) {
    const bad = await run(argv)
    t.equal(bad.code, 2, `exit 2 for ${JSON.stringify(argv)}`)
    const usage = /usage: kubectl jobhooks simulate -f <manifest\.yaml>\.\.\. \[options\]\n {7}npm run -s simulate -- /
    t.match(bad.err.join('\n'), usage)
  }
  const help = await run(['--help'])
  t.equal(help.code, 0)
  t.match(help.out.join('\n'), /usage/)
})

const DAEMONJOB_MANIFEST = fileURLToPath(new URL('../../manifests/examples/daemonjob.yaml', import.meta.url))

/** The rows of the DaemonJob report's table: `[node, job, result]` (up to the `kubectl get` it ends with). */
function nodeRows (lines: string[]): string[][] {
  const start = lines.findIndex((l) => /^\s+NODE\s+JOB\s+RESULT/.test(l))
  const end = lines.findIndex((l, i) => i > start && l.trim().startsWith('$ kubectl get '))
  return start < 0
    ? []
    : lines
      .slice(start + 1, end < 0 ? undefined : end)
      .filter((l) => /^\s{2}\S/.test(l))
      .map((l) => l.trim().split(/\s{2,}/))
}

t.test(
  'the DaemonJob example over the default Nodes: node3 runs, the excluded and the cordoned Nodes say why not',
  async (t) => {
    const { code, out, err } = await run([DAEMONJOB_MANIFEST])
    t.equal(code, 0)
    t.same(err, [])
    t.match(out[0], /1 DaemonJob over 4 Nodes \(the default set\)/)
    t.match(
      out.find((l) => l.startsWith('t=0s')),
      /daemonjob-example\s+Running\s+applied; created Job daemonjob-example-node3/
    )
    t.ok(
      out.some((l) => /daemonjob-example\s+Succeeded at t=10s \(1\/1 nodes succeeded, 0 failed\)/.test(l)),
      'the final phase'
    )
    t.same(nodeRows(out), [
      ['node1', '-', 'skipped: excluded by excludeNodeList'],
      ['node2', '-', 'skipped: excluded by excludeNodeList'],
      ['node3', 'daemonjob-example-node3', 'Succeeded'],
      ['node4', '-', 'skipped: cordoned (spec.unschedulable)']
    ])
  }
)

t.test("--nodes gives the DaemonJob its Nodes; --fail a node's Job fails it and the DaemonJob", async (t) => {
  const dir = t.testdir({
    'nodes.yaml':
      stringify({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'gpu-1' },
        spec: { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] }
      }) +
      '---\n' +
      stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'web-1' } }) +
      '---\n' +
      stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'web-2' } })
  })
  const { code, out } = await run([
    DAEMONJOB_MANIFEST,
    '--nodes',
    join(dir, 'nodes.yaml'),
    '--fail',
    'daemonjob-example-web-2'
  ])
  t.equal(code, 0)
  t.match(out[0], /1 DaemonJob over 3 Nodes;/)
  t.ok(
    out.some((l) => /daemonjob-example\s+Failed at t=10s \(1\/2 nodes succeeded, 1 failed\)/.test(l)),
    'Failed: one of two'
  )
  const rows = nodeRows(out)
  t.same(
    rows.map((r) => r.slice(0, 2)),
    [
      ['gpu-1', '-'],
      ['web-1', 'daemonjob-example-web-1'],
      ['web-2', 'daemonjob-example-web-2']
    ]
  )
  t.match(rows[0]?.[2], /^skipped: .*gpu/, 'the untolerated taint is named')
  t.equal(rows[1]?.[2], 'Succeeded')
  t.match(rows[2]?.[2], /^Failed: /)
})

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))

t.test(
  "an EphemeralJob over a manifest's Deployments: one Pod at a time, " +
    "--fail names a Deployment whose Pods' containers exit 1",
  async (t) => {
    const { code, out, err } = await run([join(EXAMPLES, 'ephemeraljob-batch.yaml'), '--fail', 'helloworld-no-work'])
    t.equal(code, 0)
    t.same(err, [])
    t.match(out[0], /2 Deployments, 1 EphemeralJob/)
    const injected = out.filter((l) => /hello-world-ephemeral-job .*injected container helloworld-ec into/.test(l))
    t.equal(injected.length, 4, 'each of the four Pods gets the container, one after another (parallelism 1)')
    t.ok(
      out.some((l) =>
        /Deployment helloworld-no-work\s+finished helloworld-ec exit code 1 in helloworld-no-work-/.test(l)
      ),
      "the failing Deployment's Pods exit 1"
    )
    t.ok(
      out.some((l) =>
        /hello-world-ephemeral-job\s+Failed at t=\d+s \(4 matched, 2 succeeded, 2 failed, 0 running, 0 waiting\)/.test(
          l
        )
      )
    )
  }
)

t.test('--set and --at edit the job mid-way: the partition raised at 30 s labels the second Pod then', async (t) => {
  const { code, out } = await run([
    join(EXAMPLES, 'operationjob-label.yaml'),
    '--set',
    'spec.partition=2',
    '--at',
    '30s'
  ])
  t.equal(code, 0)
  t.match(
    out.find((l) => l.startsWith('t=0s') && l.includes('web-canary')),
    /Processing\s+applied; labelled pod web-0 track=canary/
  )
  t.match(
    out.find((l) => l.startsWith('t=30s')),
    /web-canary\s+Succeeded\s+edited \(set spec.partition=2\); labelled pod web-1 track=canary/
  )
  const without = await run([join(EXAMPLES, 'operationjob-label.yaml')])
  t.ok(
    without.out.some((l) => /web-canary\s+Processing \(1\/2 targets succeeded\)/.test(l)),
    'without the edit the job stays Processing at its partition'
  )
  const unknown = await run([
    join(EXAMPLES, 'operationjob-label.yaml'),
    '--set',
    'nosuch:spec.partition=2',
    '--at',
    '5'
  ])
  t.equal(unknown.code, 2)
  t.match(unknown.err.join('\n'), /no object nosuch/)
})

t.test(
  'Replace with its CollaSet: manifests apply in order, the job once the CollaSet is up; ' +
    'evictions and labels are told in words',
  async (t) => {
    const { code, out } = await run([
      join(EXAMPLES, 'collaset.yaml'),
      join(EXAMPLES, 'operationjob-replace.yaml'),
      '--set',
      'spec.partition=2',
      '--at',
      '60'
    ])
    t.equal(code, 0)
    const applied = out.find((l) => /opj-replace .*applied/.test(l)) ?? ''
    t.match(
      applied,
      /labelled pod foo-w0fri jobhooks.io\/to-replace=true/,
      'the first target, by the name the CollaSet gave it'
    )
    t.notMatch(applied, /^t=0s/, 'the job is applied once the CollaSet has settled')
    t.ok(
      out.some((l) => /foo\s+deleted Pod foo-w0fri \(by the controller\)/.test(l)),
      'the old Pod goes once the new one is Ready'
    )
    t.ok(out.some((l) => /opj-replace\s+Succeeded at t=6\ds \(2\/2 targets succeeded\)/.test(l)))
    t.ok(
      out.some((l) => /^\s+opj-replace\s+Replace\s+Succeeded\s+2\s+2\s+0\s+\d+s$/.test(l)),
      'the row kubectl get shows'
    )
  }
)

t.test('--output json gives the same timeline and the final objects, for scripts', async (t) => {
  const { code, out } = await run([
    join(EXAMPLES, 'operationjob-label.yaml'),
    '--set',
    'spec.partition=2',
    '--at',
    '30',
    '--output',
    'json'
  ])
  t.equal(code, 0)
  const parsed = JSON.parse(out.join('\n'))
  t.match(parsed.summary, /^Simulating /)
  t.same(
    parsed.timeline.find((e: any) => e.seconds === 30 && e.subject === 'web-canary'),
    {
      seconds: 30,
      subject: 'web-canary',
      phase: 'Succeeded',
      actions: ['edited (set spec.partition=2)', 'labelled pod web-1 track=canary']
    }
  )
  t.equal(parsed.objects.length, 1)
  t.match(parsed.objects[0], {
    kind: 'OperationJob',
    name: 'web-canary',
    namespace: 'default',
    phase: 'Succeeded',
    status: { succeededPodCount: 2 }
  })
})

t.test('every example simulates to the end state its header promises', async (t) => {
  const { examplePromises, brokenPromises } = await import('../helpers/example-promises.js')
  const promises = examplePromises()
  t.ok(promises.length >= 11, 'every example has a promise')
  for (const promise of promises) {
    const { code, out } = await run([...promise.simulate, '--output', 'json'])
    t.equal(code, 0, `${promise.file}: simulates`)
    const objects = JSON.parse(out.join('\n')).objects
    const object = objects.find((o: any) => o.name === promise.get.name)
    t.ok(object, `${promise.file}: ${promise.get.name} is simulated`)
    t.same(
      brokenPromises(promise, object),
      [],
      `${promise.file}: kubectl get ${promise.get.resource} ${promise.get.name} shows what the header says`
    )
    // A `kubectl wait --for=condition=X` of the header after its last change (an edit, a rerun)
    // returns only once X is True: it holds at the end.
    const changes = /^kubectl (apply|patch|annotate|label|edit|jobhooks (rerun|approve|suspend|resume))\b/
    const lastChange = promise.commands.findLastIndex(c => changes.test(c))
    for (const command of promise.commands.slice(lastChange + 1)) {
      const waited = /^kubectl wait \S+\/(\S+) --for=condition=(\w+)/.exec(command)
      if (waited === null) continue
      const holder = objects.find((o: any) => o.name === waited[1])
      const condition = (holder?.status?.conditions ?? []).find((c: any) => c.type === waited[2])
      t.equal(condition?.status, 'True', `${promise.file}: ${command} returns`)
    }
  }
})

t.test(
  'Recreate over a Deployment: the ReplicaSet brings the evicted Pod back; ' +
    'a PodDisruptionBudget that refuses is told, with its answer',
  async (t) => {
    const deployment = (replicas: number): string =>
      stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] }
          }
        }
      })
    const pdb = stringify({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } }
    })
    const first = await run([join(t.testdir({ 'web.yaml': deployment(2) }), 'web.yaml'), '--output', 'json'])
    t.equal(first.code, 1, 'a manifest with nothing of ours to run')
    // The Deployment's first Pod name is stable: a hash of its template and a slot.
    const probe = await run([
      join(
        t.testdir({
          'all.yaml': `${deployment(2)}---\n${stringify({
            apiVersion: 'jobhooks.io/v1alpha1',
            kind: 'OperationJob',
            metadata: { name: 'noop' },
            spec: { action: 'Label', partition: 0, targets: [{ name: 'x' }], label: { labels: { a: 'b' } } }
          })}`
        }),
        'all.yaml'
      )
    ])
    const pod = /created ReplicaSet [^;]+; created Pods ([^,]+),/.exec(probe.out.join('\n'))?.[1] ?? ''
    t.match(pod, /^web-[0-9a-f]{10}-[a-z0-9]{5}$/)
    const job = stringify({
      apiVersion: 'jobhooks.io/v1alpha1',
      kind: 'OperationJob',
      metadata: { name: 'restart' },
      spec: { action: 'Recreate', activeDeadlineSeconds: 60, targets: [{ name: pod }] }
    })
    const dir = t.testdir({
      'two.yaml': `${deployment(2)}---\n${pdb}`,
      'one.yaml': `${deployment(1)}---\n${pdb}`,
      'job.yaml': job
    })
    const ok = await run([join(dir, 'two.yaml'), join(dir, 'job.yaml')])
    t.ok(
      ok.out.some((l) => l.includes(`evicted pod ${pod}`)),
      'evicted: the budget allows one of two'
    )
    t.ok(
      ok.out.some((l) => /restart\s+Succeeded at t=\d+s \(1\/1 targets succeeded\)/.test(l)),
      'back and Ready: Succeeded'
    )
    t.ok(
      ok.out.some((l) => /Deployment web\s+created Pod web-/.test(l)),
      'the ReplicaSet made a new Pod'
    )
    const refused = await run([join(dir, 'one.yaml'), join(dir, 'job.yaml')])
    t.ok(
      refused.out.some((l) =>
        l.includes(
          `evicted pod ${pod} (failed: HTTP 429: Cannot evict pod as it would violate the pod's disruption budget web`
        )
      ),
      "the refusal, in the budget's words"
    )
    t.ok(
      refused.out.some((l) => /restart\s+Failed at t=\d+s .*1 failed/.test(l)),
      'the deadline ends it'
    )
  }
)

t.test(
  '--pods adds Pods that were there before the manifest: the EphemeralJob takes the oldest, ' +
    'and --fail fails its container',
  async (t) => {
    const dir = t.testdir({
      'pods.yaml': stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'old-nginx', labels: { env: 'test' } },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] }
      })
    })
    const { code, out } = await run([
      join(EXAMPLES, 'ephemeraljob-debug.yaml'),
      '--pods',
      join(dir, 'pods.yaml'),
      '--fail',
      'old-nginx'
    ])
    t.equal(code, 0)
    t.match(out[0], /2 Pods, 1 EphemeralJob/)
    t.ok(
      out.some((l) => /nginx-ephemeral-job .*injected container nginx-ec into old-nginx/.test(l)),
      'replicas 1, oldest first: the Pod of --pods'
    )
    t.notOk(
      out.some((l) => /injected container nginx-ec into nginx$/.test(l)),
      "not the manifest's younger Pod"
    )
    t.ok(
      out.some((l) => /nginx-ephemeral-job\s+Failed at t=\d+s \(2 matched, 0 succeeded, 1 failed/.test(l)),
      'both match, one is chosen and fails'
    )
  }
)
