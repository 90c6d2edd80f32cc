// Events through the executors and the app: the cluster executor writes them without holding up
// its answer, the dry-run one keeps them in memory, /metrics counts them.
import t, { type Test } from 'tap'
import { KubeConfig } from '@kubernetes/client-node'
import { ClusterExecutor } from '../../src/effects/executor.js'
import { RecordingExecutor } from '../../src/effects/dry-run.js'
import { fakeApiServer, kubeconfigFor, type SeenRequest } from '../helpers/fake-api-server.js'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'
import { NOW, PARENT, pod, evict, BUDGET } from '../helpers/events.js'

type Answer = { status: number; body: unknown }

/** An API server that knows PARENT, evicts or refuses as `evict` says, and answers Events as `events` says. */
async function fakeApi (
  t: Test,
  evict: () => { status: number; body: unknown },
  events: (seen: SeenRequest) => Promise<Answer> | Answer = () => ({ status: 201, body: {} })
) {
  const writes: SeenRequest[] = []
  const server = await fakeApiServer(t, async seen => {
    if (seen.method === 'GET') return { status: 200, body: { metadata: { name: PARENT.name, uid: PARENT.uid } } }
    writes.push(seen)
    return seen.url.includes('/events') ? await events(seen) : evict()
  })
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(kubeconfigFor(t.testdir({}), server.url))
  return { kubeConfig, writes }
}

t.test(
  'the cluster executor records Events through its connection, after answering: a refusal counted on one Warning, ' +
    'then the eviction',
  async t => {
    let refuse = true
    const api = await fakeApi(t, () =>
      refuse
        ? {
            status: 429,
            body: {
              kind: 'Status',
              code: 429,
              message: "Cannot evict pod as it would violate the pod's disruption budget.",
              details: { causes: [{ reason: 'DisruptionBudget', message: BUDGET }] }
            }
          }
        : { status: 201, body: {} }
    )
    const executor = new ClusterExecutor(api.kubeConfig, {
      concurrency: 8,
      budgetMs: 5000,
      events: { instance: 'jobhooks-abc' }
    })
    const effect = evict('web-0')
    for (let i = 0; i < 3; i++) {
      t.match(await executor.apply(PARENT, [effect]), [{ result: 'failed', disruptionBudget: BUDGET }])
    }
    refuse = false
    t.match(await executor.apply(PARENT, [effect]), [{ result: 'applied' }])
    await executor.events?.flush()
    const events = api.writes.filter(w => w.url.includes('/events'))
    t.same(
      events.map(w => `${w.method} ${w.url.replace(/\/opj\.[0-9a-f]+$/, '/<name>')}`),
      [
        'POST /api/v1/namespaces/team-a/events',
        'PATCH /api/v1/namespaces/team-a/events/<name>',
        'PATCH /api/v1/namespaces/team-a/events/<name>',
        'POST /api/v1/namespaces/team-a/events'
      ],
      'one Warning, created and counted up twice; then the eviction'
    )
    t.match(JSON.parse(events[0]?.body ?? '{}'), {
      involvedObject: PARENT,
      related: pod('web-0'),
      type: 'Warning',
      reason: 'EvictionRefused',
      message: `Cannot evict Pod web-0: ${BUDGET}`,
      source: { component: 'jobhooks' },
      reportingComponent: 'jobhooks',
      reportingInstance: 'jobhooks-abc',
      count: 1
    })
    t.match(JSON.parse(events[2]?.body ?? '{}'), { count: 3 })
    t.match(JSON.parse(events[3]?.body ?? '{}'), {
      type: 'Normal',
      reason: 'EvictedPod',
      message: 'Evicted Pod web-0',
      count: 1
    })

    // An API server that never answers an Event holds up no answer: the answer comes while the
    // Event's write is still under way, which ends only when its own time runs out.
    const stuck = await fakeApi(
      t,
      () => ({ status: 201, body: {} }),
      async () => await new Promise(() => {})
    )
    const patient = new ClusterExecutor(stuck.kubeConfig, { concurrency: 8, budgetMs: 1000, events: true })
    const written: string[] = []
    patient.events?.observe((reason, result, message) => written.push(`${reason} ${result}: ${message ?? ''}`))
    t.match(await patient.apply(PARENT, [evict('web-0')]), [{ result: 'applied' }])
    t.same(written, [], 'the answer did not wait for the Event')
    await patient.events?.flush(5000)
    t.same(written, ['EvictedPod failed: not written within 1000 ms'], 'the Event write gave up on its own')

    const quiet = new ClusterExecutor(api.kubeConfig, { concurrency: 8, budgetMs: 5000 })
    t.equal(quiet.events, undefined, 'no Events unless asked for')
    const unknownParent = await fakeApi(t, () => ({ status: 201, body: {} }))
    const refusing = new ClusterExecutor(unknownParent.kubeConfig, { concurrency: 8, budgetMs: 5000, events: true })
    await refusing.apply({ ...PARENT, uid: 'uid-other' }, [evict('web-0')])
    await refusing.events?.flush()
    t.same(
      unknownParent.writes,
      [],
      'a parent the API server does not have with that UID gets no Event (and nothing else)'
    )
  }
)

t.test(
  'through the app: the dry-run executor keeps the Events the effects would earn, and /metrics counts them',
  async t => {
    const executor = new RecordingExecutor({ clock: () => NOW })
    const app = await testApp(t, { effects: executor })
    const request = fixture('ephemeraljob/sync-new.v2.json')
    const response = await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: request })
    t.equal(response.statusCode, 200)
    await executor.events.flush()
    const parent = request.parent
    const events = executor.memory.about({
      kind: 'EphemeralJob',
      namespace: parent.metadata.namespace,
      name: parent.metadata.name,
      uid: parent.metadata.uid as string
    })
    const injected = executor.recorded.filter(e => e.type === 'InjectEphemeralContainers')
    t.ok(injected.length > 0, 'the sync injects')
    t.same(
      events.map(e => [e.type, e.reason, e.message]),
      injected.map(e => [
        'Normal',
        'InjectedContainers',
        `Injected ephemeral container ${(e as { containers: Array<{ name: string }> }).containers.map(c => c.name)
          .join(', ')} into Pod ${e.target.name}`
      ]),
      'an InjectedContainers Event per Pod'
    )
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    t.match(
      metrics,
      new RegExp(`jobhooks_events_total\\{reason="InjectedContainers",result="dry_run"\\} ${injected.length}`)
    )
  }
)
