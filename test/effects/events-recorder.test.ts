// The background Event writer: POST, PATCH of the count, a create when the Event is gone, a
// bounded queue, bounded concurrency, a timeout; it never waits and never throws.
import t from 'tap'
import {
  EventRecorder,
  MemoryEvents,
  type CoreEvent,
  type EventRequest,
  type EventResult
} from '../../src/effects/events.js'
import { NOW, PARENT, evict, inject, applied, BUDGET, refusedByBudget, after } from '../helpers/events.js'

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
