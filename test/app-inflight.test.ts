// Load shedding at the HTTP layer: the bytes of sync and finalize calls in flight stay under the
// budget; a call that would pass it is answered 429 with Retry-After at once, before its body is
// read, and counted; the bytes come back when a call is answered or abandoned.
import t, { type Test } from 'tap'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { testApp } from './helpers/app.js'
import { fixture } from './helpers/fixtures.js'
import { heldExecutor } from './helpers/held-executor.js'
import { createHookGuard } from '../src/trust/guard.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const body = JSON.stringify(fixture('daemonjob/sync-new.v2.json'))
const BYTES = Buffer.byteLength(body)
const post = (url = '/hooks/daemonjob/sync') => ({
  method: 'POST' as const,
  url,
  headers: { 'content-type': 'application/json' },
  payload: body
})
const metric = async (app: any, name: string): Promise<string> =>
  ((await app.inject({ url: '/metrics' })).body as string)
    .split('\n')
    .filter(l => l.startsWith(name))
    .join('\n')
const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise(resolve => setImmediate(resolve))
}

async function heldApp (t: Test, budget: number) {
  const effects = heldExecutor()
  const app = await testApp(t, { effects, inflightBudget: budget })
  return { app, effects }
}

t.test(
  'a call past the budget gets 429 with Retry-After and a JSON message; once the first is answered, calls pass again',
  async t => {
    const { app, effects } = await heldApp(t, BYTES + 10)
    const first = app.inject(post())
    await until(() => effects.waiting() === 1)
    t.match(
      await metric(app, 'jobhooks_inflight_request_bytes'),
      new RegExp(`jobhooks_inflight_request_bytes ${BYTES}$`),
      "the first call's bytes are in flight"
    )

    const shed = await app.inject(post())
    t.equal(shed.statusCode, 429)
    t.equal(shed.headers['retry-after'], '2', 'Metacontroller comes back in 2 s')
    t.not(
      shed.headers.connection,
      'close',
      'the connection stays open, so the client reads the 429 rather than a reset'
    )
    t.match(shed.json(), {
      statusCode: 429,
      error: 'Too Many Requests',
      message: /MiB of hook requests are being answered \(budget \d+ MiB\): come back in 2 s/
    })
    const finalize = await app.inject(post('/hooks/operationjob/finalize'))
    t.equal(finalize.statusCode, 429, 'finalize calls are charged too')
    const customize = await app.inject({
      method: 'POST',
      url: '/hooks/daemonjob/customize',
      payload: fixture('daemonjob/customize.json')
    })
    t.equal(customize.statusCode, 200, 'customize carries only the parent: never shed')

    effects.open()
    t.equal((await first).statusCode, 200, 'the admitted call is answered')
    t.equal((await app.inject(post())).statusCode, 200, 'its bytes came back: the next call passes')
    t.match(
      await metric(app, 'jobhooks_hook_calls_total{kind="daemonjob",hook="sync",outcome="shed"}'),
      / 1$/,
      'shed calls are counted'
    )
    t.match(await metric(app, 'jobhooks_hook_calls_total{kind="operationjob",hook="finalize",outcome="shed"}'), / 1$/)
    t.match(await metric(app, 'jobhooks_inflight_request_bytes'), / 0$/, 'nothing in flight')
    t.match(await metric(app, 'jobhooks_inflight_budget_bytes'), new RegExp(` ${BYTES + 10}$`))
  }
)

t.test('calls that fit together run together', async t => {
  const { app, effects } = await heldApp(t, 3 * BYTES)
  const calls = [app.inject(post()), app.inject(post()), app.inject(post())]
  await until(() => effects.waiting() === 3)
  t.equal((await app.inject(post())).statusCode, 429, 'the fourth does not fit')
  effects.open()
  t.same(
    (await Promise.all(calls)).map(r => r.statusCode),
    [200, 200, 200]
  )
})

t.test('a call without the token is refused 401 before it could take any of the budget', async t => {
  const file = join(t.testdir({}), 'token')
  const token = 'a'.repeat(40)
  writeFileSync(file, token)
  const effects = heldExecutor()
  const app = await testApp(t, {
    effects,
    inflightBudget: BYTES,
    guard: createHookGuard({ tokenFile: file, clientCertificate: false, reloadMs: 0 })
  })
  const first = app.inject({ ...post(), headers: { ...post().headers, authorization: `Bearer ${token}` } })
  await until(() => effects.waiting() === 1)
  t.equal((await app.inject(post())).statusCode, 401, 'not 429: who may call comes first')
  effects.open()
  await first
})

t.test(
  'over a real socket: the 429 comes while the body is still unsent, and the abandoned call gives its bytes back',
  async t => {
    const { app, effects } = await heldApp(t, 1000)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    t.ok(address.startsWith('http://127.0.0.1:'))
    const { port } = app.server.address() as AddressInfo
    // The first call sends its headers and a little of its body, then nothing: it holds its bytes.
    const held = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/hooks/daemonjob/sync',
      headers: { 'content-type': 'application/json', 'content-length': '900' }
    })
    held.on('error', () => {})
    held.write('{"parent":')
    await new Promise(resolve => setTimeout(resolve, 50))
    const answer = await new Promise<{ status: number; retryAfter: string | undefined }>((resolve, reject) => {
      const second = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/hooks/daemonjob/sync',
          headers: { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) }
        },
        response => {
          response.resume()
          resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] })
          // The service would read the 50 MiB and throw them away; this client gives up instead.
          second.destroy()
        }
      )
      second.on('error', reject)
      second.flushHeaders() // headers only: not one byte of the 50 MiB body is ever sent
    })
    t.same(answer, { status: 429, retryAfter: '2' }, 'answered from the headers alone')
    held.destroy()
    await new Promise(resolve => setTimeout(resolve, 100))
    t.match(await metric(app, 'jobhooks_inflight_request_bytes'), / 0$/, 'the abandoned call gave its bytes back')
    effects.open()
  }
)

t.test('over a real socket: a client that writes its whole body still reads the 429, never a reset', async t => {
  // Metacontroller's Go client writes the body while it waits for the answer; had the service
  // closed the connection on unread bytes, the client could see the reset before the 429.
  const { app, effects } = await heldApp(t, 1000)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const held = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/hooks/daemonjob/sync',
    headers: { 'content-type': 'application/json', 'content-length': '900' }
  })
  held.on('error', () => {})
  held.write('{"parent":')
  await new Promise(resolve => setTimeout(resolve, 50))
  const large = Buffer.alloc(32 * 1024 * 1024, 0x20)
  const answer = await new Promise<{ status: number; written: boolean }>((resolve, reject) => {
    const call = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/hooks/daemonjob/sync',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(large.length) }
      },
      response => {
        response.resume()
        response.on('end', () => {
          if (call.writableFinished) resolve({ status: response.statusCode ?? 0, written: true })
          else call.on('finish', () => resolve({ status: response.statusCode ?? 0, written: true }))
        })
      }
    )
    call.on('error', reject)
    call.end(large)
  })
  t.same(answer, { status: 429, written: true }, 'the whole body went out and the 429 came back')
  held.destroy()
  effects.open()
})
