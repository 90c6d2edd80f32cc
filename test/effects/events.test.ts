// Events on the parents (src/effects/events.ts): which outcome earns which Event, client-go's
// correlation (one Event counted on repeats, similar messages combined, the spam filter) with its
// memory bounded, the background writer (POST, PATCH of the count, a create when the Event is
// gone, a bounded queue, bounded concurrency, a timeout), and the executors and the app around it:
// the cluster executor writes them without holding up its answer, the dry-run one keeps them in
// memory, /metrics counts them.
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { KubeConfig } from '@kubernetes/client-node'
import {
  EVENT_PERMISSIONS,
  EventCorrelator,
  EventRecorder,
  LruCache,
  MemoryEvents,
  eventFor,
  type CoreEvent,
  type EventRecord,
  type EventRequest,
  type EventResult
} from '../../src/effects/events.js'
import { ClusterExecutor, classify } from '../../src/effects/executor.js'
import { RecordingExecutor } from '../../src/effects/dry-run.js'
import type { Effect, EffectOutcome, ObjectRef } from '../../src/effects/types.js'
import { kubeconfigFor, listenUntilTeardown } from '../helpers/fake-apiserver.js'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'

const NOW = new Date('2026-01-02T03:04:05.000Z')
const PARENT: ObjectRef = {
  apiVersion: 'jobhooks.io/v1alpha1',
  kind: 'OperationJob',
  namespace: 'team-a',
  name: 'opj',
  uid: 'uid-opj'
}
const pod = (name: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'team-a',
  name,
  uid: `uid-${name}`
})
const evict = (name: string): Effect => ({ type: 'Evict', target: pod(name) })
const inject = (name: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: pod(name),
  containers: [{ name: 'debug', image: 'busybox:1.36' }]
})
const applied = (effect: Effect): EffectOutcome => ({ effect, result: 'applied' })
const BUDGET = 'The disruption budget web needs 2 healthy pods and has 2 currently'
const refusedByBudget = (name: string): EffectOutcome => ({
  effect: evict(name),
  result: 'failed',
  message: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.",
  disruptionBudget: BUDGET
})
const after = (seconds: number): Date => new Date(NOW.getTime() + seconds * 1000)

t.test(
  'an Event for what was applied, and a Warning for an eviction a PodDisruptionBudget refused; nothing else',
  async t => {
    t.same(eventFor(applied(inject('web-0'))), {
      type: 'Normal',
      reason: 'InjectedContainers',
      action: 'Inject',
      related: pod('web-0'),
      message: 'Injected ephemeral container debug into Pod web-0'
    })
    const two: Effect = {
      type: 'InjectEphemeralContainers',
      target: pod('web-0'),
      containers: [{ name: 'a' }, { name: 'b' }]
    }
    t.equal(eventFor(applied(two))?.message, 'Injected ephemeral containers a, b into Pod web-0')
    t.same(eventFor(applied(evict('web-0'))), {
      type: 'Normal',
      reason: 'EvictedPod',
      action: 'Evict',
      related: pod('web-0'),
      message: 'Evicted Pod web-0'
    })
    t.same(eventFor(refusedByBudget('web-0')), {
      type: 'Warning',
      reason: 'EvictionRefused',
      action: 'Evict',
      related: pod('web-0'),
      message: `Cannot evict Pod web-0: ${BUDGET}`
    })
    t.same(
      eventFor(
        applied({
          type: 'SetPodLabels',
          target: pod('web-0'),
          labels: { track: 'canary', 'jobhooks.io/ops-lifecycle': null }
        })
      ),
      {
        type: 'Normal',
        reason: 'LabelledPod',
        action: 'Label',
        related: pod('web-0'),
        message: 'Labelled Pod web-0: track=canary, removed jobhooks.io/ops-lifecycle'
      }
    )
    t.equal(
      eventFor(applied({ type: 'SetPodLabels', target: pod('web-0'), labels: { 'jobhooks.io/ops-lifecycle': 'opj' } }))
        ?.message,
      'Labelled Pod web-0: jobhooks.io/ops-lifecycle=opj'
    )
    t.same(
      eventFor(
        applied({
          type: 'SetPodCondition',
          target: pod('foo-1'),
          condition: {
            type: 'jobhooks.io/service-ready',
            status: 'False',
            reason: 'OperationPreparing',
            message: 'OperationJob opj takes the Pod out of traffic'
          }
        })
      ),
      {
        type: 'Normal',
        reason: 'SetPodCondition',
        action: 'SetCondition',
        related: pod('foo-1'),
        message:
          'Set condition jobhooks.io/service-ready=False on Pod foo-1: OperationJob opj takes the Pod out of traffic'
      }
    )
    t.same(
      eventFor(applied({ type: 'Delete', target: PARENT })),
      {
        type: 'Normal',
        reason: 'TTLExpired',
        action: 'Delete',
        message: 'Deleted OperationJob opj: its time to live has passed'
      },
      'the TTL: about the parent itself, nothing related'
    )

    for (const result of ['gone', 'refused', 'dry_run'] as const) {
      t.equal(eventFor({ effect: evict('web-0'), result }), undefined, `nothing for ${result}`)
    }
    t.equal(
      eventFor({ effect: evict('web-0'), result: 'failed', message: 'HTTP 500: etcd' }),
      undefined,
      'nothing for a failure retried as it is'
    )
    t.equal(eventFor({ effect: inject('web-0'), result: 'failed', message: 'HTTP 403: forbidden' }), undefined)
    t.same(EVENT_PERMISSIONS, [{ apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }])
  }
)

