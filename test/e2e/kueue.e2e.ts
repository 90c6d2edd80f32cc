// JobFlow with the real Kueue (test/e2e/kueue.ts) and Metacontroller: a step's Job waits in a
// queue as its own workload, Kueue alone writes its spec.suspend after we create it, a preemption
// sends the step back to the queue without a retry, and Kubernetes' own outcomes decide. Every
// Job's history is read from a watch of the API server (each version of each Job, in order).
import t, { type Test } from 'tap'
import { stringify } from 'yaml'
import { apply, waitFor } from './cluster.js'
import { startScenarios, waitForStatusOf, watchObjects } from './scenario.js'
import { analyseJobs, jobEventFields, type JobHistory } from './kueue-history.js'

const { cluster, namespace, getJson, track } = await startScenarios(t, { kueue: true })
const skip = cluster.kueue === undefined
  ? 'needs Kueue: npm run e2e installs its own; a cluster of E2E_KUBECONFIG must have Kueue installed'
  : false
if (cluster.kueue !== undefined) t.comment(`with ${cluster.kueue}`)

const QUEUE = 'e2e-queue'
const FLAVOR = 'e2e-kueue-flavor'
const LOW = 'e2e-kueue-low'
const HIGH = 'e2e-kueue-high'
const KUEUE_API = 'kueue.x-k8s.io/v1beta2'
const sleep = async (ms: number): Promise<void> => {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

if (skip === false) {
  await apply(cluster.kubectl, [
    { apiVersion: KUEUE_API, kind: 'ResourceFlavor', metadata: { name: FLAVOR } },
    { apiVersion: KUEUE_API, kind: 'WorkloadPriorityClass', metadata: { name: LOW }, value: 100 },
    { apiVersion: KUEUE_API, kind: 'WorkloadPriorityClass', metadata: { name: HIGH }, value: 1000 },
  ].map((o) => stringify(o)).join('---\n'))
  track('resourceflavor', FLAVOR)
  track('workloadpriorityclass', LOW)
  track('workloadpriorityclass', HIGH)
}

/** A ClusterQueue of `cpu` CPUs for `ns` alone (named after it), and LocalQueue QUEUE in `ns` pointing at it. */
async function queueWithQuota (ns: string, cpu: number, preemption?: Record<string, string>): Promise<void> {
  await apply(cluster.kubectl, stringify({
    apiVersion: KUEUE_API,
    kind: 'ClusterQueue',
    metadata: { name: ns },
    spec: {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
      ...(preemption !== undefined ? { preemption } : {}),
      resourceGroups: [
        { coveredResources: ['cpu'], flavors: [{ name: FLAVOR, resources: [{ name: 'cpu', nominalQuota: cpu }] }] },
      ],
    },
  }))
  track('clusterqueue', ns)
  await apply(cluster.kubectl, stringify({
    apiVersion: KUEUE_API, kind: 'LocalQueue', metadata: { name: QUEUE }, spec: { clusterQueue: ns },
  }), ns)
  await waitFor(`LocalQueue ${ns}/${QUEUE} to be active`, async () => {
    const queue = await getJson(['get', 'localqueue', QUEUE, '-n', ns])
    return (queue.status?.conditions ?? []).some((c: any) => c.type === 'Active' && c.status === 'True')
      ? true
      : undefined
  }, 30_000)
}

/** A Job template of one pod asking for one CPU, which kwok finishes after 3 s (15 s when `slow`). */
function jobTemplate ({ slow = false, fail = false } = {}): any {
  return {
    backoffLimit: 0,
    template: {
      metadata: {
        ...(slow ? { annotations: { 'e2e.jobhooks.io/slow': 'true' } } : {}),
        ...(fail ? { labels: { 'e2e-outcome': 'fail' } } : {}),
      },
      spec: {
        ...(cluster.nodeName !== undefined ? { nodeName: cluster.nodeName } : {}),
        restartPolicy: 'Never',
        containers: [{
          name: 'main',
          image: 'busybox:1.36',
          command: ['sh', '-c', fail ? 'sleep 3; exit 1' : slow ? 'sleep 15' : 'sleep 3'],
          resources: { requests: { cpu: '1' } },
        }],
      },
    },
  }
}

function jobFlow (name: string, spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', metadata: { name }, spec })
}

/** Six independent steps, then `final` after all of them, every Job in QUEUE. */
function wideFlow (name: string): string {
  const steps = ['s1', 's2', 's3', 's4', 's5', 's6']
  return jobFlow(name, {
    queueName: QUEUE,
    flows: [
      ...steps.map((step) => ({ name: step, jobTemplate: jobTemplate() })),
      { name: 'final', dependencies: steps, jobTemplate: jobTemplate() },
    ],
  })
}

/**
 * Watches every Job of `ns` from before the scenario makes one: a suspended Job of no queue is
 * there first (a watch starts with the objects there), and is left out of the history.
 */
async function watchJobs (ns: string): Promise<{ stop: () => Promise<JobHistory> }> {
  await apply(cluster.kubectl, stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'anchor' },
    spec: {
      suspend: true,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox:1.36' }] } },
    },
  }), ns)
  const watch = watchObjects(cluster, ['jobs', '-n', ns], jobEventFields)
  t.teardown(async () => {
    await watch.stop().catch(() => {})
  })
  await watch.started
  return { stop: async () => analyseJobs((await watch.stop()).filter((e) => e.fields[0] !== 'anchor')) }
}

