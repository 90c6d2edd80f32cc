// The hook routes build a request only as far as each kind's reads say (src/k8s/reads.ts,
// src/protocol/projection.ts). The proof that nothing a hook reads is left out: every fixture, and
// every benchmark request at a small size, gets byte for byte the answer the whole request gets,
// and again when its objects come from the memo of what was built (src/protocol/object-memo.ts):
// sent a second time, after every other fixture was, whose objects share many names.
// And a controller whose children Metacontroller would update in a way the kind's answers are not
// safe under gets a 400, not an answer.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { testApp } from './helpers/app.js'
import { FIXTURES } from './helpers/fixtures.js'
import { project } from '../src/protocol/projection.js'
import { syncRequestShape, WHOLE_REQUEST } from '../src/protocol/hooks.js'
import { ALL_KINDS } from '../src/controllers/kinds.js'
import { CASES } from '../bench/kinds.js'
import { jobFlowFixture } from '../bench/fixtures.js'

async function answers (
  read: FastifyInstance,
  whole: FastifyInstance,
  url: string,
  payload: Buffer | string
): Promise<[string, string, number]> {
  const headers = { 'content-type': 'application/json' }
  const a = await read.inject({ method: 'POST', url, payload, headers })
  const b = await whole.inject({ method: 'POST', url, payload, headers })
  return [a.body, b.body, a.statusCode]
}

t.test('every fixture gets the answer its whole request gets, and is read by the projection', async t => {
  const read = await testApp(t)
  const whole = await testApp(t, { keepWhole: true })
  let count = 0
  const first: Array<{ url: string, body: Buffer, answer: string, name: string }> = []
  for (const dir of readdirSync(FIXTURES)) {
    const kind = ALL_KINDS.find(k => k.kind === dir)
    if (kind === undefined) continue
    for (const file of readdirSync(join(FIXTURES, dir))) {
      const hook = file.startsWith('customize') ? 'customize' : file.startsWith('finalize') ? 'finalize' : 'sync'
      const body = readFileSync(join(FIXTURES, dir, file))
      t.doesNotThrow(
        () => project(body, hook === 'customize' ? WHOLE_REQUEST : syncRequestShape(kind.reads)),
        `${dir}/${file} projects`
      )
      const [a, b, status] = await answers(read, whole, `/hooks/${dir}/${hook}?effects=show`, body)
      t.equal(status, 200, `${dir}/${file}`)
      t.equal(a, b, `${dir}/${file}: byte-identical`)
      first.push({ url: `/hooks/${dir}/${hook}?effects=show`, body, answer: a, name: `${dir}/${file}` })
      count++
    }
  }
  t.ok(count >= 40, `${count} fixtures`)
  const hitsBefore = read.wire.memo.hits
  for (const { url, body, answer, name } of first) {
    const again = await read.inject({
      method: 'POST',
      url,
      payload: body,
      headers: { 'content-type': 'application/json' }
    })
    t.equal(again.body, answer, `${name}: the same answer the second time`)
  }
  t.ok(read.wire.memo.hits > hitsBefore, 'objects came from the memo')
})

t.test('every benchmark request, at a small size, gets the answer its whole request gets', async t => {
  // One pair of apps whose clock each request sets: building an app compiles its schemas (0.2 s).
  let now = new Date(0)
  const read = await testApp(t, { clock: () => now })
  const whole = await testApp(t, { clock: () => now, keepWhole: true })
  const requests = [
    ...CASES.map(c => ({ name: c.kind, path: c.path, ...c.build(c.sizes[0] / 5) })),
    { name: 'JobFlow', path: '/hooks/jobflow/sync', ...jobFlowFixture(60) }
  ]
  for (const { name, path, request, now: at } of requests) {
    now = at
    const [a, b, status] = await answers(read, whole, `${path}?effects=show`, JSON.stringify(request))
    t.equal(status, 200, name)
    t.equal(a, b, `${name}: byte-identical`)
    const [again] = await answers(read, whole, `${path}?effects=show`, JSON.stringify(request))
    t.equal(again, a, `${name}: the same answer from the memo`)
  }
  t.ok(read !== whole)
})

t.test('garbage gets the strict parser\'s 400 through either', async t => {
  const read = await testApp(t)
  const whole = await testApp(t, { keepWhole: true })
  for (const payload of [
    '{"parent":',
    'not json',
    '[1,2]',
    '{"parent":{"apiVersion":"v1","kind":"X","metadata":{"name":"a"}},"__proto__":{"x":1}}',
    '{"parent":{"apiVersion":"v1","kind":"X","metadata":{"name":"a"}},"related":{"Node.v1":{"n":{"status":[1,}}}}'
  ]) {
    const [a, b, status] = await answers(read, whole, '/hooks/daemonjob/sync', payload)
    t.equal(status, 400, payload)
    t.equal(a, b, `${payload}: the same message`)
  }
})

t.test('a controller whose child update strategies the kind is not safe under gets a 400 that says why', async t => {
  const app = await testApp(t)
  const request = JSON.parse(readFileSync(join(FIXTURES, 'jobflow', 'sync-new.v2.json'), 'utf8'))
  const [jobs, configMaps] = request.controller.spec.childResources
  t.match([jobs, configMaps], [{ resource: 'jobs' }, { resource: 'configmaps' }])
  for (const method of ['Recreate', 'RollingRecreate', 'RollingInPlace', 'Sideways']) {
    jobs.updateStrategy = { method }
    const reply = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })
    t.equal(reply.statusCode, 400, method)
    t.match(
      reply.json().message,
      new RegExp(`jobflow hooks' answers are not safe under.*jobs\\.batch/v1 \\(${method}; safe: OnDelete, InPlace\\)`),
      method
    )
  }
  // JobFlow answers its Jobs as last applied: InPlace changes only what the answer changes.
  for (const updateStrategy of [undefined, {}, { method: 'OnDelete' }, { method: 'InPlace' }]) {
    jobs.updateStrategy = updateStrategy
    t.equal(
      (await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })).statusCode,
      200,
      JSON.stringify(updateStrategy)
    )
  }
  // Its scripts ConfigMaps come back by identity: OnDelete only.
  configMaps.updateStrategy = { method: 'InPlace' }
  const refused = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })
  t.equal(refused.statusCode, 400)
  t.match(refused.json().message, /configmaps\.v1 \(InPlace; safe: OnDelete\)/)
  t.notMatch(refused.json().message, /jobs\.batch/, 'only what is not safe is named')
  configMaps.updateStrategy = { method: 'OnDelete' }
  delete request.controller
  t.equal(
    (await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })).statusCode,
    200,
    'no controller (a curl of a fixture): answered'
  )

  // DaemonJob answers its Jobs by identity: InPlace would strip them.
  const daemon = JSON.parse(readFileSync(join(FIXTURES, 'daemonjob', 'sync-running.v2.json'), 'utf8'))
  const daemonJobs = daemon.controller.spec.childResources.find((c: { resource: string }) => c.resource === 'jobs')
  daemonJobs.updateStrategy = { method: 'InPlace' }
  const reply = await app.inject({ method: 'POST', url: '/hooks/daemonjob/sync', payload: daemon })
  t.equal(reply.statusCode, 400)
  t.match(
    reply.json().message,
    /daemonjob hooks' answers are not safe under.*jobs\.batch\/v1 \(InPlace; safe: OnDelete\)/
  )
})