t.test("classify tells a PodDisruptionBudget's refusal from another 429", async t => {
  // A StatusCause's type is `reason` in JSON.
  const status = (code: number, message: string, causes?: unknown[]): string =>
    JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      code,
      message,
      ...(causes !== undefined ? { details: { causes } } : {})
    })
  t.same(
    classify(
      429,
      status(429, "Cannot evict pod as it would violate the pod's disruption budget.", [
        { reason: 'DisruptionBudget', message: BUDGET }
      ])
    ),
    {
      result: 'failed',
      message: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.",
      disruptionBudget: BUDGET
    },
    'the cause names the budget'
  )
  t.same(
    classify(
      403,
      status(403, 'forbidden', [
        {
          reason: 'DisruptionBudget',
          message:
            'The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative'
        }
      ])
    ).disruptionBudget,
    'The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative',
    'a budget it cannot count refuses with 403'
  )
  t.same(
    classify(429, status(429, 'too many requests, please try again later')),
    { result: 'failed', message: 'HTTP 429: too many requests, please try again later' },
    "the API server's own throttling is no budget"
  )
})

const record = (message: string, type: EventRecord['type'] = 'Normal', reason = 'EvictedPod'): EventRecord => ({
  type,
  reason,
  message,
  action: 'Evict',
  related: pod('web-0')
})

t.test('the same event again is one Event counted: created once, then its count and lastTimestamp patched', async t => {
  const correlator = new EventCorrelator({}, 'jobhooks-abc')
  const first = correlator.correlate(PARENT, record('Evicted Pod web-0'), NOW)
  t.same(first, {
    create: true,
    event: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: first?.event.metadata.name, namespace: 'team-a' },
      involvedObject: PARENT,
      related: pod('web-0'),
      type: 'Normal',
      reason: 'EvictedPod',
      message: 'Evicted Pod web-0',
      action: 'Evict',
      source: { component: 'jobhooks' },
      reportingComponent: 'jobhooks',
      reportingInstance: 'jobhooks-abc',
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:05Z',
      count: 1
    }
  })
  t.match(
    first?.event.metadata.name,
    /^opj\.[0-9a-f]{16}$/,
    'named <parent>.<hex nanoseconds>, as client-go names them'
  )
  const second = correlator.correlate(PARENT, record('Evicted Pod web-0'), after(5))
  t.match(second, {
    create: false,
    event: {
      metadata: { name: first?.event.metadata.name },
      count: 2,
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:10Z'
    }
  })
  const other = correlator.correlate(PARENT, record('Evicted Pod web-1'), after(6))
  t.match(
    other,
    { create: true, event: { count: 1, message: 'Evicted Pod web-1' } },
    'another message is another Event'
  )
  t.not(other?.event.metadata.name, first?.event.metadata.name)
  const warning = correlator.correlate(PARENT, record('Evicted Pod web-0', 'Warning'), after(7))
  t.match(warning, { create: true, event: { count: 1 } }, 'another type is another Event')
  const otherParent = correlator.correlate({ ...PARENT, uid: 'uid-new' }, record('Evicted Pod web-0'), after(8))
  t.match(otherParent, { create: true }, 'a new parent of the same name is another object')
})

