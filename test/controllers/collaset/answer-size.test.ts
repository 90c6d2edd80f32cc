// Answers within a size budget: a CollaSet whose new Pods would make too large an answer is
// Invalid before any Pod is built, every observed Pod kept (law 2).
import t from 'tap'
import type { PodSpec } from 'kubernetes-types/core/v1.js'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { keepAllObserved } from '../../../src/k8s/objects.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import { responseOf } from '../../helpers/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'

const respond = responseOf(syncCollaSet)

type ReplicatedSpec = { replicas: number, template: { spec: PodSpec } }

/** The steady CollaSet scaled to `replicas`, its container carrying an env value of `envBytes`. */
function scaledRequest (replicas: number, envBytes: number): SyncRequest {
  const request = fixture('collaset/sync-steady.v2.json')
  const spec = specOf<ReplicatedSpec>(request.parent)
  spec.replicas = replicas
  const container = spec.template.spec.containers[0]
  if (container === undefined) throw new Error('the fixture has a container')
  container.env = [{ name: 'BIG', value: 'x'.repeat(envBytes) }]
  return request
}

t.test('100 KB of env × 5,000 replicas is Invalid, names the product, keeps every Pod', async t => {
  const request = scaledRequest(5000, 100_000)
  const { response, effects } = syncCollaSet(request, context())
  const valid = condition(response.status, 'Valid') as { status: string, message: string }
  t.equal(valid.status, 'False')
  t.match(valid.message, new RegExp('^the answer would be about 4\\d\\d MiB ' +
    '\\(the new Pods: 98 KiB \\(template 98 KiB\\) × 4,99\\d Pods, ' +
    'beside \\d observed children kept\\), ' +
    'over the limit of 64 MiB for an answer$'))
  t.same(response.children, keepAllObserved(request.children), 'every observed Pod, unchanged; none created')
  t.same(effects, [], 'no readiness gate is set while the spec is invalid')
})

t.test('the same template over 50 replicas is answered in full', async t => {
  const request = scaledRequest(50, 100_000)
  const response = respond(request, context())
  t.equal(condition(response.status, 'Valid')?.status, 'True')
  t.equal(response.children.length, 51, 'the 2 observed, 48 to scale up, 1 to roll the new template out')
})

t.test('claims count with their Pods: a small template with large claim templates is over the budget', async t => {
  const request = scaledRequest(5000, 0)
  // 16 templates of 1 KB each: about 16.5 KB of claims per Pod, 80 MiB over 5,000 Pods.
  specOf(request.parent).volumeClaimTemplates = Array.from({ length: 16 }, (_, i) => ({
    metadata: { name: `data-${i}`, annotations: { note: 'x'.repeat(1000) } },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }
  }))
  const { response } = syncCollaSet(request, context())
  t.match(condition(response.status, 'Valid'), { status: 'False', message: /over the limit of 64 MiB/ })
  t.same(response.children, keepAllObserved(request.children), 'every observed Pod kept; no Pod, no claim created')
  specOf(request.parent).replicas = 50
  t.equal(condition(respond(request, context()).status, 'Valid')?.status, 'True', 'over 50 Pods it fits')
})