async function waitForJobFlow (ns: string, name: string, what: string, check: (s: any) => boolean): Promise<any> {
  return await waitForStatusOf(getJson, 'jobflow', ns, name, what, check, 120_000)
}

const finished = (s: any): boolean => ['Succeeded', 'Failed'].includes(s.phase)
const phases = (status: any): string[] => status.jobs.map((j: any) => `${String(j.name)} ${String(j.phase)}`)

/**
 * What every scenario checks of its Jobs' history: `created` are the Jobs it expects, each created
 * once; with one CPU per Job, `quota` is how many Kueue may admit at once.
 */
function checkHistory (t: Test, history: JobHistory, created: string[], quota?: number): void {
  t.same([...history.added].sort(), created.map((name) => `${name}×1`).sort(), 'each Job created once (watch: ADDED)')
  if (quota !== undefined) {
    t.ok(history.maxAdmitted <= quota, `never more than ${quota} admitted at once (saw ${history.maxAdmitted})`)
  }
  t.same(history.suspendProblems, [], 'spec.suspend written only at creation and then by Kueue (managedFields)')
  t.comment(`field managers of spec.suspend: ${history.suspendManagers.join(', ')}`)
}

t.test('6 independent steps and a final one in a queue with quota for 2: at most 2 admitted, all Succeed', { skip },
  async (t) => {
    const ns = await namespace('kueue-quota')
    await queueWithQuota(ns, 2)
    const watch = await watchJobs(ns)
    await apply(cluster.kubectl, wideFlow('wide'), ns)
    const done = await waitForJobFlow(ns, 'wide', 'finished', finished)
    await sleep(3_000)
    const history = await watch.stop()
    t.equal(done.status.phase, 'Succeeded', 'the JobFlow Succeeded')
    t.same(phases(done.status), ['s1', 's2', 's3', 's4', 's5', 's6', 'final'].map((s) => `${s} Succeeded`))
    checkHistory(t, history, ['s1', 's2', 's3', 's4', 's5', 's6', 'final'].map((s) => `wide-${s}`), 2)
    t.equal(history.maxAdmitted, 2, 'the quota was used: 2 Jobs ran at once')
  })

