// `kubectl jobhooks` against the real thing (bin/kubectl-jobhooks.mjs, as kubectl runs it from the
// PATH): get draws a running JobFlow, --watch redraws it on change, suspend and resume reach the
// hooks (the Suspended condition), rerun is refused while it runs and reruns it once it failed.
// kwok pods run no container and have no log: `logs` finds the step's pod by its Job's label,
// and the API server's answer for its log is an error, which the plugin passes on (exit 1).
import t from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { apply, ROOT, run, waitFor } from './cluster.js'
import { jobFlowExample, slowFailingFlow, startScenarios, waitForStatusOf } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)
const PLUGIN = join(ROOT, 'bin', 'kubectl-jobhooks.mjs')

type Ran = Awaited<ReturnType<typeof run>>
const plugin = async (ns: string, ...args: string[]): Promise<Ran> =>
  await run(process.execPath, [PLUGIN, ...args, '-n', ns, '--kubeconfig', cluster.kubeconfig])

const condition = (status: any, type: string): any => (status.conditions ?? []).find((c: any) => c.type === type)

t.test('get, watch, suspend, resume, rerun and logs of a running JobFlow', async t => {
  const ns = await namespace('plugin')
  // The first run of the bin builds what changed since `npm run build` (its own stamp): not while job1 runs.
  const help = await plugin(ns, '--help')
  t.equal(help.code, 0, help.stderr)
  const flow = slowFailingFlow(cluster)
  await apply(cluster.kubectl, JSON.stringify(flow), ns)
  await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'job1 running',
    s => (s.jobs ?? []).some((r: any) => r.name === 'job1' && r.phase === 'Running'), 60_000)

  // A watch drawn once, then again when suspend changes the status; `get` beside it.
  const watch = spawn(process.execPath, [PLUGIN, 'get', 'jf', 'jobflow-example', '-w', '-n', ns,
    '--kubeconfig', cluster.kubeconfig], { stdio: ['ignore', 'pipe', 'pipe'] })
  let watched = ''
  watch.stdout.on('data', (chunk: Buffer) => { watched += chunk.toString('utf8') })
  const exited = new Promise<number | null>(resolve => watch.on('exit', code => resolve(code)))
  const tree = await plugin(ns, 'get', 'jf', 'jobflow-example')
  await waitFor('the first drawing', async () => watched.includes('STEP') ? true : undefined, 30_000, 100)
  t.same(await plugin(ns, 'suspend', 'jf', 'jobflow-example'),
    { code: 0, stdout: 'jobflow.jobhooks.io/jobflow-example suspended\n', stderr: '' })

  t.equal(tree.code, 0, tree.stderr)
  t.match(tree.stdout, /^Name: +jobflow-example\nNamespace: +e2e-plugin-/)
  // Drawn while job1 runs, or just after on a loaded machine (it runs 15 s): the tree's shape is the point.
  t.match(tree.stdout, /\njob1 +- +(Running|Succeeded) +1 +jobflow-example-job1 /, 'job1 at the root')
  t.match(tree.stdout, /\n {4}job3 +job1, job2 +Pending /, 'job3 two levels in, waiting')
  t.comment(`kubectl jobhooks get jf jobflow-example\n${tree.stdout.replaceAll(ns, '<ns>')}`)

  await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'Suspended',
    s => condition(s, 'Suspended')?.status === 'True', 60_000)
  await waitFor('a drawing after the change', async () =>
    /Suspended: +spec\.suspend is true/.test(watched) ? true : undefined, 30_000, 100)
  watch.kill('SIGINT')
  t.equal(await exited, 0, 'the watch ends quietly on Ctrl-C')
  t.ok(watched.split('Name:').length > 2, 'piped: drawings appended one after the other')

  // Suspended, the flow has not finished: a rerun would be used up for nothing.
  const refused = await plugin(ns, 'rerun', 'jf', 'jobflow-example')
  t.same([refused.code, refused.stdout], [1, ''], 'no rerun while it runs')
  t.match(refused.stderr, /is (Running|Pending): a rerun acts on a finished JobFlow only/)

  t.same(await plugin(ns, 'resume', 'jf', 'jobflow-example'),
    { code: 0, stdout: 'jobflow.jobhooks.io/jobflow-example resumed\n', stderr: '' })
  await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'resumed',
    s => condition(s, 'Suspended')?.reason === 'JobFlowResumed', 60_000)

  await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'Failed', s => s.phase === 'Failed', 180_000)
  const rerun = await plugin(ns, 'rerun', 'jf', 'jobflow-example')
  t.equal(rerun.code, 0, rerun.stderr)
  const value = /jobhooks\.io\/rerun=(\S+)\)/.exec(rerun.stdout)?.[1]
  const again = await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'job2 rerun',
    s => (s.jobs ?? []).some((r: any) => r.name === 'job2' && r.attempt === 2), 60_000)
  t.equal(again.metadata.annotations['jobhooks.io/rerun'], value, 'the annotation the plugin set')
  t.match(again.status.rerun, { value }, 'the hook saw it')

  const logs = await plugin(ns, 'logs', 'jf', 'jobflow-example', 'job1')
  t.comment(`kubectl jobhooks logs jf jobflow-example job1 (a kwok pod): exit ${logs.code}\n${logs.stderr}`)
  // The API server asks the pod's node for the log, and a kwok node has no kubelet to answer.
  t.ok(logs.code === 1 ? /^(Error from server|Unable to connect)/.test(logs.stderr) : logs.stdout === '',
    'kwok pods have no log: the API server\'s error passed on (exit 1), or nothing')
  const pods = await getJson(['get', 'pods', '-n', ns, '-l', 'batch.kubernetes.io/job-name=jobflow-example-job1'])
  t.ok(pods.items.length > 0, 'the step has a pod, found by the same label')
})

