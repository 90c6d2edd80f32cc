// DaemonJob against the real thing: kwok Nodes (some excluded, cordoned or tainted), the API
// server with our CRD and its rules, the scheduler placing each Job's pod on its node through
// the required node affinity, and Metacontroller v4.17.2 calling our service with v2 hooks: the
// customize hook asks for every Node, and Metacontroller sends the cluster-scoped Nodes to the
// namespaced DaemonJob as related objects, and syncs it again when a Node changes. Everything
// asserted is read back from the API server.
import t, { type Test } from 'tap'
import { stringify } from 'yaml'
import { addKwokNode, apply } from './cluster.js'
import {
  daemonJobExample,
  SPOT_TAINT,
  startScenarios,
  waitForStatusOf,
  watchObjects,
  type WatchEvent,
} from './scenario.js'

const { cluster, namespace, getJson, track } = await startScenarios(t)
const ownCluster = cluster.nodeName !== undefined

const NODE_LABEL = 'jobhooks.io/node'
const SPOT = SPOT_TAINT
const example = daemonJobExample

/** A kwok Node with the taints, cordon and labels given, deleted at the end. */
async function addNode (
  name: string,
  spec: Record<string, unknown> = {},
  labels: Record<string, string> = {}
): Promise<void> {
  track('node', name)
  await addKwokNode(cluster.kubectl, name, spec, labels)
}

async function daemonJob (ns: string, name: string): Promise<any> {
  return await getJson(['get', 'daemonjob', name, '-n', ns])
}

async function jobsIn (ns: string): Promise<any[]> {
  return (await getJson(['get', 'jobs', '-n', ns])).items
}

/** Waits until the DaemonJob's status passes `check`; a timeout names the last status seen. */
async function waitForStatus (
  ns: string,
  name: string,
  what: string,
  check: (status: any) => boolean,
  timeoutMs = 180_000
): Promise<any> {
  return await waitForStatusOf(getJson, 'daemonjob', ns, name, what, check, timeoutMs)
}

const finished = (status: any): boolean => ['Succeeded', 'Failed', 'Invalid'].includes(status.phase)

/** `phase desired/active/succeeded/failed`, the part of a status the samples follow. */
const counts = (status: any): string =>
  `${String(status?.phase)} ` +
    `${String(status?.desired)}/${String(status?.active)}/${String(status?.succeeded)}/${String(status?.failed)}`

/**
 * Samples the DaemonJob's status about four times a second until `stop()`: the distinct
 * `show(status)` seen (`counts` unless told), in order (a poll: a status that lasts less than a
 * round trip can slip by).
 */