t.test('the same flow suspended and resumed while steps wait in the queue: no Job unsuspended by us', { skip },
  async (t) => {
    const ns = await namespace('kueue-suspend')
    await queueWithQuota(ns, 2)
    const watch = await watchJobs(ns)
    await apply(cluster.kubectl, wideFlow('paused'), ns)
    await waitForJobFlow(ns, 'paused', 'steps waiting in the queue', (s) => (s.jobsQueued ?? 0) > 0)
    await cluster.kubectl(['patch', 'jobflow', 'paused', '-n', ns, '--type=merge', '-p', '{"spec":{"suspend":true}}'])
    const suspended = await waitForJobFlow(ns, 'paused', 'Suspended', (s) =>
      (s.conditions ?? []).some((c: any) => c.type === 'Suspended' && c.status === 'True'))
    t.ok(suspended.status.jobsQueued > 0, `steps waited in the queue when the flow was suspended (${String(
      suspended.status.jobsQueued)}: ${phases(suspended.status).join(', ')})`)
    await sleep(8_000)
    await cluster.kubectl(['patch', 'jobflow', 'paused', '-n', ns, '--type=merge', '-p', '{"spec":{"suspend":false}}'])
    const done = await waitForJobFlow(ns, 'paused', 'finished', finished)
    await sleep(3_000)
    const history = await watch.stop()
    t.equal(done.status.phase, 'Succeeded', 'the JobFlow Succeeded after it was resumed')
    checkHistory(t, history, ['s1', 's2', 's3', 's4', 's5', 's6', 'final'].map((s) => `paused-${s}`), 2)
    const marked = (await getJson(['get', 'jobs', '-n', ns])).items
      .filter((j: any) => j.metadata.annotations?.['jobhooks.io/suspended-by-jobflow'] !== undefined)
      .map((j: any) => j.metadata.name)
    t.same(marked, [], 'no Job carries our suspended-by-jobflow mark')
  })

t.test('a preemption: the step goes back to the queue, the flow shows it, no retry, it finishes after re-admission',
  { skip }, async (t) => {
    const ns = await namespace('kueue-preempt')
    await queueWithQuota(ns, 1, { withinClusterQueue: 'LowerPriority' })
    const watch = await watchJobs(ns)
    await apply(cluster.kubectl, jobFlow('low', {
      queueName: QUEUE,
      priorityClassName: LOW,
      flows: [
        { name: 'long', jobTemplate: jobTemplate({ slow: true }), retry: { limit: 2, backoffSeconds: 1 } },
        { name: 'next', dependencies: ['long'], jobTemplate: jobTemplate() },
      ],
    }), ns)
    await waitForJobFlow(ns, 'low', 'step long running', (s) => s.jobs?.[0]?.phase === 'Running')
    const urgent = jobTemplate({ slow: true })
    urgent.template.metadata.labels = { 'kueue.x-k8s.io/queue-name': QUEUE, 'kueue.x-k8s.io/priority-class': HIGH }
    await apply(cluster.kubectl, stringify({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'urgent', labels: urgent.template.metadata.labels },
      spec: { ...urgent, suspend: true },
    }), ns)
    const preempted = await waitForJobFlow(ns, 'low', 'step long preempted', (s) =>
      s.jobs?.[0]?.phase === 'Queued' && String(s.jobs[0].message).startsWith('preempted'))
    t.match(preempted.status.jobs[0], { name: 'long', jobName: 'low-long', phase: 'Queued' }, 'its record: Queued')
    t.comment(`the record: ${JSON.stringify(preempted.status.jobs[0])}`)
    t.equal(preempted.status.jobsQueued, 1, 'jobsQueued counts it')
    const done = await waitForJobFlow(ns, 'low', 'finished', finished)
    await sleep(3_000)
    const history = await watch.stop()
    t.equal(done.status.phase, 'Succeeded', 'the JobFlow Succeeded after re-admission')
    t.same(phases(done.status), ['long Succeeded', 'next Succeeded'], 'one record per step: no retry attempt')
    t.equal(done.status.jobs[0].attempt, undefined, 'the record of long is still its first attempt')
    t.ok((history.suspendedByKueue.get('low-long') ?? 0) >= 1, 'Kueue suspended low-long again')
    checkHistory(t, history, ['low-long', 'low-next', 'urgent'], 1)
  })

