import t from 'tap'
import { Writable } from 'node:stream'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { testApp } from './helpers/app.js'
import { context, fixture } from './helpers/fixtures.js'
import { syncJobFlow } from '../src/controllers/jobflow/sync.js'
import { keepAllObserved } from '../src/k8s/objects.js'
import type { KindHooks } from '../src/protocol/hooks.js'

t.test('health, readiness and metrics answer', async t => {
  const app = await testApp(t)
  t.same((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
  t.same((await app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' })
  const metrics = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(metrics.statusCode, 200)
  t.match(metrics.headers['content-type'], /text\/plain/)
  const version = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version
  t.match(
    metrics.body,
    `jobhooks_build_info{version="${String(version)}",node="${process.versions.node}"} 1`,
    'which build answers, and on which Node'
  )
})

t.test('a fixture through HTTP gives the pure hook\'s answer and nothing else', async t => {
  const app = await testApp(t)
  for (const name of ['sync-new.v2.json', 'sync-job1-done.v1.json', 'sync-job2-failed.v2.json', 'sync-cycle.v2.json']) {
    const response = await app.inject({
      method: 'POST',
      url: '/hooks/jobflow/sync',
      payload: fixture(`jobflow/${name}`)
    })
    t.equal(response.statusCode, 200, name)
    const answer = syncJobFlow(fixture(`jobflow/${name}`), context()).response
    t.same(response.json(), JSON.parse(JSON.stringify(answer)), name)
    t.same(
      Object.keys(response.json()).sort(),
      ['children', 'status'],
      `${name}: only the fields a strict v2 decoder accepts`
    )
  }
  const customize = await app.inject({
    method: 'POST',
    url: '/hooks/jobflow/customize',
    payload: fixture('jobflow/customize.json')
  })
  t.same(customize.json(), {
    relatedResources: [
      {
        apiVersion: 'jobhooks.io/v1alpha1',
        resource: 'jobtemplates',
        namespace: 'default',
        names: ['builder', 'tester']
      },
      {
        apiVersion: 'v1',
        resource: 'pods',
        namespace: 'default',
        labelSelector: {
          matchLabels: { 'jobhooks.io/jobflow': 'release' },
          matchExpressions: [{ key: 'jobhooks.io/item-index', operator: 'DoesNotExist' }]
        }
      }
    ]
  })
})

t.test('what is not a hook request gets 400 with a message, never a 500', async t => {
  const app = await testApp(t)
  const bodies: Array<[string, string, RegExp]> = [
    ['malformed JSON', '{"parent": ', /JSON/],
    ['an array', '[1, 2]', /not a hook request: body must be object/],
    ['a string', '"sync"', /not a hook request: body must be object/],
    ['no parent', '{"children": {}}', /not a hook request: body must have required property 'parent'/],
    [
      'a parent without a name',
      '{"parent": {"apiVersion": "v1", "kind": "X", "metadata": {}}}',
      /not a hook request: body\/parent\/metadata must have required property 'name'/
    ],
    [
      'children of the wrong shape',
      '{"parent": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}}, "children": {"Job.batch/v1": [1]}}',
      /not a hook request/
    ],
    ['an empty body', '', /empty|JSON/i]
  ]
  for (const [what, payload, message] of bodies) {
    // customize reads only the parent; everything else matters to sync.
    const urls =
      what === 'children of the wrong shape'
        ? ['/hooks/jobflow/sync']
        : ['/hooks/jobflow/sync', '/hooks/jobflow/customize']
    for (const url of urls) {
      const response = await app.inject({
        method: 'POST',
        url,
        payload,
        headers: { 'content-type': 'application/json' }
      })
      t.equal(response.statusCode, 400, `${what} at ${url}`)
      t.match(response.json(), { statusCode: 400, error: 'Bad Request', message }, `${what} at ${url}`)
    }
  }
})

t.test('a body sent as text (curl -d without a header) is read as JSON', async t => {
  const app = await testApp(t)
  const response = await app.inject({
    method: 'POST',
    url: '/hooks/jobflow/sync',
    payload: JSON.stringify(fixture('jobflow/sync-new.v2.json')),
    headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })
  t.equal(response.statusCode, 200)
  t.equal(response.json().status.phase, 'Pending')
})

t.test('unknown routes get 404 naming the real hooks', async t => {
  const app = await testApp(t)
  for (const url of ['/hooks/nokind/sync', '/hooks/jobflow/finalize', '/hooks/jobflow/nohook']) {
    const response = await app.inject({ method: 'POST', url, payload: {} })
    t.equal(response.statusCode, 404, url)
    t.match(response.json().message, /POST \/hooks\/jobflow\/sync, POST \/hooks\/jobflow\/customize/)
  }
})

t.test('bodyLimit is configurable and large requests fit by default', async t => {
  const small = await testApp(t, { bodyLimit: 1024 })
  const refused = await small.inject({
    method: 'POST',
    url: '/hooks/jobflow/sync',
    payload: fixture('jobflow/sync-job1-done.v2.json')
  })
  t.equal(refused.statusCode, 413)
  t.match(refused.json(), { statusCode: 413, message: /body/i })

  const app = await testApp(t)
  const request = fixture<any>('jobflow/sync-job1-done.v2.json')
  const job = request.children['Job.batch/v1']['default/jobflow-example-job4']
  for (let i = 0; i < 5000; i++) {
    request.children['Job.batch/v1'][`default/other-${i}`] = {
      ...job,
      metadata: { ...job.metadata, name: `other-${i}` }
    }
  }
  const payload = JSON.stringify(request)
  t.ok(payload.length > 10 * 1024 * 1024, `a request of ${Math.round(payload.length / 1024 / 1024)} MiB`)
  const response = await app.inject({
    method: 'POST',
    url: '/hooks/jobflow/sync',
    payload,
    headers: { 'content-type': 'application/json' }
  })
  t.equal(response.statusCode, 200)
})

t.test('an error in a hook keeps every child, reports it in status and answers 200', async t => {
  const broken: KindHooks = {
    kind: 'jobflow', phaseField: 'phase', statusFields: [], sync: () => { throw new Error('boom') }
  }
  const app = await testApp(t, { kinds: [broken] })
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const response = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })
  t.equal(response.statusCode, 200)
  const body = response.json()
  t.same(body.children, JSON.parse(JSON.stringify(keepAllObserved(request.children))))
  t.equal(body.status.phase, 'Invalid')
  t.equal(body.status.startTime, '2026-01-02T03:00:05Z', 'the previous status is kept')
  t.match(
    body.status.conditions.find((c: any) => c.type === 'Valid'),
    { status: 'False', reason: 'InternalError', message: /boom/ }
  )
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="error"\} 1/)
})

