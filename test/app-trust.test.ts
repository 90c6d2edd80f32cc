// The HTTP layer's trust boundary, through app.inject(): hook calls without the token are refused
// before their body is read and make nothing happen; health and metrics stay open; refusals are
// counted and logged without flooding. And `?effects=show`, the effects of a call beside its answer.
import t, { type Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { testApp } from './helpers/app.js'
import { fixture } from './helpers/fixtures.js'
import { RecordingExecutor } from '../src/effects/dry-run.js'
import { createHookGuard } from '../src/trust/guard.js'

const TOKEN = '6f0c2b9e4d1a7c3e5b8f0a2d4c6e8b1f3a5c7e9d0b2f4a6c8e0d2b4f6a8c0e2d'

/** An app that asks for TOKEN, with a recording executor and the warnings it logs. */
async function guardedApp (t: Test) {
  const file = join(t.testdir({}), 'token')
  writeFileSync(file, `${TOKEN}\n`)
  const guard = createHookGuard({ tokenFile: file, clientCertificate: false, reloadMs: 0 })
  const effects = new RecordingExecutor()
  const lines: any[] = []
  const stream = new Writable({
    write (chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    }
  })
  const app = await testApp(t, { guard, effects, logger: { level: 'warn', stream } })
  return { app, effects, lines }
}

const sync = '/hooks/ephemeraljob/sync'
const bearer = { authorization: `Bearer ${TOKEN}` }

t.test('a hook call without the token gets 401 with a JSON message, and no effect', async t => {
  const { app, effects } = await guardedApp(t)
  const refused = await app.inject({ method: 'POST', url: sync, payload: fixture('ephemeraljob/sync-new.v2.json') })
  t.equal(refused.statusCode, 401)
  t.same(refused.json(), {
    statusCode: 401,
    error: 'Unauthorized',
    message: 'hook calls must carry Authorization: Bearer <token>'
  })
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="jobhooks"')
  t.equal(refused.headers.connection, 'close', 'the rest of a large body is not read')
  t.equal(effects.recorded.length, 0, 'nothing was injected')

  const allowed = await app.inject({
    method: 'POST',
    url: sync,
    headers: bearer,
    payload: fixture('ephemeraljob/sync-new.v2.json')
  })
  t.equal(allowed.statusCode, 200)
  t.ok(effects.recorded.length > 0, 'with the token, the same call injects')
})

t.test('anything but Authorization: Bearer <the token> is refused, before the body is parsed', async t => {
  const { app } = await guardedApp(t)
  const attempts: Array<[string, Record<string, string>, string]> = [
    ['no header', {}, sync],
    ['a wrong token', { authorization: `Bearer ${TOKEN.slice(1)}0` }, sync],
    ['another scheme', { authorization: `Basic ${Buffer.from(`metacontroller:${TOKEN}`).toString('base64')}` }, sync],
    ['the token in a query string', {}, `${sync}?token=${TOKEN}&access_token=${TOKEN}`],
    ['the customize hook without it', {}, '/hooks/ephemeraljob/customize']
  ]
  for (const [what, headers, url] of attempts) {
    const reply = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      payload: '{ not json'
    })
    t.equal(reply.statusCode, 401, `${what}: 401, not the 400 a parsed body would get`)
    t.equal(reply.json().statusCode, 401)
  }
  const parsed = await app.inject({
    method: 'POST',
    url: sync,
    headers: { 'content-type': 'application/json', ...bearer },
    payload: '{ not json'
  })
  t.equal(parsed.statusCode, 400, 'with the token, the body is read (and this one is garbage)')
})

t.test('health and metrics stay open; refusals are counted by reason', async t => {
  const { app } = await guardedApp(t)
  for (const url of ['/healthz', '/readyz', '/metrics']) {
    t.equal((await app.inject({ method: 'GET', url })).statusCode, 200, `${url} needs no token`)
  }
  await app.inject({ method: 'POST', url: sync, payload: {} })
  await app.inject({ method: 'POST', url: sync, payload: {} })
  await app.inject({ method: 'POST', url: sync, headers: { authorization: 'Bearer nope' }, payload: {} })
  await app.inject({ method: 'POST', url: sync, headers: { authorization: 'Token nope' }, payload: {} })
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /jobhooks_hook_refusals_total\{reason="missing_token"\} 2/)
  t.match(metrics, /jobhooks_hook_refusals_total\{reason="wrong_token"\} 1/)
  t.match(metrics, /jobhooks_hook_refusals_total\{reason="wrong_scheme"\} 1/)
  t.notMatch(metrics, /jobhooks_hook_calls_total\{kind="ephemeraljob"/, 'a refused call is no hook call')
})

t.test('refusals are logged once per source per interval, without the query string', async t => {
  const { app, lines } = await guardedApp(t)
  for (let i = 0; i < 5; i++) await app.inject({ method: 'POST', url: `${sync}?token=${TOKEN}`, payload: {} })
  const refusals = lines.filter(l => l.msg === 'hook call refused: it did not prove it comes from Metacontroller')
  t.equal(refusals.length, 1, 'one line for five refusals from one source')
  t.match(refusals[0], { source: '127.0.0.1', reason: 'missing_token', route: sync, refusedSinceLastLine: 0 })
  t.notMatch(JSON.stringify(lines), TOKEN, 'the token never reaches the log')
})

t.test(
  '?effects=show adds the effects as the executor sends them; without it the answer is as Metacontroller gets it',
  async t => {
    const app = await testApp(t)
    const plain = await app.inject({ method: 'POST', url: sync, payload: fixture('ephemeraljob/sync-new.v2.json') })
    const shown = await app.inject({
      method: 'POST',
      url: `${sync}?effects=show`,
      payload: fixture('ephemeraljob/sync-new.v2.json')
    })
    t.equal(plain.statusCode, 200)
    t.equal(shown.statusCode, 200)
    const { effects, ...rest } = shown.json()
    t.notOk('effects' in plain.json(), 'no effects field for Metacontroller')
    t.same(rest, plain.json(), 'the same status and children')
    t.ok(effects.length > 0)
    const pod = fixture('ephemeraljob/sync-new.v2.json').related['Pod.v1']?.['default/helloworld-865cd8865b-nl8lq']
    t.match(effects[0], {
      effect: /^inject .* into Pod default\/helloworld-865cd8865b-/,
      result: 'dry_run',
      method: 'PATCH',
      path: /^\/api\/v1\/namespaces\/default\/pods\/helloworld-865cd8865b-[a-z0-9]+\/ephemeralcontainers$/,
      body: {
        metadata: { uid: /./ },
        spec: { ephemeralContainers: [{ env: [{ name: 'ephemeraljob', value: 'hello-world-ephemeral-job' }] }] }
      }
    })
    t.equal(effects[0].body.metadata.uid, pod?.metadata.uid, "guarded by the observed Pod's UID")
    t.match(
      rest.status.conditions.find((c: any) => c.type === 'EffectsApplied'),
      { status: 'False', reason: 'DryRun' }
    )
  }
)