t.test('approve: the waiting approval step goes on; a second approver is told it was done', async t => {
  const ns = await namespace('approve')
  const flow = jobFlowExample(cluster, spec => {
    // job1 → gate (a person) → job2: the rest of the example's steps are left out.
    spec.flows = [spec.flows[0], { name: 'gate', dependencies: ['job1'], approval: {} },
      { ...spec.flows[1], dependencies: ['gate'] }]
  })
  await apply(cluster.kubectl, JSON.stringify(flow), ns)
  const waiting = await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'gate waiting',
    s => (s.jobs ?? []).some((r: any) => r.name === 'gate' && /^waiting for approval since /.test(r.message ?? '')),
    60_000)
  t.match(waiting.status.jobs.find((r: any) => r.name === 'gate').message,
    `kubectl jobhooks approve jf jobflow-example gate -n ${ns}`, 'the record says how to approve')
  t.same(await plugin(ns, 'approve', 'jf', 'jobflow-example', 'gate'), {
    code: 0, stdout: 'jobflow.jobhooks.io/jobflow-example approved: gate (jobhooks.io/approve=gate)\n', stderr: ''
  })
  const done = await waitForStatusOf(getJson, 'jobflow', ns, 'jobflow-example', 'Succeeded',
    s => s.phase === 'Succeeded', 120_000)
  t.match(done.status.jobs.map((r: any) => [r.name, r.phase]), [['job1', 'Succeeded'], ['gate', 'Succeeded'],
    ['job2', 'Succeeded']])
  t.same(await plugin(ns, 'approve', 'jf', 'jobflow-example', 'gate'),
    { code: 0, stdout: 'jobflow.jobhooks.io/jobflow-example already approved: gate\n', stderr: '' })
})

t.test('submit --from: a JobFlowTemplate runs as a JobFlow of its own, and as a group of another', async t => {
  const ns = await namespace('submit')
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'sleep 3'] }]
  const job = (name: string, extra: object = {}): object =>
    ({ name, ...extra, jobTemplate: { template: { spec: { containers } } } })
  const template = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlowTemplate',
    metadata: { name: 'checks' },
    spec: { arguments: [{ name: 'suite' }], flows: [job('unit'), job('report', { dependencies: ['unit'] })] }
  }
  await apply(cluster.kubectl, JSON.stringify(template), ns)
  t.same(await plugin(ns, 'submit', '--from', 'jft/checks', '-p', 'suite=full', '--name', 'checks-1'),
    { code: 0, stdout: 'jobflow.jobhooks.io/checks-1 created\n', stderr: '' })
  const succeeded = (s: any): boolean => s.phase === 'Succeeded'
  const alone = await waitForStatusOf(getJson, 'jobflow', ns, 'checks-1', 'Succeeded', succeeded, 120_000)
  t.match(alone.spec.arguments, [{ name: 'suite', value: 'full' }])
  t.match(alone.status.jobs.map((r: any) => r.jobName), ['checks-1-unit', 'checks-1-report'])

  const grouped = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'grouped' },
    spec: { flows: [{ name: 'ci', flowTemplateRef: { name: 'checks', arguments: [{ name: 'suite', value: 'go' }] } }] }
  }
  await apply(cluster.kubectl, JSON.stringify(grouped), ns)
  const done = await waitForStatusOf(getJson, 'jobflow', ns, 'grouped', 'Succeeded', succeeded, 120_000)
  t.match(done.status.jobs.map((r: any) => [r.name, r.phase]),
    [['ci', 'Succeeded'], ['ci.unit', 'Succeeded'], ['ci.report', 'Succeeded']], 'a group and its steps, for real')
  const pins = await getJson(['get', 'configmaps', '-n', ns, '-l', 'jobhooks.io/pinned=jobflowtemplates'])
  t.same(pins.items.map((c: any) => Object.keys(c.data)), [['checks']], 'the template is pinned in a ConfigMap')
})
