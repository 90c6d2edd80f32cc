// JobFlow against the real thing: the API server with our CRDs and CEL rules, the Job
// controller, garbage collection, and Metacontroller calling our service. Everything asserted
// here is read back from the API server, never from our logs.
import t from 'tap'
import { stringify } from 'yaml'
import { apply, waitFor } from './cluster.js'
import { jobFlowExample, startFlowUntilFirstJobs, startScenarios, waitForStatusOf, watchObjects } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)

async function jobflow (ns: string, name: string): Promise<any> {
  return await getJson(['get', 'jobflow', name, '-n', ns])
}

async function jobsByName (ns: string): Promise<Map<string, any>> {
  const list = await getJson(['get', 'jobs', '-n', ns])
  return new Map(list.items.map((job: any) => [job.metadata.name, job]))
}

async function waitForPhase (ns: string, name: string, phases: string[], timeoutMs = 180_000): Promise<any> {
  return await waitFor(
    `JobFlow ${ns}/${name} to be ${phases.join(' or ')}`,
    async () => {
      const flow = await jobflow(ns, name)
      return phases.includes(flow.status?.phase) ? flow : undefined
    },
    timeoutMs,
    1_000
  )
}

function example (mutate: (spec: any) => void = () => {}): any {
  return jobFlowExample(cluster, mutate)
}

function failFlow (spec: any, name: string): void {
  const template = spec.flows.find((f: any) => f.name === name).jobTemplate
  template.backoffLimit = 0
  template.template.metadata = { labels: { 'e2e-outcome': 'fail' } }
  template.template.spec.containers[0].command = ['sh', '-c', 'exit 1']
}

const seconds = (time: string): number => Date.parse(time) / 1000

/** Applies the example with job2 suspended (it never finishes by itself) and waits until job2 exists. */
async function applyWithJob2Suspended (ns: string): Promise<void> {
  await apply(cluster.kubectl, stringify(example(suspendJob2)), ns)
  await waitFor(
    'job2 to be created',
    async () => ((await jobsByName(ns)).has('jobflow-example-job2') ? true : undefined),
    120_000,
    1_000
  )
}

function suspendJob2 (spec: any): void {
  spec.flows.find((f: any) => f.name === 'job2').jobTemplate.suspend = true
}

t.test('the five-job example succeeds, its Jobs created in dependency order', async (t) => {
  const ns = await namespace('example')
  await apply(cluster.kubectl, stringify(example()), ns)
  const flow = await waitForPhase(ns, 'jobflow-example', ['Succeeded', 'Failed', 'Invalid'])
  t.equal(flow.status.phase, 'Succeeded')
  t.same(
    flow.status.jobs.map((j: any) => `${j.name}=${j.phase}`),
    ['job1=Succeeded', 'job2=Succeeded', 'job3=Succeeded', 'job4=Succeeded', 'job5=Succeeded']
  )
  t.match(flow.status.conditions, [
    { type: 'Valid', status: 'True' },
    { type: 'Complete', status: 'True' },
  ])
  t.equal(flow.status.observedGeneration, flow.metadata.generation, 'Metacontroller wrote the status')

  const jobs = await jobsByName(ns)
  const job = (n: number): any => jobs.get(`jobflow-example-job${n}`)
  for (let n = 1; n <= 5; n++) {
    t.match(job(n)?.status?.conditions, [{ type: 'SuccessCriteriaMet', status: 'True' }], `job${n} really ran`)
    t.equal(job(n).metadata.ownerReferences?.[0]?.kind, 'JobFlow', `job${n} is owned by the JobFlow`)
    t.equal(job(n).spec.template.spec.nodeName, cluster.nodeName, `job${n} carries globalParams.nodeName`)
    t.match(job(n).spec.template.spec.containers[0].env, [
      { name: 'FOO', value: 'bar' },
      { name: 'QUE', value: 'pasa' },
    ])
  }
  // A Job starts only after each of its dependencies completed (times are whole seconds).
  const created = (n: number): number => seconds(job(n).metadata.creationTimestamp)
  const completed = (n: number): number => seconds(job(n).status.completionTime)
  for (const [n, deps] of [
    [2, [1]],
    [3, [1, 2]],
    [5, [2, 4]],
  ] as const) {
    for (const d of deps) t.ok(created(n) >= completed(d), `job${n} was created after job${d} completed`)
  }
  t.ok(created(1) < created(2) && created(4) < created(2), 'job1 and job4 came first')
  t.ok(created(2) < created(3) && created(2) < created(5), 'job3 and job5 came after job2')

  const table = await cluster.kubectl(['get', 'jobflows', '-n', ns])
  t.match(
    table.stdout,
    /^NAME\s+STATUS\s+JOBS\s+QUEUED\s+AGE\s*\njobflow-example\s+Succeeded\s+5\/5\s+\d+[smhd]\S*\s*$/m,
    'kubectl get jobflows shows STATUS and JOBS, and QUEUED empty: no Job waits'
  )
})

