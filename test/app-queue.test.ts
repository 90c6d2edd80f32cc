// Shedding by cost: each sync and finalize call is queued with its expected time (its body and the
// new children its answer will carry, at the queue's rate) before its hook runs; a call whose
// expected wait plus its own would pass the wait budget is answered 429 at once, unless nothing is
// ahead of it. The rate is fixed here, so that what is shed does not depend on this machine.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { testApp } from './helpers/app.js'
import { fixture } from './helpers/fixtures.js'
import { heldExecutor, until } from './helpers/held-executor.js'
import type { SyncRequest } from '../src/protocol/hooks.js'
import { expectedNewChildBytes } from '../src/controllers/answer-size.js'
import { WorkQueue } from '../src/protocol/work-queue.js'

const request = fixture('daemonjob/sync-new.v2.json') as SyncRequest
const body = JSON.stringify(request)
const COST = WorkQueue.costOf(Buffer.byteLength(body), expectedNewChildBytes('daemonjob', request))
const post = () => ({
  method: 'POST' as const,
  url: '/hooks/daemonjob/sync',
  headers: { 'content-type': 'application/json' },
  payload: body
})
/** A queue on which one call of the fixture is expected to take `ms`. */
const queue = (ms: number, waitBudgetMs: number) => ({ waitBudgetMs, msPerByte: ms / COST, learn: false })

t.test('the fixture expects new children: its cost weighs them', async t => {
  t.ok(expectedNewChildBytes('daemonjob', request) > 0)
})

t.test('a burst past the wait budget: the first calls are served, the later shed with 429 at once', async t => {
  const effects = heldExecutor()
  // 400 ms a call, 1 s of budget: the first runs, the second waits 400 ms (800 with its own), the rest would wait 800+.
  const app = await testApp(t, { effects, queue: queue(400, 1000) })
  let settled = 0
  const calls = Array.from({ length: 5 }, async () => await app.inject(post()).finally(() => { settled++ }))
  // Every call either answered or queued (without the queue: all five queued, none answered).
  await until(() => settled + app.workQueue.waiting === 5 && effects.waiting() > 0)
  t.equal(app.workQueue.waiting, 2, 'two calls queued, unanswered, while the rest were answered')
  t.equal(Math.round(app.workQueue.waitingMs), 800)
  effects.open()
  const answers = await Promise.all(calls)
  t.same(answers.map(a => a.statusCode), [200, 200, 429, 429, 429], 'served in arrival order, the rest shed')
  const shed = answers[4]
  t.equal(shed?.headers['retry-after'], '2')
  t.match(shed?.json(), {
    statusCode: 429,
    error: 'Too Many Requests',
    message: new RegExp('^2 hook calls are queued, about 0\\.8 s of work; with this one\'s 0\\.4 s that passes ' +
      'the wait budget of 1\\.0 s: come back in 2 s$')
  })
  t.equal(app.workQueue.waiting, 0, 'every cost came back once answered')
  t.equal(app.workQueue.waitingMs, 0)
  const metrics = (await app.inject({ url: '/metrics' })).body
  t.match(metrics, /jobhooks_hook_calls_total\{kind="daemonjob",hook="sync",outcome="shed"\} 3\n/, 'sheds are counted')
  t.equal((await app.inject(post())).statusCode, 200, 'with the queue empty, the next call runs')
})

t.test('a call alone is served, however long it is expected to take', async t => {
  const app = await testApp(t, { queue: queue(60_000, 1000) })
  t.equal((await app.inject(post())).statusCode, 200)
  t.equal(app.workQueue.waiting, 0)
})

t.test('calls that fit run one after another, none shed', async t => {
  const app = await testApp(t, { queue: queue(100, 1000) })
  const answers = await Promise.all(Array.from({ length: 5 }, () => app.inject(post())))
  t.same(answers.map(a => a.statusCode), [200, 200, 200, 200, 200])
  t.equal(app.workQueue.waiting, 0)
})

t.test('a call whose client goes away gives its cost back', async t => {
  const effects = heldExecutor()
  const app = await testApp(t, { effects, queue: queue(400, 1000) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const call = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/hooks/daemonjob/sync',
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }
  })
  call.on('error', () => {})
  call.end(body)
  await until(() => effects.waiting() > 0)
  t.equal(app.workQueue.waiting, 1, 'queued while its effects are held')
  call.destroy()
  await until(() => app.workQueue.waiting === 0)
  t.equal(app.workQueue.waitingMs, 0, 'its cost came back when its caller went away')
  effects.open()
})

t.test('the queue learns its rate from the calls answered', async t => {
  const q = new WorkQueue({ waitBudgetMs: 1000, msPerByte: 1 })
  const ticket = q.admit(100)
  if (!('cost' in ticket)) throw new Error('a call alone is admitted')
  q.release(ticket, 50)
  t.equal(q.msPerByte, 0.9, 'a fifth of the way from 1 ms to 0.5 ms a byte')
  q.release(ticket, 0)
  t.equal(q.msPerByte, 0.9, 'a ticket is released once')
  t.equal(q.waiting, 0)
  const fixed = new WorkQueue({ waitBudgetMs: 1000, msPerByte: 1, learn: false })
  const other = fixed.admit(100)
  if ('cost' in other) fixed.release(other, 50)
  t.equal(fixed.msPerByte, 1, 'a fixed rate stays')
})

t.test('a call whose caller went away while it waited passes its turn on', async t => {
  const q = new WorkQueue({ waitBudgetMs: 10_000, msPerByte: 1, learn: false })
  const [first, gone, next] = [q.admit(10), q.admit(10), q.admit(10)]
  if (!('cost' in first) || !('cost' in gone) || !('cost' in next)) throw new Error('all fit the budget')
  t.equal(await q.turn(first), true, 'the first call runs')
  const goneTurn = q.turn(gone)
  const nextTurn = q.turn(next)
  q.release(gone)
  q.release(first, 1)
  t.equal(await goneTurn, false, 'the call whose caller left does not run')
  t.equal(await nextTurn, true, 'the call after it still gets its turn')
  q.release(next, 1)
  t.equal(q.waiting, 0)
})