t.test('metrics count hook calls and durations by kind, hook and outcome', async t => {
  const app = await testApp(t)
  await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-cycle.v2.json') })
  await app.inject({
    method: 'POST',
    url: '/hooks/jobflow/sync',
    payload: '[]',
    headers: { 'content-type': 'application/json' }
  })
  await app.inject({ method: 'POST', url: '/hooks/jobflow/customize', payload: fixture('jobflow/customize.json') })
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="ok"\} 2/)
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="invalid"\} 1/)
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="sync",outcome="bad_request"\} 1/)
  t.match(metrics, /jobhooks_hook_calls_total\{kind="jobflow",hook="customize",outcome="ok"\} 1/)
  t.match(metrics, /jobhooks_hook_duration_seconds_count\{kind="jobflow",hook="sync",outcome="ok"\} 2/)
  t.match(metrics, /process_cpu_seconds_total/)
})

t.test('one log line per hook call with the parent, outcome and duration', async t => {
  const lines: any[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await testApp(t, { logger: { level: 'info', stream } })
  await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-new.v2.json') })
  await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: fixture('jobflow/sync-cycle.v2.json') })
  await app.inject({
    method: 'POST',
    url: '/hooks/jobflow/sync',
    payload: 'x',
    headers: { 'content-type': 'application/json' }
  })
  await app.inject({ method: 'GET', url: '/healthz' })
  t.equal(lines.length, 3, 'one per hook call, none for health checks')
  t.match(lines[0], {
    level: 30,
    msg: 'hook call',
    kind: 'jobflow',
    hook: 'sync',
    parent: 'default/jobflow-example',
    outcome: 'ok',
    statusCode: 200,
    durationMs: Number
  })
  t.match(lines[1], { level: 40, parent: 'default/jobflow-example', outcome: 'invalid' })
  t.match(lines[2], { level: 40, outcome: 'bad_request', statusCode: 400 })
})

t.test('prototype poisoning is refused whatever the content type says', async t => {
  const app = await testApp(t)
  const payload =
    '{"parent": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}}, "__proto__": {"polluted": true}}'
  for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded']) {
    const response = await app.inject({
      method: 'POST',
      url: '/hooks/jobflow/sync',
      payload,
      headers: { 'content-type': type }
    })
    t.equal(response.statusCode, 400, type)
  }
})
