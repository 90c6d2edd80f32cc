// client-go's Event correlation, as src/effects/events.ts plays it: one Event counted on repeats,
// similar messages combined, the spam filter, with its memory bounded.
import t from 'tap'
import { EventCorrelator, LruCache } from '../../src/effects/events.js'
import { NOW, PARENT, pod, BUDGET, after, record } from '../helpers/events.js'

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
