// Answers within a size budget: a DaemonJob whose Jobs over its nodes would make too large an
// answer is Invalid after building one Job, every observed child kept (law 2).
import t from 'tap'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { keepAllObserved } from '../../../src/k8s/objects.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import { responseOf } from '../../helpers/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'

const respond = responseOf(syncDaemonJob)

type GlobalEnvSpec = { globalParams: { env: Array<{ name: string, value: string }> } }

/** The running DaemonJob (node-3's Job observed) over `nodes` Nodes, with a global env value of `envBytes`. */
function nodesRequest (nodes: number, envBytes: number): SyncRequest {
  const request = fixture('daemonjob/sync-running.v2.json')
  specOf<GlobalEnvSpec>(request.parent).globalParams.env.push({ name: 'BIG', value: 'x'.repeat(envBytes) })
  const group = request.related['Node.v1'] as Record<string, KubeObject>
  const model = group['node-3'] as KubeObject
  for (let i = 6; i <= nodes; i++) {
    const name = `node-${i}`
    group[name] = { ...model, metadata: { ...model.metadata, name, labels: { 'kubernetes.io/hostname': name } } }
  }
  return request
}

t.test('1 MB of env × 400 Nodes is Invalid, names the product, keeps every child', async t => {
  const request = nodesRequest(400, 1_000_000)
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  t.same(response.children, keepAllObserved(request.children), 'every observed child, unchanged; nothing created')
  const valid = condition(response.status, 'Valid') as { message: string }
  t.match(valid.message, new RegExp('^the answer would be about 37\\d MiB \\(the Jobs of the nodes: 977 KiB ' +
    '\\(globalParams\\.env 977 KiB × 1 container, template \\d+ B\\) × 395 nodes, beside 1 observed child kept\\), ' +
    'over the limit of 64 MiB for an answer$'))
  t.ok(JSON.stringify(response).length < 1024 * 1024, 'the answer is small: one Job was measured, none kept')
})

t.test('a Job over what etcd admits is Invalid, even on one node', async t => {
  const request = nodesRequest(5, 1_600_000)
  const response = respond(request, context())
  t.equal(response.status.phase, 'Invalid')
  const valid = condition(response.status, 'Valid') as { message: string }
  t.match(valid.message, /^the Jobs of the nodes would weigh about 1\.5 MiB each .* over the limit of 1\.5 MiB/)
  t.same(response.children, keepAllObserved(request.children))
})

t.test('the same env over fewer nodes is answered in full', async t => {
  const request = nodesRequest(40, 1_000_000)
  const response = respond(request, context())
  t.not(response.status.phase, 'Invalid')
  t.equal(response.children.filter(c => c.kind === 'Job').length, 36, 'node-3 kept, one each for node-6 to 40')
})