t.test('Kubernetes decides outcomes: a FailJob rule is final despite retry; a successPolicy lets the dependant start ' +
  'before Complete', { skip }, async (t) => {
  const ns = await namespace('kueue-outcomes')
  // Room for every Job at once (the Indexed one takes 2): the dependant waits for its dependency only.
  await queueWithQuota(ns, 4)
  const watch = await watchJobs(ns)
  const breaks = jobTemplate({ fail: true })
  breaks.backoffLimit = 3
  breaks.podFailurePolicy = {
    rules: [{ action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [1] } }],
  }
  const indexed = jobTemplate()
  Object.assign(indexed, {
    completionMode: 'Indexed',
    completions: 2,
    parallelism: 2,
    successPolicy: { rules: [{ succeededIndexes: '0' }] },
  })
  // Index 1 runs on until the Job controller deletes it (kwok: held by the annotation, then 10 s terminating).
  indexed.template.metadata = { annotations: { 'e2e.jobhooks.io/hold-index': '1' } }
  indexed.template.spec.containers[0].command = ['sh', '-c', '[ "$JOB_COMPLETION_INDEX" = 1 ] && sleep 60; sleep 3']
  const retry = { limit: 2, backoffSeconds: 1 }
  await apply(cluster.kubectl, [
    jobFlow('final', { queueName: QUEUE, flows: [{ name: 'breaks', jobTemplate: breaks, retry }] }),
    jobFlow('early', {
      queueName: QUEUE,
      flows: [
        { name: 'indexed', jobTemplate: indexed },
        { name: 'after', dependencies: ['indexed'], jobTemplate: jobTemplate() },
      ],
    }),
  ].join('---\n'), ns)
  const failed = await waitForJobFlow(ns, 'final', 'finished', finished)
  const early = await waitForJobFlow(ns, 'early', 'finished', finished)
  // Its held pod goes 10 s after the Job controller deleted it; only then is the Job Complete.
  await waitFor('early-indexed to be Complete', async () => {
    const conditions = (await getJson(['get', 'job', 'early-indexed', '-n', ns])).status?.conditions ?? []
    return conditions.some((c: any) => c.type === 'Complete' && c.status === 'True') ? true : undefined
  }, 60_000)
  await sleep(2_000)
  const history = await watch.stop()

  const job = await getJson(['get', 'job', 'final-breaks', '-n', ns])
  const failedCondition = (job.status.conditions ?? []).find((c: any) => c.type === 'Failed')
  t.match(failedCondition, { status: 'True', reason: 'PodFailurePolicy' }, 'the Job Failed by its podFailurePolicy')
  t.equal(failed.status.phase, 'Failed', 'the JobFlow Failed')
  t.same(phases(failed.status), ['breaks Failed'], 'one record: no retry attempt')
  t.match(failed.status.jobs[0].message, /final/, `the record says why: ${String(failed.status.jobs[0].message)}`)

  t.equal(early.status.phase, 'Succeeded', 'the successPolicy flow Succeeded')
  const order = history.order.filter((e) => e === 'ADDED early-after' || e.startsWith('early-indexed '))
  t.comment(`early-indexed and early-after, in the API server's order: ${order.join(', ')}`)
  const afterAdded = order.indexOf('ADDED early-after')
  const complete = order.indexOf('early-indexed Complete')
  const met = order.indexOf('early-indexed SuccessCriteriaMet')
  t.ok(met >= 0 && afterAdded > met, 'the dependant was created after SuccessCriteriaMet...')
  t.ok(complete > afterAdded, '...and before the Job was Complete')
  checkHistory(t, history, ['final-breaks', 'early-indexed', 'early-after'])
})