t.test('a failing job2 fails the flow and its dependants are never created', async (t) => {
  const ns = await namespace('failure')
  await apply(cluster.kubectl, stringify(example((spec) => failFlow(spec, 'job2'))), ns)
  const flow = await waitForPhase(ns, 'jobflow-example', ['Succeeded', 'Failed', 'Invalid'])
  t.equal(flow.status.phase, 'Failed')
  const phases = Object.fromEntries(flow.status.jobs.map((j: any) => [j.name, j.phase]))
  t.same(phases, { job1: 'Succeeded', job2: 'Failed', job3: 'Skipped', job4: 'Succeeded', job5: 'Skipped' })
  t.match(flow.status.conditions, [
    { type: 'Valid', status: 'True' },
    { type: 'Failed', status: 'True', message: /job2/ },
  ])
  const jobs = await jobsByName(ns)
  t.same(
    [...jobs.keys()].sort(),
    ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'],
    'job3 and job5 were never created'
  )
  t.match(jobs.get('jobflow-example-job2')?.status?.conditions, [{ type: 'FailureTarget', status: 'True' }])
})

t.test('an edit that adds a dependency cycle is reported and deletes nothing', async (t) => {
  const ns = await namespace('cycle')
  // job2 never finishes on its own here, so the flow is mid-way when edited.
  await applyWithJob2Suspended(ns)
  const before = await jobsByName(ns)
  const cyclic = example((spec) => {
    suspendJob2(spec)
    spec.flows.find((f: any) => f.name === 'job1').dependencies = ['job3']
  })
  await apply(cluster.kubectl, stringify(cyclic), ns)
  const flow = await waitForPhase(ns, 'jobflow-example', ['Invalid'], 60_000)
  t.match(
    flow.status.conditions.find((c: any) => c.type === 'Valid'),
    { status: 'False', reason: 'InvalidSpec', message: /dependency cycle: job1 → job3 → job(1|2)/ }
  )
  t.equal(flow.status.observedGeneration, flow.metadata.generation)
  // Give Metacontroller time to act on the answer, then check that nothing went.
  await new Promise((resolve) => setTimeout(resolve, 5_000))
  const after = await jobsByName(ns)
  t.same([...after.keys()].sort(), [...before.keys()].sort(), 'the same Jobs')
  for (const [name, job] of before) {
    t.equal(after.get(name)?.metadata.uid, job.metadata.uid, `${name} is the same object`)
  }
  t.ok(after.size >= 3, `${after.size} Jobs kept`)
})

t.test('the CRD refuses invalid JobFlows at kubectl apply time', async (t) => {
  const ns = await namespace('rules')
  const cases: Array<[string, (spec: any) => void, RegExp]> = [
    [
      'a flow with both jobTemplate and jobTemplateRef',
      (spec) => {
        spec.flows[0].jobTemplateRef = 'x'
      },
      /set exactly one of jobTemplate and jobTemplateRef/,
    ],
    [
      'a flow with neither',
      (spec) => {
        delete spec.flows[0].jobTemplate
      },
      /set exactly one of jobTemplate and jobTemplateRef/,
    ],
    [
      'a flow that depends on itself',
      (spec) => {
        spec.flows[1].dependencies = ['job2']
      },
      /a flow cannot depend on itself/,
    ],
    [
      'two flows with one name',
      (spec) => {
        spec.flows[3].name = 'job1'
      },
      /Duplicate value/,
    ],
    [
      'an uppercase flow name',
      (spec) => {
        spec.flows[3].name = 'Job4'
        spec.flows[4].dependencies = ['Job4', 'job2']
      },
      /should match|Invalid value/,
    ],
    [
      'a script name with a slash',
      (spec) => {
        spec.scripts = { 'bin/x.sh': 'true' }
      },
      /plain file names/,
    ],
  ]
  for (const [what, mutate, message] of cases) {
    const result = await cluster.kubectl(['apply', '-n', ns, '-f', '-'], stringify(example(mutate)))
    t.not(result.code, 0, `${what} is refused`)
    t.match(result.stderr, message, what)
  }
  const none = await cluster.kubectl(['get', 'jobflows', '-n', ns, '-o', 'name'])
  t.equal(none.stdout.trim(), '', 'none of them was stored')
})

