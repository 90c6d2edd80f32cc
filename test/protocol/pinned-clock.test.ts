// Pinning the clock of a hook call (x-jobhooks-now, ?now=): honoured by a service without cluster
// credentials, so that a fixture's answer does not depend on the day it is curled; refused by one
// that applies effects.
import t from 'tap'
import type { Effect, EffectExecutor, EffectOutcome, ObjectRef } from '../../src/effects/types.js'
import { pinnedClock } from '../../src/protocol/pinned-clock.js'
import { FIXED_NOW, testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'

class AppliesToACluster implements EffectExecutor {
  readonly mode = 'cluster' as const
  async apply (_parent: ObjectRef | undefined, effects: Effect[]): Promise<EffectOutcome[]> {
    return effects.map((effect) => ({ effect, result: 'applied' }))
  }
}

const FIXTURE = 'ephemeraljob/sync-new.v2.json'
const realClock = { clock: () => new Date() }

t.test('pinnedClock reads the header, else the query; RFC 3339 only; never where effects are applied', async (t) => {
  t.same(pinnedClock(undefined, undefined, true), { pinned: false })
  t.same(
    pinnedClock('2026-01-02T03:04:05Z', '2027-01-01T00:00:00Z', true),
    { pinned: true, now: new Date('2026-01-02T03:04:05Z') },
    'the header wins'
  )
  t.same(pinnedClock(undefined, '2026-01-02T03:04:05.5+01:00', true), {
    pinned: true,
    now: new Date('2026-01-02T02:04:05.500Z'),
  })
  t.match(pinnedClock('yesterday', undefined, true), { pinned: true, problem: /RFC 3339/ })
  t.match(
    pinnedClock('2026-01-02', undefined, true),
    { pinned: true, problem: /RFC 3339/ },
    'a date alone is not a time'
  )
  t.match(pinnedClock('2026-01-02T03:04:05Z', undefined, false), {
    pinned: true,
    problem: /without cluster credentials/,
  })
})

t.test('a fixture curled today with its clock pinned answers what it answered on the day it was made', async (t) => {
  const pinned = await testApp(t, realClock)
  const then = await testApp(t)
  const body = fixture(FIXTURE)
  const expected = await then.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: body })
  const byHeader = await pinned.inject({
    method: 'POST',
    url: '/hooks/ephemeraljob/sync',
    payload: body,
    headers: { 'x-jobhooks-now': FIXED_NOW.toISOString() },
  })
  const byQuery = await pinned.inject({
    method: 'POST',
    url: `/hooks/ephemeraljob/sync?now=${FIXED_NOW.toISOString()}`,
    payload: body,
  })
  const today = await pinned.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: body })
  t.equal(expected.statusCode, 200)
  t.equal(byHeader.body, expected.body, 'x-jobhooks-now: the same answer, byte for byte')
  t.equal(byQuery.body, expected.body, '?now=: the same')
  t.not(
    today.body,
    expected.body,
    "without the pin, the answer of today differs (the fixture's TTL has passed): the pin is what makes it reproducible"
  )
  const customize = await pinned.inject({
    method: 'POST',
    url: '/hooks/ephemeraljob/customize',
    payload: fixture('ephemeraljob/customize.json'),
    headers: { 'x-jobhooks-now': FIXED_NOW.toISOString() },
  })
  t.equal(customize.statusCode, 200, 'customize takes the pin too')
})

t.test('a bad pin, or any pin on a service that applies effects, gets 400 and runs no hook', async (t) => {
  const local = await testApp(t, realClock)
  const bad = await local.inject({
    method: 'POST',
    url: '/hooks/ephemeraljob/sync',
    payload: fixture(FIXTURE),
    headers: { 'x-jobhooks-now': 'now' },
  })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { message: /RFC 3339/ })
  const cluster = await testApp(t, { ...realClock, effects: new AppliesToACluster() })
  for (const hook of ['sync', 'customize']) {
    const answer = await cluster.inject({
      method: 'POST',
      url: `/hooks/ephemeraljob/${hook}`,
      payload: fixture(hook === 'sync' ? FIXTURE : 'ephemeraljob/customize.json'),
      headers: { 'x-jobhooks-now': FIXED_NOW.toISOString() },
    })
    t.equal(answer.statusCode, 400, `${hook}: refused`)
    t.match(answer.json(), { message: /without cluster credentials/ })
  }
  const metrics = await cluster.inject({ method: 'GET', url: '/metrics' })
  t.match(
    metrics.body,
    /jobhooks_hook_calls_total\{kind="ephemeraljob",hook="sync",outcome="bad_request"\} 1/,
    'counted as a bad request'
  )
})
