// Every kind's sync hook, fed specs a tenant could write (fast-check, a fixed seed and a bounded
// count here; `npm run fuzz` runs longer): whatever the spec, the service answers (a sync answer
// or a clear 4xx, never a 5xx or a crash), and a spec it refuses keeps every observed child
// (law 2). The properties run through the app, as Metacontroller calls it.
import t from 'tap'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { testApp } from './helpers/app.js'
import { fixture } from './helpers/fixtures.js'
import { fuzzSettings, hostileWhens, multiplying, mutated, specMutations, whenExpression } from './helpers/fuzz.js'
import type { SyncRequest } from '../src/protocol/hooks.js'
import type { KubeObject } from '../src/k8s/types.js'
import { MAX_ANSWER_BYTES } from '../src/controllers/common/answer-size.js'

/** The fixtures the properties start from: each kind with observed children where it has any. */
const STARTS: ReadonlyArray<{ kind: string, fixture: string }> = [
  { kind: 'jobflow', fixture: 'jobflow/sync-job1-done.v2.json' },
  { kind: 'daemonjob', fixture: 'daemonjob/sync-running.v2.json' },
  { kind: 'collaset', fixture: 'collaset/sync-steady.v2.json' },
  { kind: 'operationjob', fixture: 'operationjob/sync-new.v2.json' },
  { kind: 'ephemeraljob', fixture: 'ephemeraljob/sync-running.v2.json' }
]

interface Condition { type: string, status: string, message?: string }

interface Answer {
  statusCode: number
  body: string
  json?: { status?: { conditions?: Condition[] }, children?: KubeObject[] }
}

async function sync (app: FastifyInstance, kind: string, request: SyncRequest): Promise<Answer> {
  const response = await app.inject({ method: 'POST', url: `/hooks/${kind}/sync`, payload: request as object })
  const answer: Answer = { statusCode: response.statusCode, body: response.body }
  if (response.statusCode === 200) answer.json = JSON.parse(response.body) as Answer['json']
  return answer
}

/** The observed children of a request, as `Kind/name`. */
function observedChildren (request: SyncRequest): string[] {
  return Object.values(request.children ?? {}).flatMap(byName =>
    Object.values(byName).map(child => `${child.kind}/${child.metadata.name}`))
}

/** Why an answer breaks the contract, or undefined when it keeps it. */
function contractBroken (request: SyncRequest, answer: Answer): string | undefined {
  if (answer.statusCode >= 500) return `answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`
  if (answer.statusCode !== 200) {
    const message = (JSON.parse(answer.body) as { message?: unknown }).message
    return typeof message === 'string' && message !== '' ? undefined : `a ${answer.statusCode} without a message`
  }
  const valid = answer.json?.status?.conditions?.find(c => c.type === 'Valid')
  if (valid?.status !== 'False') return undefined
  if (valid.message === undefined || valid.message === '') return 'Invalid without a message'
  const answered = new Set((answer.json?.children ?? []).map(c => `${c.kind}/${c.metadata.name}`))
  const dropped = observedChildren(request).filter(child => !answered.has(child))
  return dropped.length === 0 ? undefined : `Invalid (${valid.message}) and dropped ${dropped.join(', ')}`
}

t.test('any spec of any kind: an answer or a clear 4xx, and an invalid one keeps its children', async t => {
  const app = await testApp(t)
  for (const start of STARTS) {
    const base = fixture(start.fixture)
    const property = fc.asyncProperty(specMutations(base.parent.spec), async mutations => {
      const request = { ...base, parent: { ...base.parent, spec: mutated(base.parent.spec, mutations) } }
      const broken = contractBroken(request, await sync(app, start.kind, request))
      if (broken !== undefined) throw new Error(broken)
    })
    await t.resolves(fc.assert(property, fuzzSettings(60)), start.kind)
  }
})

/** job1 succeeded and wrote 1,000 a's and a '!' as its output: the text a backtracking regex chokes on. */
function outputsOfAs (): SyncRequest {
  const request = fixture('jobflow/sync-outputs.v2.json')
  for (const pod of Object.values(request.related?.['Pod.v1'] ?? {})) {
    const statuses = (pod.status as { containerStatuses?: Array<{ state?: { terminated?: { message?: string } } }> })
      .containerStatuses ?? []
    for (const status of statuses) {
      if (status.state?.terminated?.message !== undefined) status.state.terminated.message = `${'a'.repeat(1000)}!`
    }
  }
  return request
}

t.test('any when a tenant writes: an answer, and a refusal names why', async t => {
  const app = await testApp(t)
  const base = outputsOfAs()
  const property = fc.asyncProperty(whenExpression('job1'), async when => {
    const spec = structuredClone(base.parent.spec) as { flows: Array<Record<string, unknown>> }
    ;(spec.flows[1] as Record<string, unknown>).when = when
    const request = { ...base, parent: { ...base.parent, spec } }
    const broken = contractBroken(request, await sync(app, 'jobflow', request))
    if (broken !== undefined) throw new Error(`${broken}\nwhen: ${when}`)
  })
  const examples = hostileWhens('job1').map(when => [when] as [string])
  await t.resolves(fc.assert(property, { ...fuzzSettings(150), examples }))
})

t.test('bytes that multiply: an answer within the budget, or Invalid naming the product', async t => {
  const app = await testApp(t)
  const base = fixture('jobflow/sync-job1-done.v2.json')
  const property = fc.asyncProperty(multiplying, async ({ valueBytes, items }) => {
    const spec = structuredClone(base.parent.spec) as {
      globalParams: { env: Array<{ name: string, value: string }> }, flows: Array<Record<string, unknown>>
    }
    spec.globalParams.env.push({ name: 'BIG', value: 'x'.repeat(valueBytes) })
    ;(spec.flows[3] as Record<string, unknown>).forEach = Array.from({ length: items }, (_, i) => `item-${i}`)
    const request = { ...base, parent: { ...base.parent, spec } }
    const answer = await sync(app, 'jobflow', request)
    const broken = contractBroken(request, answer) ??
      (answer.body.length > MAX_ANSWER_BYTES ? `an answer of ${answer.body.length} bytes, over the budget` : undefined)
    if (broken !== undefined) throw new Error(`${broken} (${valueBytes} B × ${items} items)`)
    const valid = answer.json?.status?.conditions?.find(c => c.type === 'Valid')
    if (valueBytes * items > MAX_ANSWER_BYTES && !/items.*over the limit/.test(valid?.message ?? '')) {
      throw new Error(`${valueBytes} B × ${items} items answered without naming the product: ${String(valid?.message)}`)
    }
  })
  await t.resolves(fc.assert(property, fuzzSettings(12)))
})
