// The answer size the wire can know from a request before the hook runs: an upper bound of the
// new children's bytes, capped where the hook would refuse the answer.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { expectedNewChildBytes } from '../../src/controllers/answer-size.js'
import { MAX_ANSWER_BYTES } from '../../src/controllers/common/answer-size.js'
import { fixture } from '../helpers/fixtures.js'
import { specOf } from '../helpers/objects.js'
import type { JobFlowManifestSpec } from '../helpers/records.js'

type GlobalEnvSpec = { globalParams: { env: Array<{ name: string, value: string }> } }

t.test('a JobFlow: its templates times their items, less the Jobs observed', async t => {
  const request = fixture('jobflow/sync-job1-done.v2.json')
  const small = expectedNewChildBytes('jobflow', request)
  t.ok(small > 3 * 512 && small < 3 * 2048, `${small}: job2, job3 and job5 still to create`)
  const spec = specOf<JobFlowManifestSpec & GlobalEnvSpec>(request.parent)
  spec.globalParams.env.push({ name: 'BIG', value: 'x'.repeat(200_000) })
  const flow = spec.flows[1]
  if (flow === undefined) throw new Error('the fixture has job2')
  flow.forEach = Array.from({ length: 200 }, (_, i) => `item-${i}`)
  const fanned = expectedNewChildBytes('jobflow', request)
  t.ok(fanned > 202 * 200_000 && fanned < 204 * 201_000, `${fanned}: 200 items and 2 steps, each with the env`)
  flow.forEach = Array.from({ length: 2000 }, (_, i) => `item-${i}`)
  t.equal(expectedNewChildBytes('jobflow', request), MAX_ANSWER_BYTES, 'capped: the hook answers that Invalid')
})

t.test('a DaemonJob: its template for each Node without a Job', async t => {
  const request = fixture('daemonjob/sync-running.v2.json')
  const bytes = expectedNewChildBytes('daemonjob', request)
  t.ok(bytes > 4 * 512 && bytes < 4 * 2048, `${bytes}: 5 Nodes, 1 Job`)
  specOf<GlobalEnvSpec>(request.parent).globalParams.env.push({ name: 'BIG', value: 'x'.repeat(1_000_000) })
  const group = request.related['Node.v1'] as Record<string, KubeObject>
  const model = group['node-3'] as KubeObject
  for (let i = 6; i <= 400; i++) group[`node-${i}`] = { ...model, metadata: { ...model.metadata, name: `node-${i}` } }
  t.equal(expectedNewChildBytes('daemonjob', request), MAX_ANSWER_BYTES)
})

t.test('a CollaSet: a Pod per missing replica, and one to roll out', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  const steady = expectedNewChildBytes('collaset', request)
  t.ok(steady > 512 && steady < 2048, `${steady}: at most the one rollout Pod`)
  specOf<{ replicas: number }>(request.parent).replicas = 12
  t.ok(expectedNewChildBytes('collaset', request) > 10 * steady, 'ten more replicas, ten more copies')
})

t.test('kinds without children add nothing', async t => {
  t.equal(expectedNewChildBytes('ephemeraljob', fixture('ephemeraljob/sync-new.v2.json')), 0)
  t.equal(expectedNewChildBytes('operationjob', fixture('jobflow/sync-new.v2.json')), 0)
})