t.test('past 10 different messages of one reason within 10 minutes, they are combined into one Event', async t => {
  const correlator = new EventCorrelator()
  const events = Array.from({ length: 12 }, (_, i) =>
    correlator.correlate(PARENT, record(`Evicted Pod web-${i}`), after(i))
  )
  t.same(
    events.slice(0, 9).map(e => [e?.create, e?.event.message]),
    Array.from({ length: 9 }, (_, i) => [true, `Evicted Pod web-${i}`]),
    'nine Events of their own'
  )
  t.match(
    events[9],
    { create: true, event: { message: '(combined from similar events): Evicted Pod web-9', count: 1 } },
    'the tenth starts the combined Event'
  )
  t.match(events[10], {
    create: false,
    event: {
      metadata: { name: events[9]?.event.metadata.name },
      message: '(combined from similar events): Evicted Pod web-10',
      count: 2
    }
  })
  t.match(events[11], { create: false, event: { count: 3 } })
  const later = correlator.correlate(PARENT, record('Evicted Pod web-99'), after(12 + 601))
  t.match(
    later,
    { create: true, event: { message: 'Evicted Pod web-99' } },
    'ten minutes of quiet later, messages stand alone again'
  )
  const other = correlator.correlate(PARENT, record('Labelled Pod web-0', 'Normal', 'LabelledPod'), after(12))
  t.match(other, { event: { message: 'Labelled Pod web-0' } }, 'another reason is not combined with them')
})

t.test(
  'the spam filter: 25 writes per parent and reason at once, then one every 5 minutes, and the next write carries ' +
    'every count',
  async t => {
    const correlator = new EventCorrelator()
    const refusal = record(`Cannot evict Pod web-0: ${BUDGET}`, 'Warning', 'EvictionRefused')
    const written = Array.from({ length: 30 }, (_, i) => correlator.correlate(PARENT, refusal, after(i * 5)))
    t.equal(written.filter(e => e !== undefined).length, 25, '25 written')
    t.same(written.slice(25), [undefined, undefined, undefined, undefined, undefined], 'then held back')
    t.match(
      correlator.correlate(PARENT, refusal, after(29 * 5 + 300)),
      { create: false, event: { count: 31 } },
      'five minutes on, one more, with every occurrence counted'
    )
    t.match(
      correlator.correlate(PARENT, record('Evicted Pod web-0'), after(29 * 5 + 301)),
      { create: true, event: { reason: 'EvictedPod' } },
      'the refusals did not use up what the eviction itself needs'
    )
  }
)

t.test('memory is bounded: each cache forgets its least recently used entry', async t => {
  const lru = new LruCache<string, number>(2)
  lru.set('a', 1)
  lru.set('b', 2)
  t.equal(lru.get('a'), 1)
  lru.set('c', 3)
  t.same(
    [lru.get('a'), lru.get('b'), lru.get('c'), lru.size],
    [1, undefined, 3, 2],
    'b, used least recently, is forgotten'
  )
  const correlator = new EventCorrelator({ cacheSize: 3 })
  const first = correlator.correlate(PARENT, record('Evicted Pod web-0'), NOW)
  for (let i = 1; i <= 5; i++) correlator.correlate(PARENT, record(`Evicted Pod web-${i}`), after(i))
  t.match(
    correlator.correlate(PARENT, record('Evicted Pod web-0'), after(6)),
    { create: true, event: { count: 1 } },
    'an Event pushed out of the cache is started anew'
  )
  t.ok(first)
})

