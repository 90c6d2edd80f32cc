// One namespace's spec cannot hurt the others, on the real Metacontroller v4.17.2: hostile
// JobFlows in one namespace (the cases that froze or killed 0.2.0: nested CEL macros, a
// backtracking regex over a step's output, an answer that multiplies a large env value by
// thousands of items, an output that Kubernetes would expand) while an ordinary JobFlow runs in
// another. The ordinary one finishes as it does alone, the service is never restarted, /metrics
// counts the refusals, and each hostile flow reads Invalid or its step's outcome with the reason.
// Then, beside another ordinary JobFlow: a burst of first syncs of a 10,000-item JobFlow posted
// at the service as Metacontroller's workers would (each given up after its 10 s), /readyz asked
// all through it, and a DaemonJob that would give a 1 MB env value to each of 400 Nodes.
import t from 'tap'
import { stringify } from 'yaml'
import { apply } from './cluster.js'
import { daemonJobExample, jobFlowExample, startScenarios, waitForStatusOf } from './scenario.js'
import { firstSyncBody, SHED_CALLS } from '../../bench/shed.js'

const { cluster, namespace, getJson } = await startScenarios(t)
const MESSAGE = 'e2e.jobhooks.io/termination-message'
// 201 characters: four of them nested fit the CRD's 1,024 for a `when`, as the 851 did.
const HUNDRED = `[${Array.from({ length: 100 }, () => 1).join(',')}]`

