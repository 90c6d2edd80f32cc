// The hook thread (src/thread/hook-thread.ts): the same answers as hooks run on the app's own
// thread, byte for byte; the app's event loop free while a hook holds the thread; a thread that
// holds a call past the deadline (a fake clock) or dies is replaced, its call answered 503.
import t, { type Test } from 'tap'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { setImmediate as turn } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { testApp, FIXED_NOW } from '../helpers/app.js'
import { fixture, FIXTURES } from '../helpers/fixtures.js'
import type { WatchdogClock } from '../../src/thread/hook-thread.js'
import type { AppOptions } from '../../src/app.js'

const KINDS_MODULE = new URL('../helpers/thread-kinds.ts', import.meta.url).href
const headers = { 'content-type': 'application/json' }

interface Held {
  app: FastifyInstance
  flags: Int32Array
  /** Resolves once the thread holds the `hold` call. */
  holding: () => Promise<void>
}

/** An app whose hooks run on a thread serving the test kinds, and the flags that hold them. */
async function heldApp (t: Test, options: AppOptions = {}, clock?: WatchdogClock): Promise<Held> {
  const shared = new SharedArrayBuffer(8)
  const flags = new Int32Array(shared)
  const thread = {
    kindsModule: KINDS_MODULE,
    kindsExport: 'kinds',
    now: FIXED_NOW,
    extra: shared,
    ...(clock !== undefined ? { clock } : {})
  }
  const app = await testApp(t, { ...options, thread })
  // Whatever holds at the end is let go, so that the thread can close.
  t.teardown(() => { Atomics.store(flags, 0, 1); Atomics.notify(flags, 0) })
  const holding = async (): Promise<void> => {
    while (Atomics.load(flags, 1) === 0) await turn()
  }
  return { app, flags, holding }
}

/** A JobFlow first sync (test/fixtures/jobflow/sync-new.v2.json) whose parent is called `name`. */
function flowNamed (name: string): Record<string, unknown> {
  const request = fixture<Record<string, any>>('jobflow/sync-new.v2.json')
  request.parent.metadata.name = name
  return request
}

const post = async (app: FastifyInstance, payload: unknown, url = '/hooks/jobflow/sync') =>
  await app.inject({ method: 'POST', url, payload: payload as object, headers })

t.test('every fixture gets the same answer, byte for byte, as on the app\'s own thread', async t => {
  const inline = await testApp(t)
  const threaded = await testApp(t, { thread: { now: FIXED_NOW } })
  const paths = readdirSync(FIXTURES, { withFileTypes: true })
    .filter(entry => entry.isDirectory())
    .flatMap(dir => readdirSync(join(FIXTURES, dir.name)).map(file => `${dir.name}/${file}`))
    .filter(path => /\/(sync|finalize)-/.test(path))
  t.ok(paths.length > 40, `${paths.length} fixtures`)
  for (const path of paths) {
    const [kind, file] = path.split('/') as [string, string]
    const url = `/hooks/${kind}/${file.startsWith('finalize') ? 'finalize' : 'sync'}?effects=show`
    const payload = fixture(path)
    const [a, b] = [await post(inline, payload, url), await post(threaded, payload, url)]
    t.equal(b.statusCode, a.statusCode, `${path}: status`)
    t.equal(b.body, a.body, `${path}: answer`)
  }
  const garbage = await threaded.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: '{"parent":', headers })
  t.equal(garbage.statusCode, 400, 'a body that is not JSON is refused by the thread, as here')
  const refused = await inline.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: '{"parent":', headers })
  t.equal(garbage.body, refused.body)
  const metrics = (await threaded.inject('/metrics')).body
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="bad_request"\} 1/,
    'the calls are counted where they arrive')
  t.match(metrics, /jobhooks_effects_total\{[^}]*result="dry_run"\} [1-9]/, 'the effects too: the app applies them')
})

t.test('while a hook holds the thread, the app still answers /readyz and /metrics', async t => {
  const { app, flags, holding } = await heldApp(t)
  let answered = false
  const held = post(app, flowNamed('hold')).then(response => { answered = true; return response })
  await holding()
  t.equal((await app.inject('/readyz')).statusCode, 200, '/readyz answers')
  t.equal((await app.inject('/metrics')).statusCode, 200, '/metrics answers')
  t.notOk(answered, 'and all that while, the held call is unanswered')
  Atomics.store(flags, 0, 1)
  Atomics.notify(flags, 0)
  const response = await held
  t.equal(response.statusCode, 200, 'let go, it is answered')
  t.equal(JSON.parse(response.body).status.phase, 'Pending')
})

t.test('a thread that holds a call past the deadline is stopped, and the next call gets a new one', async t => {
  let now = 0
  let tick = (): void => {}
  const clock: WatchdogClock = { now: () => now, repeat: fn => { tick = fn; return { stop: () => {} } } }
  const { app, holding } = await heldApp(t, {}, clock)
  const held = post(app, flowNamed('hold'))
  await holding()
  now += 9_000
  tick()
  now += 1_000
  tick()
  now += 1
  tick()
  const response = await held
  t.equal(response.statusCode, 503)
  t.match(JSON.parse(response.body).message, /a hook held the hook thread for over 10 s: stopped; nothing was changed/)
  const next = await post(app, flowNamed('next'))
  t.equal(next.statusCode, 200, 'a new thread answers the next call')
  const metrics = (await app.inject('/metrics')).body
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="error"\} 1/)
})

t.test('a thread that dies mid-call is replaced; its call is answered 503', async t => {
  const { app } = await heldApp(t)
  const died = await post(app, flowNamed('die'))
  t.equal(died.statusCode, 503)
  t.match(JSON.parse(died.body).message, /the hook thread exited \(code 7\)/)
  t.equal((await post(app, flowNamed('next'))).statusCode, 200)
})
