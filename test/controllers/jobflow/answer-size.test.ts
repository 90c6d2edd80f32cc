// Answers within a size budget: a spec whose answer would be too large is Invalid before any Job is
// built, every observed child kept (law 2); a large legal one is answered as before.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { keepAllObserved } from '../../../src/k8s/objects.js'
import { MAX_ANSWER_BYTES } from '../../../src/controllers/common/answer-size.js'
import { responseOf } from '../../helpers/hooks.js'
import { testApp } from '../../helpers/app.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { listOf, type FlowManifest, type JobFlowManifestSpec } from '../../helpers/records.js'
import { specOf } from '../../helpers/objects.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'

const respond = responseOf(syncJobFlow)

/** The spec as these tests edit it: its flows and the global env. */
type SizedSpec = JobFlowManifestSpec & { globalParams: { env?: Array<{ name: string, value: string }> } }

function flowAt (spec: JobFlowManifestSpec, index: number): FlowManifest {
  const flow = spec.flows[index]
  if (flow === undefined) throw new Error(`no flow ${index}`)
  return flow
}

/**
 * job1 and job4 observed (job1 done): job2 is due, made a fan-out of `items`, with a value of
 * `envBytes` in globalParams.
 */
function fanOutRequest (items: number, envBytes: number): SyncRequest {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const spec = specOf<SizedSpec>(request.parent)
  spec.globalParams.env?.push({ name: 'BIG', value: 'x'.repeat(envBytes) })
  flowAt(spec, 1).forEach = Array.from({ length: items }, (_, i) => `item-${i}`)
  return request
}

t.test('200 KB of env × 2,000 items is Invalid, names the product, keeps every child', async t => {
  const request = fanOutRequest(2000, 200_000)
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  t.same(response.children.map(c => c.metadata.name), keepAllObserved(request.children).map(c => c.metadata.name),
    'every observed child kept, nothing created')
  const valid = condition(response.status, 'Valid') as { message: string, reason: string }
  t.equal(valid.reason, 'InvalidSpec')
  t.match(valid.message, new RegExp('^the answer would be about 38\\d MiB \\(the Jobs of step "job2": 19\\d KiB ' +
    '\\(globalParams\\.env 19\\d KiB × 1 container, template \\d+ B, its item up to \\d+ B\\) × 2,000 items, ' +
    'beside 2 observed children kept\\), over the limit of 64 MiB for an answer$'))
  t.ok(JSON.stringify(response).length < 20 * 1024 * 1024, 'the answer is small: no Job of the fan-out was built')
  const held = listOf<JobRecord>(response.status, 'jobs').filter(j => j.phase === 'Pending')
  t.ok(held.length > 0 && held.every(j => /held by the invalid spec: the answer would be/.test(j.message ?? '')))
})

t.test('one Job over what etcd admits is Invalid', async t => {
  const request = fanOutRequest(1, 1_600_000)
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  const valid = condition(response.status, 'Valid') as { message: string }
  t.match(valid.message,
    /the Jobs of step "job2" would weigh about 1\.5 MiB each .*over the limit of 1\.5 MiB for one object \(etcd's\)/)
  t.equal(response.children.length, 2)
})

t.test('many steps each copying the global env add up', async t => {
  const request = fixture('jobflow/sync-new.v2.json')
  const spec = specOf<SizedSpec>(request.parent)
  const template = flowAt(spec, 0).jobTemplate
  spec.globalParams = { env: [{ name: 'BIG', value: 'x'.repeat(300_000) }] }
  spec.flows = Array.from({ length: 300 }, (_, i) => ({ name: `s${i}`, jobTemplate: template }))
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  const valid = condition(response.status, 'Valid') as { message: string }
  t.match(valid.message,
    /about 8\d MiB \(the Jobs of 300 steps: 29\d KiB \(globalParams\.env 29\d KiB × 1 container, .*\) × 300 steps\)/)
  t.same(response.children, [])
})

t.test('a large legal fan-out is answered in full, within the budget', async t => {
  const request = fanOutRequest(2000, 20_000)
  const response = respond(request, context())
  t.not(response.status.phase, 'Invalid')
  t.equal(response.children.filter(c => c.kind === 'Job').length, 2002)
  const bytes = JSON.stringify(response.children).length
  t.ok(bytes > 32 * 1024 * 1024 && bytes < MAX_ANSWER_BYTES, `${bytes} bytes: the estimate let it through`)
})

t.test('the same env in one Job fits', async t => {
  const request = fanOutRequest(2000, 200_000)
  delete flowAt(specOf<JobFlowManifestSpec>(request.parent), 1).forEach
  const response = respond(request, context())
  t.not(response.status.phase, 'Invalid', 'job2 alone fits')
})

t.test('the fixture to curl: 100 KB of env × 1,000 items answers Invalid over HTTP, small', async t => {
  const app = await testApp(t)
  const request = fixture('jobflow/sync-answer-too-large.v2.json')
  const response = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: request })
  t.equal(response.statusCode, 200)
  t.ok(response.body.length < 64 * 1024, `${response.body.length} bytes answered`)
  const answer = response.json<{ status: Record<string, unknown>, children: Array<{ metadata: { name: string } }> }>()
  t.equal(answer.status.phase, 'Invalid')
  t.match(condition(answer.status, 'Valid'), { message: /^the answer would be about 9\d MiB .* × 1,000 items/ })
  t.same(answer.children.map(c => c.metadata.name), ['jobflow-example-job1', 'jobflow-example-job4'])
})