t.test(
  'a Job the flow keeps is never written by Metacontroller: its spec, labels and annotations stay as they are',
  async (t) => {
    // The hook answers a kept Job as Metacontroller last applied it (its last-applied annotation);
    // under InPlace that must change nothing, not even the resourceVersion. job2 is suspended (by its
    // own template, which the JobFlow's suspend never undoes), so it stays while
    // job1 and job4 finish and the JobFlow is synced again and again around it.
    const ns = await namespace('ondelete')
    await applyWithJob2Suspended(ns)
    // Someone else's label and annotation on the Job, which a merge of an identity would drop.
    await cluster.kubectl(['label', 'job', 'jobflow-example-job2', '-n', ns, 'e2e/owner=someone-else'])
    await cluster.kubectl(['annotate', 'job', 'jobflow-example-job2', '-n', ns, 'e2e/note=kept'])
    const job2 = async (): Promise<any> =>
      await getJson(['get', 'job', 'jobflow-example-job2', '-n', ns, '--show-managed-fields'])
    const before = await job2()
    // Who wrote what, but for the Job controller's status writes: Metacontroller (its creation) and
    // the label and annotation above.
    const writers = (job: any): any[] =>
      (job.metadata.managedFields ?? []).filter((f: any) => f.manager !== 'kube-controller-manager')
    t.ok(
      writers(before).some((f) => JSON.stringify(f.fieldsV1 ?? {}).includes('"f:spec"')),
      `its creator is on record (${writers(before)
        .map((f) => String(f.manager))
        .join(', ')})`
    )

    // More syncs: job4 finishing, and edits of the JobFlow's own metadata.
    for (let i = 0; i < 3; i++) {
      await cluster.kubectl(['annotate', '--overwrite', 'jobflow', 'jobflow-example', '-n', ns, `e2e/poke=${i}`])
    }
    await waitForStatusOf(
      getJson,
      'jobflow',
      ns,
      'jobflow-example',
      'job1 and job4 to succeed',
      (status) =>
        (status.jobs ?? []).filter((j: any) => ['job1', 'job4'].includes(j.name) && j.phase === 'Succeeded').length ===
        2,
      120_000
    )
    await new Promise((resolve) => setTimeout(resolve, 5_000))

    const after = await job2()
    t.equal(after.metadata.uid, before.metadata.uid, 'the same Job, never recreated')
    t.equal(after.metadata.generation, before.metadata.generation, 'its spec never updated')
    t.equal(
      after.metadata.resourceVersion,
      before.metadata.resourceVersion,
      'not written at all (InPlace finds nothing to change)'
    )
    t.same(after.spec, before.spec)
    t.same(after.metadata.labels, before.metadata.labels, "every label kept, ours and someone else's")
    t.same(
      after.metadata.annotations,
      before.metadata.annotations,
      "every annotation kept, Metacontroller's last-applied one too"
    )
    t.same(writers(after), writers(before), 'nobody wrote anything more to it but the Job controller')
  }
)

t.test(
  'spec.ttlSecondsAfterFinished 0: the finished JobFlow deletes itself and its Jobs go with it, each Job created once',
  async (t) => {
    const ns = await namespace('ttl')
    const watch = watchObjects(cluster, ['jobs', '-n', ns], ['.metadata.name', '.metadata.uid'])
    // The watch needs something to start on: a Job of no flow, which nothing else touches.
    await apply(
      cluster.kubectl,
      stringify({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'bystander' },
        spec: {
          suspend: true,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } },
        },
      }),
      ns
    )
    await watch.started
    await apply(
      cluster.kubectl,
      stringify(
        example((spec) => {
          spec.ttlSecondsAfterFinished = 0
        })
      ),
      ns
    )
    const gone = await waitFor(
      'the JobFlow to delete itself',
      async () => {
        const list = await getJson(['get', 'jobflows', '-n', ns])
        return list.items.length === 0 ? true : undefined
      },
      240_000,
      1_000
    )
    t.ok(gone, 'the JobFlow is gone')
    await waitFor(
      'its Jobs to be garbage-collected',
      async () => ((await jobsByName(ns)).size === 1 ? true : undefined),
      60_000,
      1_000
    )
    const events = await watch.stop()
    const added = events.filter((e) => e.type === 'ADDED' && e.fields[0] !== 'bystander').map((e) => e.fields[0] ?? '')
    t.same(
      [...added].sort(),
      [1, 2, 3, 4, 5].map((n) => `jobflow-example-job${n}`),
      'every Job created exactly once, none again while the JobFlow went'
    )
    t.same([...(await jobsByName(ns)).keys()], ['bystander'], 'only the Job of no flow is left')
  }
)