/** A recorder whose writes go to `answer`, recording each request. */
function recorderFor (
  answer: (
    request: EventRequest,
    signal: AbortSignal
  ) => Promise<{ statusCode: number; body: string }> | { statusCode: number; body: string },
  options: { concurrency?: number; maxPending?: number; timeoutMs?: number } = {}
) {
  const requests: EventRequest[] = []
  const results: Array<[string, EventResult]> = []
  let clock = NOW
  const recorder = new EventRecorder({
    send: async (request, signal) => {
      requests.push(request)
      return await answer(request, signal)
    },
    clock: () => clock,
    instance: 'jobhooks-abc',
    ...options
  })
  recorder.observe((reason, result) => results.push([reason, result]))
  return {
    recorder,
    requests,
    results,
    tick: (seconds: number) => {
      clock = after(seconds)
    }
  }
}

t.test('the recorder creates an Event, then patches its count; a PATCH of a gone Event creates it again', async t => {
  const memory = new MemoryEvents()
  const { recorder, requests, results, tick } = recorderFor(memory.send)
  recorder.record(PARENT, [refusedByBudget('web-0'), { effect: inject('web-1'), result: 'gone' }])
  await recorder.flush()
  t.equal(requests.length, 1, 'one Event: the gone injection earns none')
  t.match(requests[0], {
    method: 'POST',
    path: '/api/v1/namespaces/team-a/events',
    contentType: 'application/json',
    body: { involvedObject: PARENT, type: 'Warning', reason: 'EvictionRefused', count: 1 }
  })
  tick(5)
  recorder.record(PARENT, [refusedByBudget('web-0')])
  await recorder.flush()
  const name = (requests[0]?.body as CoreEvent).metadata.name
  t.same(requests[1], {
    method: 'PATCH',
    path: `/api/v1/namespaces/team-a/events/${name}`,
    contentType: 'application/strategic-merge-patch+json',
    body: { count: 2, lastTimestamp: '2026-01-02T03:04:10Z', message: `Cannot evict Pod web-0: ${BUDGET}` }
  })
  t.match(
    memory.about(PARENT),
    [{ count: 2, firstTimestamp: '2026-01-02T03:04:05Z', lastTimestamp: '2026-01-02T03:04:10Z' }],
    'one Event, counted twice'
  )

  const gone = recorderFor(request =>
    request.method === 'PATCH' ? { statusCode: 404, body: '{}' } : { statusCode: 201, body: '{}' }
  )
  gone.recorder.record(PARENT, [applied(evict('web-0'))])
  await gone.recorder.flush()
  gone.recorder.record(PARENT, [applied(evict('web-0'))])
  await gone.recorder.flush()
  t.same(
    gone.requests.map(r => r.method),
    ['POST', 'PATCH', 'POST'],
    'the Event was gone (its hour passed): made again, with the count so far'
  )
  t.match(gone.requests[2]?.body, { count: 2 })
  t.same(results, [
    ['EvictionRefused', 'created'],
    ['EvictionRefused', 'patched']
  ])
  t.same(gone.results, [
    ['EvictedPod', 'created'],
    ['EvictedPod', 'created']
  ])

  const landed = recorderFor(request =>
    request.method === 'POST' ? { statusCode: 409, body: '{}' } : { statusCode: 200, body: '{}' }
  )
  landed.recorder.record(PARENT, [applied(evict('web-0'))])
  await landed.recorder.flush()
  t.same(
    landed.requests.map(r => r.method),
    ['POST', 'PATCH'],
    'a create that finds the Event there (an earlier one landed late) patches it'
  )
})