function sampleStatus (
  ns: string,
  name: string,
  show: (status: any) => string = counts
): { stop: () => Promise<string[]> } {
  let running = true
  const seen: string[] = []
  const loop = (async () => {
    while (running) {
      try {
        const status = (await daemonJob(ns, name)).status
        if (status !== undefined && seen[seen.length - 1] !== show(status)) seen.push(show(status))
      } catch {
        // Not there yet, or a failed read: no sample.
      }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return seen
    },
  }
}

/** What every sampled status must keep: the counts add up, and the phase only moves forward. */
function checkSamples (t: Test, seen: string[], end: 'Succeeded' | 'Failed'): void {
  t.comment(`statuses as sampled (phase desired/active/succeeded/failed):\n${seen.join('\n')}`)
  const order = ['Pending', 'Running', end]
  let at = 0
  for (const sample of seen) {
    const [phase, numbers] = sample.split(' ') as [string, string]
    const [desired, active, succeeded, failed] = numbers.split('/').map(Number) as [number, number, number, number]
    t.equal(desired, active + succeeded + failed, `desired = active + succeeded + failed in "${sample}"`)
    const index = order.indexOf(phase)
    t.ok(index >= at, `"${sample}": the phase is one of ${order.slice(at).join(', ')}`)
    at = Math.max(at, index)
  }
  t.ok(
    seen.some((s) => /^Running \d+\/[1-9]/.test(s)),
    'the DaemonJob was seen Running with active Jobs'
  )
}

/** The node a Job is pinned to by its required node affinity (the last matchFields pin). */
function pinnedNode (job: any): string | undefined {
  const terms: any[] =
    job.spec.template.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ??
    []
  const pins = terms.map(
    (term) =>
      (term.matchFields ?? []).filter((r: any) => r.key === 'metadata.name' && r.operator === 'In').at(-1)?.values
  )
  return pins.length > 0 && pins.every((values) => values?.length === 1 && values[0] === pins[0]?.[0])
    ? pins[0]?.[0]
    : undefined
}

/** Checks every Job of `ns` against the nodes that should have one, and that each really ran. */
async function checkJobs (
  t: Test,
  ns: string,
  name: string,
  expected: string[],
  outcome: 'SuccessCriteriaMet' | 'Failed'
): Promise<void> {
  const jobs = await jobsIn(ns)
  t.equal(
    jobs.length,
    expected.length,
    `one Job per eligible node: ${jobs.map((j) => String(j.metadata.name)).join(', ')}`
  )
  const byNode = new Map(jobs.map((j: any) => [j.metadata.labels[NODE_LABEL], j]))
  t.same([...byNode.keys()].sort(), expected, 'Jobs exist only for the eligible nodes')
  for (const [node, job] of byNode) {
    t.equal(job.metadata.name, `${name}-${String(node)}`, `${String(node)}'s Job is named <daemonjob>-<node>`)
    t.match(
      job.metadata.labels,
      { 'jobhooks.io/daemonjob': name },
      `${String(job.metadata.name)} is labelled with its DaemonJob`
    )
    t.match(
      job.metadata.ownerReferences,
      [{ kind: 'DaemonJob', name, controller: true }],
      `${String(job.metadata.name)} is owned by the DaemonJob`
    )
    t.equal(
      pinnedNode(job),
      node,
      `${String(job.metadata.name)} is pinned to ${String(node)} by required node affinity`
    )
    t.notOk(job.spec.template.spec.nodeName, `${String(job.metadata.name)} does not bypass the scheduler with nodeName`)
    t.match(
      (job.status.conditions ?? []).find((c: any) => c.type === outcome),
      { status: 'True' },
      `${String(node)}'s Job really ran (${outcome})`
    )
    const pods = (await getJson(['get', 'pods', '-n', ns, '-l', `job-name=${String(job.metadata.name)}`])).items
    t.ok(
      pods.length > 0 && pods.every((p: any) => p.spec.nodeName === node),
      `the scheduler put ${String(job.metadata.name)}'s pod on ${String(node)}`
    )
  }
}

/**
 * The conditions that give a Job's verdict: from the first of them on it no longer runs, for the
 * DaemonJob too (src/k8s/jobs.ts; docs/daemonjob.md, "Outcomes"). Kubernetes writes
 * SuccessCriteriaMet or FailureTarget first, Complete or Failed once the pods are gone: a next
 * Job may rightly come between the two.
 */
const VERDICTS = ['SuccessCriteriaMet', 'Complete', 'FailureTarget', 'Failed']

/**
 * A watch of the Jobs of `ns`, started before the DaemonJob is applied, with each event's Job
 * name and True conditions; stopped at the end of the test if the caller has not stopped it.
 * It has nothing to start on until the first Job: `started` resolves with that Job's ADDED.
 */
function watchJobs (t: Test, ns: string): ReturnType<typeof watchObjects> {
  const watch = watchObjects(
    cluster,
    ['jobs', '-n', ns],
    ['.metadata.name', '.status.conditions[?(@.status=="True")].type']
  )
  void watch.started.catch(() => {})
  t.teardown(async () => {
    await watch.stop().catch(() => {})
  })
  return watch
}

const hasVerdict = (event: WatchEvent, verdicts = VERDICTS): boolean =>
  (event.fields[1] ?? '').split(/\s+/).some((type) => verdicts.includes(type))

/**
 * Replays the watch's events in the API server's order: the most Jobs that existed at once
 * without one of `verdicts`, and a line per event for the log (ms since the first event).
 */
function mostRunning (events: WatchEvent[], verdicts = VERDICTS): { most: number, log: string[] } {
  const running = new Set<string>()
  let most = 0
  const log: string[] = []
  for (const event of events) {
    const [name = '', conditions = ''] = event.fields
    if (event.type === 'DELETED' || hasVerdict(event, verdicts)) running.delete(name)
    else running.add(name)
    most = Math.max(most, running.size)
    const at = event.at - (events[0]?.at ?? event.at)
    log.push(`+${at}ms ${event.type} ${name} [${conditions}] running: ${[...running].join(' ')}`)
  }
  return { most, log }
}

t.test('one Job per eligible node; excluded, cordoned and tainted nodes get none; Succeeded', async (t) => {
  // The tier's node kwok-node-0 is eligible; of these, kwok-dj-1, kwok-dj-5 (a tolerated taint)
  // and kwok-dj-6 (PreferNoSchedule does not matter) are too.
  if (ownCluster) {
    await addNode('kwok-dj-1')
    await addNode('kwok-dj-2')
    await addNode('kwok-dj-3', { taints: [{ key: 'e2e/dedicated', value: 'gpu', effect: 'NoSchedule' }] })
    await addNode('kwok-dj-4', { unschedulable: true })
    await addNode('kwok-dj-5', { taints: [SPOT] })
    await addNode('kwok-dj-6', { taints: [{ key: 'e2e/prefer', value: 'elsewhere', effect: 'PreferNoSchedule' }] })
  }
  const all = (await getJson(['get', 'nodes'])).items.map((n: any) => n.metadata.name as string).sort()
  const excludedNode = ownCluster ? 'kwok-dj-2' : String(all[0])
  const ns = await namespace('daemonjob')
  const samples = sampleStatus(ns, 'daemonjob-example')
  t.teardown(async () => {
    await samples.stop()
  })
  await apply(cluster.kubectl, stringify(example(`${excludedNode} , no-such-node`)), ns)
  const dj = await waitForStatus(ns, 'daemonjob-example', 'finished', finished)
  const seen = await samples.stop()

  t.equal(
    dj.status.phase,
    'Succeeded',
    `phase Succeeded${dj.status.message !== undefined ? ` (message: ${String(dj.status.message)})` : ''}`
  )
  t.equal(dj.status.observedGeneration, dj.metadata.generation, 'Metacontroller wrote the status')
  t.match(dj.status.conditions, [{ type: 'Valid', status: 'True' }], 'condition Valid')
  const expected = ownCluster
    ? ['kwok-dj-1', 'kwok-dj-5', 'kwok-dj-6', String(cluster.nodeName)].sort()
    : [...dj.status.succeededNodes].sort()
  t.ok(expected.length > 0, `the Nodes arrived as related objects: ${expected.join(', ')} got a Job`)
  t.match(
    dj.status,
    { desired: expected.length, active: 0, succeeded: expected.length, failed: 0, failedNodes: [] },
    `status counts ${expected.length} desired, all succeeded`
  )
  t.same(dj.status.succeededNodes, expected, 'status.succeededNodes names every eligible node')
  t.match(
    dj.status.conditions.find((c: any) => c.type === 'Complete'),
    { status: 'True', reason: 'AllNodesSucceeded' },
    'condition Complete'
  )
  t.ok(
    typeof dj.status.startTime === 'string' && typeof dj.status.completionTime === 'string',
    'startTime and completionTime are set'
  )
  t.notOk(dj.status.message, 'no message once finished')
  checkSamples(t, seen, 'Succeeded')

  await checkJobs(t, ns, 'daemonjob-example', expected, 'SuccessCriteriaMet')
  const nodes = new Set((await jobsIn(ns)).map((j: any) => j.metadata.labels[NODE_LABEL]))
  t.notOk(nodes.has(excludedNode), `the excluded node ${excludedNode} has none`)
  if (ownCluster) {
    t.notOk(nodes.has('kwok-dj-3'), 'the node with an untolerated NoSchedule taint has none')
    t.notOk(nodes.has('kwok-dj-4'), 'the cordoned node has none')
  }

  const table = await cluster.kubectl(['get', 'daemonjobs', '-n', ns])
  t.match(
    table.stdout,
    /^NAME\s+STATUS\s+DESIRED\s+ACTIVE\s+QUEUED\s+SUCCEEDED\s+FAILED\s+AGE\s*\n/,
    'kubectl get daemonjobs shows the columns'
  )
  t.match(
    table.stdout,
    // QUEUED is empty: no Job waits for Kueue.
    new RegExp(`\\ndaemonjob-example\\s+Succeeded\\s+${expected.length}\\s+0\\s+${expected.length}\\s+0\\s`),
    "and the DaemonJob's values"
  )

  if (ownCluster) {
    await addNode('kwok-dj-7')
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    t.notOk(
      (await jobsIn(ns)).some((j: any) => j.metadata.labels[NODE_LABEL] === 'kwok-dj-7'),
      'a node added after the end gets no Job'
    )
    t.match(
      (await daemonJob(ns, 'daemonjob-example')).status,
      { phase: 'Succeeded', desired: expected.length },
      'the DaemonJob stays Succeeded with the same nodes'
    )
  }
})

t.test(
  'no eligible node: Pending with the reason for each node, until an uncordoned node gets its Job',
  { skip: ownCluster ? false : "needs the tier's own kwok nodes" },
  async (t) => {
    const pool = { 'e2e/pool': 'late' }
    await addNode('kwok-late-1', { unschedulable: true }, pool)
    await addNode('kwok-late-2', { taints: [{ key: 'e2e/maintenance', value: 'true', effect: 'NoExecute' }] }, pool)
    const ns = await namespace('dj-late')
    await apply(
      cluster.kubectl,
      stringify(
        example(
          '',
          (spec) => {
            spec.template.spec.nodeSelector = pool
          },
          'daemonjob-late'
        )
      ),
      ns
    )

    const pending = await waitForStatus(
      ns,
      'daemonjob-late',
      'Pending because no node is eligible',
      (s) => s.phase === 'Pending' && /no eligible node/.test(s.message ?? ''),
      60_000
    )
    t.match(
      pending.status,
      { phase: 'Pending', desired: 0, active: 0, succeeded: 0, failed: 0 },
      'Pending, nothing desired'
    )
    const message = String(pending.status.message)
    t.match(
      message,
      /^no eligible node among 2: /,
      "the message counts the two Nodes of the pool: customize asked Metacontroller for the nodeSelector's Nodes only"
    )
    t.match(message, 'kwok-late-1: cordoned (spec.unschedulable)', 'the cordoned node is named with its reason')
    t.match(
      message,
      'kwok-late-2: taint e2e/maintenance=true:NoExecute is not tolerated',
      'the tainted node is named with its reason'
    )
    t.notMatch(message, String(cluster.nodeName), 'a node outside the pool was never sent')
    t.match(message, /; waiting for nodes$/, 'the message says it waits')
    t.same(await jobsIn(ns), [], 'no Job while no node is eligible')
    t.notOk(pending.status.startTime, 'not started')

    // A Node change reaches the DaemonJob through Metacontroller's Node informer: a new sync.
    const uncordoned = await cluster.kubectl(['uncordon', 'kwok-late-1'])
    t.equal(uncordoned.code, 0, `kubectl uncordon kwok-late-1: ${uncordoned.stderr}`)
    const dj = await waitForStatus(ns, 'daemonjob-late', 'finished after kwok-late-1 was uncordoned', finished, 120_000)
    t.match(
      dj.status,
      {
        phase: 'Succeeded',
        desired: 1,
        active: 0,
        succeeded: 1,
        failed: 0,
        succeededNodes: ['kwok-late-1'],
        failedNodes: [],
      },
      'Succeeded on kwok-late-1 alone'
    )
    t.notOk(dj.status.message, 'no message once finished')
    await checkJobs(t, ns, 'daemonjob-late', ['kwok-late-1'], 'SuccessCriteriaMet')
  }
)

t.test(
  "Jobs that fail: Failed, with each node's failure remembered",
  { skip: ownCluster ? false : "needs the tier's own kwok nodes" },
  async (t) => {
    const pool = { 'e2e/pool': 'fail' }
    await addNode('kwok-fail-1', {}, pool)
    await addNode('kwok-fail-2', {}, pool)
    const ns = await namespace('dj-fail')
    const samples = sampleStatus(ns, 'daemonjob-fail')
    t.teardown(async () => {
      await samples.stop()
    })
    await apply(
      cluster.kubectl,
      stringify(
        example(
          '',
          (spec) => {
            spec.backoffLimit = 0
            // Both nodes run to their own failure: FailFast, the default, would stop the second.
            spec.failurePolicy = 'Continue'
            spec.template.metadata = { labels: { 'e2e-outcome': 'fail' } }
            spec.template.spec.restartPolicy = 'Never'
            spec.template.spec.nodeSelector = pool
            spec.template.spec.containers[0].command = ['sh', '-c', 'exit 1']
          },
          'daemonjob-fail'
        )
      ),
      ns
    )
    const dj = await waitForStatus(ns, 'daemonjob-fail', 'finished', finished)
    const seen = await samples.stop()

    t.match(
      dj.status,
      { phase: 'Failed', desired: 2, active: 0, succeeded: 0, failed: 2, succeededNodes: [] },
      'Failed, both nodes counted as failed'
    )
    t.match(
      dj.status.failedNodes,
      [
        {
          name: 'kwok-fail-1',
          jobName: 'daemonjob-fail-kwok-fail-1',
          message: /BackoffLimitExceeded/,
          completionTime: /./,
        },
        {
          name: 'kwok-fail-2',
          jobName: 'daemonjob-fail-kwok-fail-2',
          message: /BackoffLimitExceeded/,
          completionTime: /./,
        },
      ],
      "status.failedNodes names each node, its Job and the Job's failure"
    )
    t.equal(dj.status.failedNodes.length, 2, 'two failed nodes, no more')
    t.match(
      dj.status.conditions.find((c: any) => c.type === 'Failed'),
      { status: 'True', reason: 'NodeJobFailed', message: /^the Jobs of 2 of 2 nodes failed: / },
      'condition Failed'
    )
    checkSamples(t, seen, 'Failed')
    await checkJobs(t, ns, 'daemonjob-fail', ['kwok-fail-1', 'kwok-fail-2'], 'Failed')

    // A finished Job that disappears is not run again: its failure is remembered.
    const deleted = await cluster.kubectl(['delete', 'job', 'daemonjob-fail-kwok-fail-1', '-n', ns, '--wait=true'])
    t.equal(deleted.code, 0, `kubectl delete job daemonjob-fail-kwok-fail-1: ${deleted.stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    t.same(
      (await jobsIn(ns)).map((j: any) => j.metadata.name),
      ['daemonjob-fail-kwok-fail-2'],
      'the deleted Job is not created again'
    )
    t.match(
      (await daemonJob(ns, 'daemonjob-fail')).status,
      { phase: 'Failed', desired: 2, failed: 2, failedNodes: [{ name: 'kwok-fail-1' }, { name: 'kwok-fail-2' }] },
      'the status still counts and names both failures'
    )
  }
)

t.test(
  'nodeParallelism 1 over 3 nodes: one Job at a time, in the order of the names, all Succeeded',
  { skip: ownCluster ? false : "needs the tier's own kwok nodes" },
  async (t) => {
    const pool = { 'e2e/pool': 'one-at-a-time' }
    const nodes = ['kwok-par-1', 'kwok-par-2', 'kwok-par-3']
    for (const node of nodes) await addNode(node, {}, pool)
    const ns = await namespace('dj-parallelism')
    const name = 'daemonjob-one-at-a-time'
    const jobs = watchJobs(t, ns)
    const samples = sampleStatus(ns, name)
    const holds = sampleStatus(
      ns,
      name,
      (s) => `${String(s.phase)} waiting ${String(s.waiting ?? 0)}: ${String(s.message ?? '')}`
    )
    t.teardown(async () => {
      await samples.stop()
      await holds.stop()
    })
    await apply(
      cluster.kubectl,
      stringify(
        example(
          '',
          (spec) => {
            spec.nodeParallelism = 1
            // 15 s a pod: two Jobs running together could not slip between two events.
            spec.template.metadata = { annotations: { 'e2e.jobhooks.io/slow': 'true' } }
            spec.template.spec.nodeSelector = pool
          },
          name
        )
      ),
      ns
    )
    await jobs.started
    const dj = await waitForStatus(ns, name, 'finished', finished)
    const seen = await samples.stop()
    const held = await holds.stop()
    const events = await jobs.stop()

    t.match(
      dj.status,
      { phase: 'Succeeded', desired: 3, active: 0, succeeded: 3, failed: 0, succeededNodes: nodes, failedNodes: [] },
      `Succeeded on the three nodes${dj.status.message !== undefined ? ` (message: ${String(dj.status.message)})` : ''}`
    )
    t.notOk(dj.status.waiting, 'nothing waits once finished')
    t.notOk(dj.status.message, 'no message once finished')
    checkSamples(t, seen, 'Succeeded')
    t.comment(`what held Jobs back, as sampled:\n${held.join('\n')}`)
    t.ok(
      held.includes('Running waiting 2: nodeParallelism 1: 2 nodes waiting for their Job'),
      'the status said two nodes waited while the first ran'
    )
    t.ok(
      held.includes('Running waiting 1: nodeParallelism 1: 1 node waiting for their Job'),
      'and one node while the second ran'
    )

    const { most, log } = mostRunning(events)
    t.comment(`the Jobs' watch events (type, name, True conditions, Jobs running after it):\n${log.join('\n')}`)
    const added = events.filter((e) => e.type === 'ADDED').map((e) => e.fields[0])
    const jobNames = nodes.map((node) => `${name}-${node}`)
    t.same(added, jobNames, 'each node got one Job, in the order of the names')
    t.ok(
      jobNames.every((job) => {
        const first = events.find((e) => e.fields[0] === job)
        return first?.type === 'ADDED' && !hasVerdict(first)
      }),
      'the watch saw every Job before it ended'
    )
    t.same(
      events.filter((e) => e.type === 'DELETED'),
      [],
      'no Job deleted'
    )
    t.equal(most, 1, 'never two Jobs without a verdict at once')
    // Stricter, for the log only: until Complete or Failed, the next Job may rightly come first.
    t.comment(`Jobs at once until Complete or Failed: at most ${mostRunning(events, ['Complete', 'Failed']).most}`)
    await checkJobs(t, ns, name, nodes, 'SuccessCriteriaMet')
  }
)

t.test(
  "FailFast, the default, with nodeParallelism 1: the first node's Job fails, the DaemonJob is Failed, no other Job",
  { skip: ownCluster ? false : "needs the tier's own kwok nodes" },
  async (t) => {
    const pool = { 'e2e/pool': 'fail-fast' }
    const nodes = ['kwok-ff-1', 'kwok-ff-2', 'kwok-ff-3']
    for (const node of nodes) await addNode(node, {}, pool)
    const ns = await namespace('dj-failfast')
    const name = 'daemonjob-failfast'
    const failing = `${name}-kwok-ff-1`
    const jobs = watchJobs(t, ns)
    await apply(
      cluster.kubectl,
      stringify(
        example(
          '',
          (spec) => {
            // No failurePolicy: FailFast is the default of a new DaemonJob.
            spec.nodeParallelism = 1
            spec.backoffLimit = 0
            // kwok fails the pod of the Job named here (test/e2e/kwok-stages.yaml): kwok-ff-1's only.
            spec.template.metadata = { labels: { 'e2e-fail-job': failing } }
            spec.template.spec.restartPolicy = 'Never'
            spec.template.spec.nodeSelector = pool
          },
          name
        )
      ),
      ns
    )
    await jobs.started
    const dj = await waitForStatus(ns, name, 'finished', finished)

    t.match(
      dj.status,
      { phase: 'Failed', desired: 1, active: 0, succeeded: 0, failed: 1, succeededNodes: [] },
      'Failed on the first node: the others never got a Job'
    )
    t.match(
      dj.status.failedNodes,
      [{ name: 'kwok-ff-1', jobName: failing, message: /BackoffLimitExceeded/, completionTime: /./ }],
      "status.failedNodes names kwok-ff-1, its Job and the Job's failure"
    )
    t.equal(dj.status.failedNodes.length, 1, 'one failed node, no more')
    t.equal(
      dj.status.defaultFailurePolicy,
      'FailFast',
      'status.defaultFailurePolicy records FailFast, chosen at the first sync'
    )
    t.match(
      dj.status.conditions.find((c: any) => c.type === 'Failed'),
      { status: 'True', reason: 'NodeJobFailed', message: /^the Jobs of 1 of 1 nodes failed: kwok-ff-1: / },
      'condition Failed'
    )
    t.notOk(dj.status.waiting, 'no node counted as waiting once Failed')
    t.notOk(dj.status.message, 'no message once finished')

    // Metacontroller syncs it again (the Jobs, the Nodes, its resync): still no Job for the others.
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    const events = await jobs.stop()
    t.same(
      events.filter((e) => e.type === 'ADDED').map((e) => e.fields[0]),
      [failing],
      "the watch saw one Job created, kwok-ff-1's"
    )
    t.same(
      (await jobsIn(ns)).map((j: any) => j.metadata.name),
      [failing],
      'one Job in the namespace'
    )
    t.match(
      (await daemonJob(ns, name)).status,
      { phase: 'Failed', desired: 1, failed: 1 },
      'the DaemonJob stays Failed'
    )
    await checkJobs(t, ns, name, ['kwok-ff-1'], 'Failed')
  }
)

t.test('the CRD refuses invalid DaemonJobs at kubectl apply time', async (t) => {
  const ns = await namespace('dj-rules')
  const cases: Array<[string, (spec: any) => void, RegExp]> = [
    [
      'restartPolicy Always',
      (spec) => {
        spec.template.spec.restartPolicy = 'Always'
      },
      /Unsupported value: "Always"/,
    ],
    [
      'excludeNodeList as a list',
      (spec) => {
        spec.excludeNodeList = ['a', 'b']
      },
      /excludeNodeList: Invalid value: "array"/,
    ],
    [
      'a template without containers',
      (spec) => {
        spec.template.spec.containers = []
      },
      /containers/,
    ],
    [
      'a script container that does not exist',
      (spec) => {
        spec.script = { name: 'retry.sh', container: 'sidecar' }
      },
      /script.container must name a container/,
    ],
    [
      'a field neither the DaemonJob nor a Job has (kubectl validates strictly)',
      (spec) => {
        spec.restartLimit = 3
      },
      /unknown field "spec.restartLimit"/,
    ],
    [
      'a misspelt container field',
      (spec) => {
        spec.template.spec.containers[0].imagePullPolicyy = 'Always'
      },
      /unknown field "spec.template.spec.containers\[0\].imagePullPolicyy"/,
    ],
    [
      "BroadcastJob's failurePolicy object",
      (spec) => {
        spec.failurePolicy = { type: 'FailFast', restartLimit: 3 }
      },
      // Strict decoding answers first: a string field has no fields, so both keys are unknown.
      /strict decoding error: unknown field "spec\.failurePolicy\.restartLimit", unknown field "spec\.failurePolicy\./,
    ],
  ]
  for (const [what, mutate, message] of cases) {
    const result = await cluster.kubectl(['apply', '-n', ns, '-f', '-'], stringify(example('', mutate)))
    t.not(result.code, 0, `${what} is refused`)
    t.match(result.stderr, message, what)
  }
  const none = await cluster.kubectl(['get', 'daemonjobs', '-n', ns, '-o', 'name'])
  t.equal(none.stdout.trim(), '', 'none of them was stored')
})
