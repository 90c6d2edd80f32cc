// CollaSet in-place updates on requests as Metacontroller sends them
// (test/fixtures/collaset/sync-in-place.v2.json: two Ready Pods of a template whose shape matches,
// an image change): each sync's step of the lifecycle, from the observed Pod alone; and when an
// in-place update is not possible (another shape, a Pod that predates shapes, the policy).
import t from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import {
  IN_PLACE_ANNOTATION, IN_PLACE_REASON, inPlaceDone, inPlaceRecord, templateShape
} from '../../../src/controllers/collaset/inplace.js'
import { REVISION_LABEL, TEMPLATE_SHAPE_ANNOTATION } from '../../../src/controllers/collaset/pods.js'
import { SERVICE_READY } from '../../../src/k8s/labels.js'
import type { Effect } from '../../../src/effects/types.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import { requestFor } from '../../../src/effects/executor.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { named, podsOf } from '../../helpers/collaset.js'
import { specOf } from '../../helpers/objects.js'

const FIXTURE = 'collaset/sync-in-place.v2.json'
const sync = (request: SyncRequest): SyncAnswer => syncCollaSet(request, context())
const effectsOn = (answer: SyncAnswer, name: string): Effect[] =>
  answer.effects.filter(e => e.target.name === name)
const names = (answer: SyncAnswer): string[] => answer.response.children.map(c => c.metadata.name).sort()

type Status = { conditions: Array<Record<string, unknown>>, containerStatuses: Array<Record<string, unknown>> }
const statusOf = (pod: KubeObject): Status => pod.status as Status
function setCondition (pod: KubeObject, type: string, status: string, reason?: string): void {
  const c = statusOf(pod).conditions.find(c => c.type === type)
  if (c === undefined) throw new Error(`no condition ${type}`)
  c.status = status
  if (reason !== undefined) c.reason = reason
}
/** The Pod as the patch of `answer` left it (images, labels, annotations), before the kubelet restarts it. */
function patched (pod: KubeObject, answer: SyncAnswer): void {
  const effect = answer.effects.find(e => e.type === 'UpdatePodInPlace' && e.target.name === pod.metadata.name)
  if (effect?.type !== 'UpdatePodInPlace') throw new Error('no patch')
  for (const { name, image } of effect.images) {
    const c = specOf<{ containers: Array<Record<string, unknown>> }>(pod).containers.find(c => c.name === name)
    if (c !== undefined) c.image = image
  }
  pod.metadata.labels = { ...pod.metadata.labels, ...effect.labels }
  pod.metadata.annotations = { ...pod.metadata.annotations, ...effect.annotations }
}

t.test('step by step: out of traffic, patched once not Ready, back once the container restarted', async t => {
  const request = fixture(FIXTURE)
  const first = sync(request)
  const oldest = 'foo-jk4r5'
  t.same(names(first), podsOf(request).map(p => p.metadata.name).sort(), 'no Pod added or removed')
  t.match(effectsOn(first, oldest), [{
    type: 'SetPodCondition', condition: { type: SERVICE_READY, status: 'False', reason: IN_PLACE_REASON }
  }], 'the oldest Pod leaves traffic first, not patched while Ready')
  t.same(effectsOn(first, 'foo-2jaln'), [], 'one Pod at a time')
  t.match(first.response.status, { operatingReplicas: 1, updatedReplicas: 0 })

  // The gate is False, the Pod still Ready (the kubelet has not caught up): nothing new.
  const pod = named(request, oldest)
  setCondition(pod, SERVICE_READY, 'False', IN_PLACE_REASON)
  t.same(effectsOn(sync(request), oldest), [], 'waits for the Pod to leave Ready; the gate is not set back')

  setCondition(pod, 'Ready', 'False')
  const second = sync(request)
  const [patch] = effectsOn(second, oldest)
  t.match(patch, {
    type: 'UpdatePodInPlace',
    images: [{ index: 0, name: 'app', image: 'nginx:1.29' }],
    labels: { app: 'foo', [REVISION_LABEL]: second.response.status.updatedRevision }
  })
  t.same(effectsOn(second, 'foo-2jaln'), [], 'the other Pod waits')
  t.match(requestFor(patch as Effect), {
    method: 'PATCH',
    path: '/api/v1/namespaces/default/pods/foo-jk4r5',
    contentType: 'application/strategic-merge-patch+json',
    body: { metadata: { uid: pod.metadata.uid }, spec: { containers: [{ name: 'app', image: 'nginx:1.29' }] } }
  }, 'a strategic merge of the image, UID-guarded')

  // Patched; the kubelet still reports the old container: the gate stays False, nothing else moves.
  patched(pod, second)
  const record = inPlaceRecord(pod)
  t.match(record, { containers: { app: { image: 'nginx:1.28', restartCount: 0 } } }, 'what ran before is recorded')
  t.notOk(inPlaceDone(pod))
  const third = sync(request)
  t.same(effectsOn(third, oldest), [], 'not back before its container restarted')
  t.same(effectsOn(third, 'foo-2jaln'), [], 'and the next Pod waits for it')
  t.match(third.response.status, { updatedReplicas: 1, updatedReadyReplicas: 0, operatingReplicas: 1 })

  // The container restarted with the new image and is ready: the gate comes back.
  const container = statusOf(pod).containerStatuses[0] as Record<string, unknown>
  container.image = 'docker.io/library/nginx:1.29'
  container.restartCount = 1
  t.ok(inPlaceDone(pod), 'a restart counts even when the kubelet spells the image longer')
  const fourth = sync(request)
  t.match(effectsOn(fourth, oldest), [{ type: 'SetPodCondition', condition: { status: 'True' } }])
  t.same(effectsOn(fourth, 'foo-2jaln'), [], 'the next Pod waits until this one is Ready')

  setCondition(pod, SERVICE_READY, 'True', 'ContainersReady')
  setCondition(pod, 'Ready', 'True')
  const fifth = sync(request)
  t.match(effectsOn(fifth, 'foo-2jaln'), [{ type: 'SetPodCondition', condition: { status: 'False' } }],
    'then the next Pod leaves traffic')
  t.equal(fifth.response.children.length, 2, 'never a third Pod')
})