/**
 * Makes the pods of exactly one Job fail in the tier (test/e2e/kwok-stages.yaml): later attempts, named otherwise,
 * succeed.
 */
function failOnlyJob (spec: any, flow: string, jobName: string): void {
  const template = spec.flows.find((f: any) => f.name === flow).jobTemplate
  template.backoffLimit = 0
  template.template.metadata = { labels: { 'e2e-fail-job': jobName } }
}

t.test(
  'flows[].retry: job2 fails once and its second attempt, a new Job after the backoff, succeeds; both attempts are ' +
    'in status',
  async (t) => {
    const ns = await namespace('retry')
    const watch = await startFlowUntilFirstJobs(
      t,
      { cluster, getJson },
      ns,
      example((spec) => {
        failOnlyJob(spec, 'job2', 'jobflow-example-job2')
        spec.flows.find((f: any) => f.name === 'job2').retry = { limit: 2, backoffSeconds: 5 }
      })
    )
    const flow = await waitForPhase(ns, 'jobflow-example', ['Succeeded', 'Failed', 'Invalid'], 240_000)
    t.equal(flow.status.phase, 'Succeeded')
    t.equal(flow.status.jobsSucceeded, '5/5')
    const job2 = flow.status.jobs.filter((j: any) => j.name === 'job2')
    t.match(job2, [
      { jobName: 'jobflow-example-job2', phase: 'Failed', message: /BackoffLimitExceeded/ },
      { jobName: 'jobflow-example-job2-2', phase: 'Succeeded', attempt: 2 },
    ])
    t.ok(
      seconds(job2[1].startTime) >= seconds(job2[0].completionTime) + 5,
      `the second attempt started after the 5 s backoff (failed ${job2[0].completionTime as string}, started ` +
        `${job2[1].startTime as string})`
    )
    const jobs = await jobsByName(ns)
    t.match(
      jobs.get('jobflow-example-job2')?.status?.conditions,
      [{ type: 'FailureTarget', status: 'True' }],
      'the failed attempt is kept'
    )
    const events = await watch.stop()
    const added = events
      .filter((e) => e.type === 'ADDED')
      .map((e) => e.fields[0] ?? '')
      .filter((n) => n.startsWith('jobflow-example'))
    t.same(
      [...added].sort(),
      [
        'jobflow-example-job1',
        'jobflow-example-job2',
        'jobflow-example-job2-2',
        'jobflow-example-job3',
        'jobflow-example-job4',
        'jobflow-example-job5',
      ],
      'each attempt created once'
    )
  }
)