/** A sample of the service's /metrics: the sum of `name`'s series whose labels include `labels`. */
async function metric (name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${cluster.hooksUrl as string}/metrics`)).text()
  return text.split('\n')
    .filter(line => line.startsWith(name) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
}

/** The example flow named `name`, its first step writing `output`, its second with `when`. */
function flowWith (name: string, options: { output?: string, when?: string }): any {
  const flow = jobFlowExample(cluster, spec => {
    const [first, second] = spec.flows
    if (options.output !== undefined) {
      first.jobTemplate.template.metadata = { annotations: { [MESSAGE]: options.output } }
    }
    second.dependencies = [first.name]
    if (options.when !== undefined) second.when = options.when
    spec.flows = [first, second]
  })
  flow.metadata.name = name
  return flow
}

/** 200 KB of env given to each of 2,000 items: an answer of about 400 MB if it were built. */
function multiplied (): any {
  const flow = jobFlowExample(cluster, spec => {
    spec.globalParams.env.push({ name: 'BIG', value: 'x'.repeat(200 * 1024) })
    spec.flows = [{ ...spec.flows[0], forEach: Array.from({ length: 2000 }, (_, i) => `item-${i}`) }]
  })
  flow.metadata.name = 'multiplied'
  return flow
}

t.test('hostile JobFlows in one namespace, an ordinary one in another: each gets its own answer',
  { skip: cluster.hooksUrl === undefined ? "needs the tier's own service, to read its /metrics" : false },
  async t => {
    const [ordinaryNs, hostileNs] = [await namespace('tenants-ordinary'), await namespace('tenants-hostile')]
    const started = await metric('process_start_time_seconds')
    const refusedBefore = await metric('jobhooks_hook_calls_total{', 'outcome="invalid"')
    const ordinary = jobFlowExample(cluster)
    const hostile = [
      flowWith('nested-maps', {
        when: `size(${HUNDRED}.map(a, ${HUNDRED}.map(b, ${HUNDRED}.map(c, ${HUNDRED}.map(d, d))))) > 0`
      }),
      flowWith('nested-exists', {
        when: `${HUNDRED}.exists(a, ${HUNDRED}.exists(b, ${HUNDRED}.exists(c, ${HUNDRED}.exists(d, d < 0))))`
      }),
      flowWith('backtracking', { output: `${'a'.repeat(1000)}!`, when: "flows.job1.output.matches('^(a+)+$')" }),
      flowWith('dollars', { output: '$(HOME) and $$(X)' })
    ]
    await apply(cluster.kubectl, hostile.map(f => stringify(f)).join('---\n'), hostileNs)
    // Too large for kubectl apply's last-applied annotation (256 KiB): created as it is.
    const created = await cluster.kubectl(['create', '-n', hostileNs, '-f', '-'], JSON.stringify(multiplied()))
    t.equal(created.code, 0, `the API server admits the 212 KB JobFlow: ${created.stderr}`)
    await apply(cluster.kubectl, stringify(ordinary), ordinaryNs)

    const invalid = async (name: string): Promise<string> => {
      const done = await waitForStatusOf(getJson, 'jobflow', hostileNs, name, 'Invalid',
        s => s.phase === 'Invalid', 120_000)
      return done.status.conditions.find((c: any) => c.type === 'Valid').message
    }
    t.match(await invalid('nested-maps'), /cost/, 'nested maps: refused by their estimated cost')
    t.match(await invalid('nested-exists'), /cost/, 'nested exists: refused by their estimated cost')
    t.match(await invalid('multiplied'), /2,000 items.*over/, 'the answer that multiplies: refused, naming the product')
    const backtracking = await waitForStatusOf(getJson, 'jobflow', hostileNs, 'backtracking', 'finished',
      s => s.phase === 'Succeeded' || s.phase === 'Failed', 180_000)
    t.match(backtracking.status.jobs.find((j: any) => j.name === 'job2'), { message: /when/ },
      'the regex ran in linear time over the 1,001-character output, and its step says what it decided')
    await waitForStatusOf(getJson, 'jobflow', hostileNs, 'dollars', 'Succeeded', s => s.phase === 'Succeeded', 180_000)
    const dependant = await getJson(['get', 'job', 'dollars-job2', '-n', hostileNs])
    t.same(dependant.spec.template.spec.containers[0].env.find((e: any) => e.name === 'JOBHOOKS_OUTPUT_JOB1'),
      { name: 'JOBHOOKS_OUTPUT_JOB1', value: '$$(HOME) and $$$$(X)' },
      'the output escaped, so the container sees it as written')

    const done = await waitForStatusOf(getJson, 'jobflow', ordinaryNs, ordinary.metadata.name, 'Succeeded',
      s => s.phase === 'Succeeded', 240_000)
    t.same(done.status.jobs.map((j: any) => `${String(j.name)} ${String(j.phase)}`).sort(),
      ordinary.spec.flows.map((f: any) => `${String(f.name)} Succeeded`).sort(), 'the ordinary flow, every step done')
    const jobs = await getJson(['get', 'jobs', '-n', ordinaryNs])
    t.same(jobs.items.map((j: any) => j.metadata.name).sort(),
      ordinary.spec.flows.map((f: any) => `${String(ordinary.metadata.name)}-${String(f.name)}`).sort(),
      'the same Jobs as alone')
    t.equal(await metric('process_start_time_seconds'), started, 'the service was never restarted')
    const refused = await metric('jobhooks_hook_calls_total{', 'outcome="invalid"')
    t.ok(refused > refusedBefore, '/metrics counts the refusals')
  })

/** Plain Nodes, which no kubelet plays: nothing runs on them, and a DaemonJob counts them. */
function plainNode (name: string): Record<string, unknown> {
  const labels = { 'kubernetes.io/hostname': name, [POOL]: 'yes' }
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } }
}
const POOL = 'e2e.jobhooks.io/tenants-pool'

interface Answered { status: number, ms: number }

/** A sync posted as Metacontroller posts it, with its token, given up after its 10 s timeout. */
async function postSync (body: Buffer): Promise<Answered> {
  const start = performance.now()
  const response = await fetch(`${cluster.hooksUrl as string}/hooks/jobflow/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${cluster.token as string}` },
    body,
    signal: AbortSignal.timeout(10_000)
  })
  await response.arrayBuffer()
  return { status: response.status, ms: performance.now() - start }
}

/** Asks /readyz every 100 ms until `until` settles: every status it answered. */
async function probeReadiness (until: Promise<unknown>): Promise<number[]> {
  const state = { done: false }
  void until.finally(() => { state.done = true })
  const statuses: number[] = []
  while (!state.done) {
    const response = await fetch(`${cluster.hooksUrl as string}/readyz`, { signal: AbortSignal.timeout(10_000) })
    statuses.push(response.status)
    await response.arrayBuffer()
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return statuses
}

t.test('a burst of large first syncs and a DaemonJob over 400 Nodes, beside an ordinary JobFlow',
  {
    skip: cluster.hooksUrl === undefined || cluster.token === undefined
      ? "needs the tier's own service and token"
      : false
  },
  async t => {
    const [ordinaryNs, hostileNs] = [await namespace('tenants-ordinary-burst'), await namespace('tenants-burst')]
    const started = await metric('process_start_time_seconds')
    const ordinary = jobFlowExample(cluster)
    await apply(cluster.kubectl, stringify(ordinary), ordinaryNs)

    const nodes = Array.from({ length: 400 }, (_, i) => plainNode(`tenants-plain-${String(i).padStart(3, '0')}`))
    const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes })
    const made = await cluster.kubectl(['create', '-f', '-'], list)
    t.equal(made.code, 0, `400 Nodes created: ${made.stderr.slice(0, 300)}`)
    const daemonJob = daemonJobExample('', spec => {
      spec.globalParams.env.push({ name: 'BIG', value: 'x'.repeat(1_000_000) })
      spec.template.spec.nodeSelector = { [POOL]: 'yes' }
      // Not Ready, no kubelet: tolerated, so that every one of them counts.
      spec.template.spec.tolerations = [{ operator: 'Exists' }]
    }, 'multiplied-nodes')
    const created = await cluster.kubectl(['create', '-n', hostileNs, '-f', '-'], JSON.stringify(daemonJob))
    t.equal(created.code, 0, `the API server admits the 1 MB DaemonJob: ${created.stderr}`)

    const body = firstSyncBody()
    const burst = Promise.all(Array.from({ length: SHED_CALLS }, async () => await postSync(body)))
    const ready = await probeReadiness(burst)
    const calls = await burst
    const answered = calls.map(c => `${c.status} ${Math.round(c.ms)} ms`).join(', ')
    t.comment(`burst: ${answered}; ${ready.length} /readyz probes`)
    t.same(calls.filter(c => c.status !== 200 && c.status !== 429), [], 'every call of the burst served or shed')
    t.ok(calls.some(c => c.status === 200), 'at least one served')
    t.ok(ready.length > 0 && ready.every(s => s === 200),
      `/readyz answered 200 all through the burst (${ready.length} probes)`)

    const invalid = await waitForStatusOf(getJson, 'daemonjob', hostileNs, 'multiplied-nodes', 'Invalid',
      s => s.phase === 'Invalid', 120_000)
    t.match(invalid.status.conditions.find((c: any) => c.type === 'Valid').message,
      /× 400 nodes.*over the limit of 64 MiB/, 'the DaemonJob that multiplies: refused, naming the product')
    const jobs = await getJson(['get', 'jobs', '-n', hostileNs])
    t.same(jobs.items, [], 'and not one of its Jobs created')

    const done = await waitForStatusOf(getJson, 'jobflow', ordinaryNs, ordinary.metadata.name, 'Succeeded',
      s => s.phase === 'Succeeded', 240_000)
    t.same(done.status.jobs.map((j: any) => `${String(j.name)} ${String(j.phase)}`).sort(),
      ordinary.spec.flows.map((f: any) => `${String(f.name)} Succeeded`).sort(), 'the ordinary flow, every step done')
    t.equal(await metric('process_start_time_seconds'), started, 'the service was never restarted')
  })