t.test('what counts as a container back: ready, and a new image, a new imageID or a restart', async t => {
  const pod = named(fixture(FIXTURE), 'foo-jk4r5')
  const revision = pod.metadata.labels?.[REVISION_LABEL] as string
  const container = statusOf(pod).containerStatuses[0] as Record<string, unknown>
  const before = { image: 'nginx:1.28', imageID: String(container.imageID), restartCount: 0 }
  const record = { revision, containers: { app: before } }
  pod.metadata.annotations = { ...pod.metadata.annotations, [IN_PLACE_ANNOTATION]: JSON.stringify(record) }
  specOf<{ containers: Array<Record<string, unknown>> }>(pod).containers[0]!.image = 'nginx:1.29'
  t.notOk(inPlaceDone(pod), 'the same image, imageID and restart count: not yet')
  container.imageID = 'docker.io/library/nginx@sha256:0123'
  t.ok(inPlaceDone(pod), 'another imageID')
  container.ready = false
  t.notOk(inPlaceDone(pod), 'but not while the container is not ready')
  container.ready = true
  pod.metadata.labels = { ...pod.metadata.labels, [REVISION_LABEL]: 'foo-other' }
  t.notOk(inPlaceDone(pod), 'a record of another revision says nothing of this one')
  pod.metadata.annotations[IN_PLACE_ANNOTATION] = '{not json'
  t.equal(inPlaceRecord(pod), undefined, 'a broken record is no record')
})

t.test('no in-place update for another shape, a Pod without one, or under Replace', async t => {
  const cases: Array<[string, (request: SyncRequest) => void]> = [
    ['a change beyond images', r => {
      specOf<any>(r.parent).template.spec.containers[0].env = [{ name: 'MODE', value: 'fast' }]
    }],
    ['Pods made before shapes', r => {
      for (const pod of podsOf(r)) delete pod.metadata.annotations?.[TEMPLATE_SHAPE_ANNOTATION]
    }],
    ['podUpgradePolicy Replace', r => { specOf(r.parent).updateStrategy = { podUpgradePolicy: 'Replace' } }]
  ]
  for (const [what, change] of cases) {
    const request = fixture(FIXTURE)
    change(request)
    const answer = sync(request)
    t.equal(answer.effects.filter(e => e.type === 'UpdatePodInPlace' ||
      (e.type === 'SetPodCondition' && e.condition.status === 'False')).length, 0, `${what}: nothing in place`)
    t.equal(answer.response.children.length, 3, `${what}: a replacement instead`)
  }
})

t.test('InPlaceOnly holds what cannot be made in place, and says which Pod and why', async t => {
  const request = fixture(FIXTURE)
  specOf<any>(request.parent).template.spec.containers[0].env = [{ name: 'MODE', value: 'fast' }]
  specOf(request.parent).updateStrategy = { podUpgradePolicy: 'InPlaceOnly' }
  const answer = sync(request)
  t.equal(answer.response.children.length, 2, 'no replacement')
  t.same(answer.effects, [])
  t.match(condition(answer.response.status, 'Update'), {
    status: 'False', reason: 'InPlaceImpossible', message: /Pod foo-jk4r5 cannot take revision foo-\w+ in place/
  })
})