t.test(
  'the recorder never waits and never throws: a bounded queue, bounded concurrency, one write per Event at a time, ' +
    'a timeout',
  async t => {
    const release: Array<() => void> = []
    const hanging = recorderFor(
      async () => await new Promise(resolve => release.push(() => resolve({ statusCode: 201, body: '{}' }))),
      { concurrency: 2, maxPending: 3 }
    )
    for (let i = 0; i < 8; i++) hanging.recorder.record(PARENT, [applied(evict(`web-${i}`))])
    t.equal(hanging.requests.length, 2, 'two in flight, whatever is queued')
    t.same(
      hanging.results,
      [
        ['EvictedPod', 'dropped'],
        ['EvictedPod', 'dropped'],
        ['EvictedPod', 'dropped']
      ],
      'three queued behind them; past that, dropped and counted'
    )
    hanging.recorder.record(PARENT, [applied(evict('web-3'))])
    t.same(hanging.results.at(-1), ['EvictedPod', 'merged'], 'an occurrence of a queued Event rides with its write')
    while (release.length > 0) {
      for (const resolve of release.splice(0)) resolve()
      await new Promise(resolve => setImmediate(resolve))
    }
    await hanging.recorder.flush()
    t.equal(hanging.requests.length, 5, 'two, then the three queued')
    t.match(
      hanging.requests.find(r => (r.body as CoreEvent).message === 'Evicted Pod web-3')?.body,
      { count: 2 },
      'the merged occurrence is in the count'
    )

    // Two writes of one Event are never in flight together: the PATCH waits for the create.
    const order: string[] = []
    let finish: (() => void) | undefined
    const serial = recorderFor(
      async request => {
        order.push(`${request.method} start`)
        if (request.method === 'POST') {
          await new Promise<void>(resolve => {
            finish = resolve
          })
        }
        order.push(`${request.method} end`)
        return { statusCode: 200, body: '{}' }
      },
      { concurrency: 4 }
    )
    serial.recorder.record(PARENT, [applied(evict('web-0'))])
    await new Promise(resolve => setImmediate(resolve))
    serial.recorder.record(PARENT, [applied(evict('web-0'))])
    await new Promise(resolve => setImmediate(resolve))
    t.same(order, ['POST start'], 'the PATCH waits')
    finish?.()
    await serial.recorder.flush()
    t.same(order, ['POST start', 'POST end', 'PATCH start', 'PATCH end'])

    const slow = recorderFor(async () => await new Promise(() => {}), { timeoutMs: 50 })
    slow.recorder.record(PARENT, [applied(evict('web-0'))])
    await slow.recorder.flush(2000)
    t.same(slow.results, [['EvictedPod', 'failed']], 'not answered within the timeout: failed, given up')
    const refusing = recorderFor(() => ({ statusCode: 403, body: '{"message":"events is forbidden"}' }))
    refusing.recorder.record(PARENT, [applied(evict('web-0'))])
    await refusing.recorder.flush()
    t.same(refusing.results, [['EvictedPod', 'failed']], 'a ClusterRole without events: failed, counted')
    const throwing = recorderFor(() => {
      throw new Error('boom')
    })
    t.doesNotThrow(() => throwing.recorder.record(PARENT, [applied(evict('web-0'))]))
    await throwing.recorder.flush()
    t.same(throwing.results, [['EvictedPod', 'failed']])
  }
)

interface Seen {
  method: string
  url: string
  body: string
}

/** An API server that knows PARENT, evicts or refuses as `evict` says, and answers Events as `events` says. */
async function fakeApi (
  t: Test,
  evict: () => { status: number; body: unknown },
  events: (seen: Seen) => Promise<{ status: number; body: unknown }> | { status: number; body: unknown } = () => ({
    status: 201,
    body: {}
  })
) {
  const writes: Seen[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = ''
    req.on('data', chunk => {
      body += String(chunk)
    })
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', body }
      const reply = async (): Promise<{ status: number; body: unknown }> => {
        if (seen.method === 'GET') return { status: 200, body: { metadata: { name: PARENT.name, uid: PARENT.uid } } }
        writes.push(seen)
        return seen.url.includes('/events') ? await events(seen) : evict()
      }
      void reply().then(({ status, body }) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      })
    })
  })
  const url = await listenUntilTeardown(t, server)
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(kubeconfigFor(t.testdir({}), url))
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