t.test(
  'jobhooks.io/rerun on a failed JobFlow reruns job2 and the flows it skipped as new Jobs, keeps the rest, and acts ' +
    'once',
  async (t) => {
    const ns = await namespace('rerun')
    await apply(cluster.kubectl, stringify(example((spec) => failOnlyJob(spec, 'job2', 'jobflow-example-job2'))), ns)
    const failed = await waitForPhase(ns, 'jobflow-example', ['Succeeded', 'Failed', 'Invalid'])
    t.equal(failed.status.phase, 'Failed')
    const before = await jobsByName(ns)
    t.same([...before.keys()].sort(), ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'])

    await cluster.kubectl(['annotate', 'jobflow', 'jobflow-example', '-n', ns, 'jobhooks.io/rerun=1'])
    const rerun = await waitFor(
      'the rerun to finish',
      async () => {
        const flow = await jobflow(ns, 'jobflow-example')
        return flow.status?.rerun?.value === '1' &&
          ['Succeeded', 'Failed'].includes(flow.status.phase) &&
          typeof flow.status.completionTime === 'string'
          ? flow
          : undefined
      },
      180_000,
      1_000
    )
    t.equal(rerun.status.phase, 'Succeeded')
    t.equal(rerun.status.jobsSucceeded, '5/5')
    t.match(rerun.status.rerun, { value: '1', message: 'rerunning job2, job3, job5' })
    t.match(rerun.status.conditions, [
      { type: 'Valid', status: 'True' },
      { type: 'Failed', status: 'False', reason: 'Rerun' },
      { type: 'Complete', status: 'True' },
    ])
    const after = await jobsByName(ns)
    t.same([...after.keys()].sort(), [
      'jobflow-example-job1',
      'jobflow-example-job2',
      'jobflow-example-job2-2',
      'jobflow-example-job3-2',
      'jobflow-example-job4',
      'jobflow-example-job5-2',
    ])
    for (const name of before.keys()) {
      t.equal(after.get(name)?.metadata.uid, before.get(name).metadata.uid, `${name} kept, not run again`)
    }

    // The same value again, on a later sync, does nothing.
    await cluster.kubectl(['annotate', '--overwrite', 'jobflow', 'jobflow-example', '-n', ns, 'e2e/poke=1'])
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    t.equal((await jobsByName(ns)).size, after.size, 'no more Jobs')
  }
)

t.test(
  'spec.suspend: the running Job is suspended through its spec.suspend alone, no new Job starts; resumed, the same ' +
    'Job goes on and the flow succeeds',
  async (t) => {
    const ns = await namespace('suspend')
    // job1 runs six pods one after the other (about 3 s each in the tier): long enough to be caught running.
    await apply(
      cluster.kubectl,
      stringify(
        example((spec) => {
          Object.assign(spec.flows.find((f: any) => f.name === 'job1').jobTemplate, { completions: 6, parallelism: 1 })
        })
      ),
      ns
    )
    const job1 = async (): Promise<any> => await getJson(['get', 'job', 'jobflow-example-job1', '-n', ns])
    await waitFor(
      'job1 to be running',
      async () => ((await job1().catch(() => undefined))?.status?.succeeded >= 1 ? true : undefined),
      120_000,
      500
    )
    const before = await job1()

    await cluster.kubectl([
      'patch',
      'jobflow',
      'jobflow-example',
      '-n',
      ns,
      '--type',
      'merge',
      '-p',
      '{"spec":{"suspend":true}}',
    ])
    const suspended = await waitFor(
      'job1 to be suspended',
      async () => {
        const job = await job1()
        return job.spec.suspend === true &&
          (job.status.conditions ?? []).some((c: any) => c.type === 'Suspended' && c.status === 'True')
          ? job
          : undefined
      },
      60_000,
      500
    )
    t.equal(suspended.metadata.uid, before.metadata.uid, 'the same Job')
    const { suspend: _, ...specAfter } = suspended.spec
    const { suspend: __, ...specBefore } = before.spec
    t.same(specAfter, specBefore, 'nothing else of its spec changed')
    t.same(suspended.metadata.labels, before.metadata.labels, 'its labels are as they were')
    t.same(suspended.metadata.ownerReferences, before.metadata.ownerReferences)
    const { 'metacontroller.k8s.io/last-applied-configuration': applied, ...annotations } =
      suspended.metadata.annotations
    const { 'metacontroller.k8s.io/last-applied-configuration': _applied, ...annotationsBefore } =
      before.metadata.annotations
    t.same(
      annotations,
      { ...annotationsBefore, 'jobhooks.io/suspended-by-jobflow': 'true' },
      "and of its annotations only the mark and Metacontroller's copy"
    )
    t.ok(applied.includes('"suspend":true'))
    const flow = await waitForStatusOf(
      getJson,
      'jobflow',
      ns,
      'jobflow-example',
      'condition Suspended',
      (status) => (status.conditions ?? []).some((c: any) => c.type === 'Suspended' && c.status === 'True'),
      60_000
    )
    t.match(
      flow.status.conditions.find((c: any) => c.type === 'Suspended'),
      { reason: 'JobFlowSuspended', message: /1 running Job suspended/ }
    )

    const jobsWhileSuspended = [...(await jobsByName(ns)).keys()].sort()
    await new Promise((resolve) => setTimeout(resolve, 8_000))
    t.same([...(await jobsByName(ns)).keys()].sort(), jobsWhileSuspended, 'no new Job while suspended')
    t.notOk(jobsWhileSuspended.includes('jobflow-example-job2'), 'job2, which waits for job1, did not start')
    t.equal((await job1()).status.active ?? 0, 0, 'job1 runs no pod')

    await cluster.kubectl([
      'patch',
      'jobflow',
      'jobflow-example',
      '-n',
      ns,
      '--type',
      'merge',
      '-p',
      '{"spec":{"suspend":false}}',
    ])
    const done = await waitForPhase(ns, 'jobflow-example', ['Succeeded', 'Failed', 'Invalid'], 240_000)
    t.equal(done.status.phase, 'Succeeded')
    t.match(
      done.status.conditions.find((c: any) => c.type === 'Suspended'),
      { status: 'False', reason: 'JobFlowResumed' }
    )
    const resumed = await job1()
    t.equal(resumed.metadata.uid, before.metadata.uid, 'job1 was resumed, not created again')
    t.equal(resumed.spec.suspend, false)
    t.equal(resumed.status.succeeded, 6, 'and ran its six pods')
    t.notOk('jobhooks.io/suspended-by-jobflow' in resumed.metadata.annotations, 'the mark is gone')
  }
)