t.test('Recreate: out of traffic first, then left out of the answer, and a new Pod counted in', async t => {
  const request = fixture(FIXTURE)
  specOf(request.parent).updateStrategy = { podUpgradePolicy: 'Recreate' }
  const first = sync(request)
  t.match(effectsOn(first, 'foo-jk4r5'), [
    { type: 'SetPodCondition', condition: { status: 'False', reason: 'Recreate' } }
  ])
  t.equal(first.response.children.length, 2, 'no surge Pod')
  const pod = named(request, 'foo-jk4r5')
  setCondition(pod, SERVICE_READY, 'False', 'Recreate')
  setCondition(pod, 'Ready', 'False')
  const second = sync(request)
  t.notOk(names(second).includes('foo-jk4r5'), 'the old Pod goes once out of Ready')
  t.equal(second.response.children.length, 2, 'and its successor comes in the same answer')
})

t.test('the shape leaves out images only', async t => {
  const template = specOf<any>(fixture(FIXTURE).parent).template
  const shape = templateShape(template)
  const images = structuredClone(template)
  images.spec.containers[0].image = 'busybox'
  t.equal(templateShape(images), shape)
  const env = structuredClone(template)
  env.spec.containers[0].env = [{ name: 'A', value: 'b' }]
  t.not(templateShape(env), shape)
  const labels = structuredClone(template)
  labels.metadata.labels.tier = 'web'
  t.equal(templateShape(labels), shape, 'the template\'s labels change in place too')
})

/** The fixture's Pods at Burstable resources their kubelet reports, the template asking more cpu. */
function resizeRequest (): SyncRequest {
  const request = fixture(FIXTURE)
  const template = specOf<any>(request.parent).template
  const burstable = { requests: { cpu: '100m', memory: '64Mi' } }
  const container = { ...template.spec.containers[0], resources: burstable }
  const made = { ...template, spec: { ...template.spec, containers: [container] } }
  for (const pod of podsOf(request)) {
    specOf<any>(pod).containers[0].resources = burstable
    statusOf(pod).containerStatuses[0]!.resources = burstable
    pod.metadata.annotations![TEMPLATE_SHAPE_ANNOTATION] = templateShape(made)
  }
  template.spec.containers[0].resources = { requests: { cpu: '0.25', memory: '64Mi' } }
  return request
}

t.test('a resize first, then the revision: the resize subresource, quantities compared by amount', async t => {
  const request = resizeRequest()
  const pod = named(request, 'foo-jk4r5')
  setCondition(pod, SERVICE_READY, 'False', IN_PLACE_REASON)
  setCondition(pod, 'Ready', 'False')
  const [resize] = effectsOn(sync(request), 'foo-jk4r5')
  t.match(resize, { type: 'ResizePod', containers: [{ name: 'app', resources: { requests: { cpu: '0.25' } } }] },
    'the resize first; the revision waits for it')
  t.match(requestFor(resize as Effect), {
    method: 'PATCH',
    path: '/api/v1/namespaces/default/pods/foo-jk4r5/resize',
    contentType: 'application/strategic-merge-patch+json'
  })
  // The spec took it (in the API server's spelling): the patch of the revision follows.
  specOf<any>(pod).containers[0].resources = { requests: { cpu: '250m', memory: '64Mi' } }
  t.match(effectsOn(sync(request), 'foo-jk4r5'), [{ type: 'UpdatePodInPlace', images: [{ image: 'nginx:1.29' }] }])
})

t.test('no resize where the kubelet reports no resources, for amounts besides cpu and memory, across QoS', async t => {
  const cases: Array<[string, (request: SyncRequest) => void]> = [
    ['no resources in the status', r => {
      for (const p of podsOf(r)) delete statusOf(p).containerStatuses[0]!.resources
    }],
    ['ephemeral-storage changes', r => {
      const resources = { requests: { cpu: '0.25', memory: '64Mi', 'ephemeral-storage': '1Gi' } }
      specOf<any>(r.parent).template.spec.containers[0].resources = resources
    }],
    ['Burstable to Guaranteed', r => {
      specOf<any>(r.parent).template.spec.containers[0].resources = { limits: { cpu: '1', memory: '1Gi' } }
    }]
  ]
  t.match(sync(resizeRequest()).effects, [{ type: 'SetPodCondition', condition: { reason: IN_PLACE_REASON } }],
    'the set-up alone resizes in place')
  for (const [what, change] of cases) {
    const request = resizeRequest()
    change(request)
    const answer = sync(request)
    t.same(answer.effects, [], `${what}: nothing in place`)
    t.equal(answer.response.children.length, 3, `${what}: a replacement instead`)
  }
})
