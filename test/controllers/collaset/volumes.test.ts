// CollaSet volumes on a request as Metacontroller sends it (test/fixtures/collaset/sync-volumes.v2.json:
// two Pods, each with its claim `data-<pod>`, a third claim whose Pod is gone, one Pod asking to be
// replaced, whenScaled: Delete): claim names, the Pod's volumes, retention on scale-in both ways, a
// replacement mounting its origin's claim, and the Invalid answer to templates it cannot read.
import t from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { INSTANCE_LABEL, claimName, parseClaimTemplates } from '../../../src/controllers/collaset/volumes.js'
import { REPLACE_ORIGIN_LABEL, TO_REPLACE_LABEL } from '../../../src/k8s/labels.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'
import { PodNamer } from '../../../src/controllers/collaset/pods.js'

const FIXTURE = 'collaset/sync-volumes.v2.json'

function sync (request: SyncRequest): SyncAnswer {
  return syncCollaSet(request, context())
}
function ofKind (answer: SyncAnswer, kind: string): KubeObject[] {
  return answer.response.children.filter(c => c.kind === kind)
}
function claimNames (answer: SyncAnswer): string[] {
  return ofKind(answer, 'PersistentVolumeClaim').map(c => c.metadata.name).sort()
}
function newPods (request: SyncRequest, answer: SyncAnswer): KubeObject[] {
  const observed = new Set(Object.values(request.children['Pod.v1'] ?? {}).map(p => p.metadata.name))
  return ofKind(answer, 'Pod').filter(p => !observed.has(p.metadata.name))
}
function volumesOf (pod: KubeObject | undefined): Array<Record<string, any>> {
  return ((pod?.spec as Record<string, unknown> | undefined)?.volumes ?? []) as Array<Record<string, any>>
}
/** foo-jk4r5 no longer asks to be replaced. */
function noReplace (request: SyncRequest): void {
  const pod = request.children['Pod.v1']?.['default/foo-jk4r5'] as KubeObject
  delete (pod.metadata.labels as Record<string, string>)[TO_REPLACE_LABEL]
}
function scaleStrategy (request: SyncRequest): Record<string, any> {
  return specOf(request.parent).scaleStrategy as Record<string, any>
}

t.test('claims are named <template>-<instance>; a new Pod mounts its own under the template name', async t => {
  t.equal(claimName('data', 'foo-0'), 'data-foo-0', "StatefulSet's names")
  const request = fixture(FIXTURE)
  specOf(request.parent).replicas = 3
  delete request.children['PersistentVolumeClaim.v1']?.['default/data-foo-gone1']
  noReplace(request)
  const answer = sync(request)
  const [added] = newPods(request, answer)
  t.ok(added, 'one Pod added to reach 3')
  const instance = added?.metadata.labels?.[INSTANCE_LABEL]
  t.equal(instance, added?.metadata.name, "a new Pod's instance is its own name")
  t.same(volumesOf(added).filter(v => v.name === 'data'), [
    { name: 'data', persistentVolumeClaim: { claimName: `data-${String(instance)}` } }
  ], 'one volume per template, named as the template, pointing at its claim')
  t.ok(claimNames(answer).includes(`data-${String(instance)}`), 'its claim is created in the same answer')
  const claim = ofKind(answer, 'PersistentVolumeClaim').find(c => c.metadata.name === `data-${String(instance)}`)
  t.same(claim?.spec, { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } })
  t.equal(claim?.metadata.labels?.[INSTANCE_LABEL], instance)
  t.same(ofKind(answer, 'PersistentVolumeClaim').find(c => c.metadata.name === 'data-foo-2jaln'),
    { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data-foo-2jaln', namespace: 'default' } },
    'an observed claim is answered by its identity (OnDelete)')
})

t.test('a template volume of the same name gives way to the claim', async t => {
  const request = fixture(FIXTURE)
  specOf(request.parent).replicas = 3
  const template = specOf(request.parent).template as { spec: Record<string, unknown> }
  template.spec.volumes = [{ name: 'data', emptyDir: {} }, { name: 'cache', emptyDir: {} }]
  const added = newPods(request, sync(request)).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === undefined)
  t.same(volumesOf(added).map(v => Object.keys(v).sort().join('+')), ['emptyDir+name', 'name+persistentVolumeClaim'])
  t.same(volumesOf(added).map(v => v.name), ['cache', 'data'])
})

/** foo-jk4r5 no longer asks to be replaced; foo-2jaln is out of traffic, so scale-in takes it at once. */
function scaledInToOne (request: SyncRequest): void {
  specOf(request.parent).replicas = 1
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  noReplace(request)
  const out = pods['default/foo-2jaln'] as KubeObject
  for (const c of (out.status as { conditions: Array<Record<string, unknown>> }).conditions) {
    if (c.type === 'Ready' || c.type === 'jobhooks.io/service-ready') c.status = 'False'
  }
}

t.test('whenScaled: Delete leaves out the claims of instances without a Pod; Retain keeps them', async t => {
  const request = fixture(FIXTURE)
  scaledInToOne(request)
  const deleting = sync(request)
  t.same(ofKind(deleting, 'Pod').map(p => p.metadata.name), ['foo-jk4r5'], 'scale-in takes foo-2jaln')
  t.same(claimNames(deleting), ['data-foo-jk4r5'], 'its claim goes with it, and so does the one whose Pod was gone')
  scaleStrategy(request).persistentVolumeClaimRetentionPolicy = { whenScaled: 'Retain' }
  const retaining = sync(request)
  t.same(ofKind(retaining, 'Pod').map(p => p.metadata.name), ['foo-jk4r5'])
  t.same(claimNames(retaining), ['data-foo-2jaln', 'data-foo-gone1', 'data-foo-jk4r5'], 'Retain: every claim kept')
  delete scaleStrategy(request).persistentVolumeClaimRetentionPolicy
  t.same(claimNames(sync(request)), claimNames(retaining), 'Retain is the default (StatefulSet)')
})

t.test('scaled out again, a Pod of a retained instance mounts its claim again', async t => {
  const request = fixture(FIXTURE)
  scaleStrategy(request).persistentVolumeClaimRetentionPolicy = { whenScaled: 'Retain' }
  noReplace(request)
  // The claim left by the Pod that had the first name foo hands out, scaled in since.
  const first = new PodNamer('foo', 'foo', []).next()
  const claims = request.children['PersistentVolumeClaim.v1'] as Record<string, KubeObject>
  const left = claims['default/data-foo-gone1'] as KubeObject
  delete claims['default/data-foo-gone1']
  claims[`default/data-${first}`] = {
    ...left, metadata: { ...left.metadata, name: `data-${first}`, labels: { [INSTANCE_LABEL]: first } }
  }
  specOf(request.parent).replicas = 3
  const answer = sync(request)
  const [added] = newPods(request, answer)
  t.equal(added?.metadata.name, first, 'the first free name comes back, and with it the instance')
  t.same(volumesOf(added).find(v => v.name === 'data')?.persistentVolumeClaim, { claimName: `data-${first}` })
  const all = [`data-${first}`, 'data-foo-2jaln', 'data-foo-jk4r5'].sort()
  t.same(claimNames(answer), all, 'no new claim: the retained one')
})

t.test('a replacement takes its origin\'s instance and claim, pinned to the origin\'s node', async t => {
  const request = fixture(FIXTURE)
  const answer = sync(request)
  const replacement = newPods(request, answer).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === 'foo-jk4r5')
  t.ok(replacement, 'foo-jk4r5 asks to be replaced: a replacement comes')
  t.not(replacement?.metadata.name, 'foo-jk4r5')
  t.equal(replacement?.metadata.labels?.[INSTANCE_LABEL], 'foo-jk4r5', "the origin's instance")
  t.same(volumesOf(replacement).find(v => v.name === 'data'),
    { name: 'data', persistentVolumeClaim: { claimName: 'data-foo-jk4r5' } }, "it mounts the origin's claim")
  const affinity = (replacement?.spec as Record<string, any>).affinity
  t.same(affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
    { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-0'] }] }] },
    'on the node the origin runs on: a ReadWriteOnce volume attaches to one node')
  t.notOk(claimNames(answer).some(n => n.includes(String(replacement?.metadata.name))), 'no claim of its own')
  t.ok(claimNames(answer).includes('data-foo-jk4r5'), "the origin's claim stays")
})

t.test('a Pod added for capacity takes an instance whose claims no Pod holds, and its name', async t => {
  const request = fixture(FIXTURE)
  noReplace(request)
  specOf(request.parent).replicas = 3
  const [added] = newPods(request, sync(request))
  t.equal(added?.metadata.name, 'foo-gone1', 'the instance of the claim data-foo-gone1')
  t.equal(added?.metadata.labels?.[INSTANCE_LABEL], 'foo-gone1')
  t.same(volumesOf(added).find(v => v.name === 'data')?.persistentVolumeClaim, { claimName: 'data-foo-gone1' })
  // A Pod deleted by hand: its successor, in the same sync, keeps its claim even under Delete.
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  delete pods['default/foo-2jaln']
  specOf(request.parent).replicas = 2
  delete request.children['PersistentVolumeClaim.v1']?.['default/data-foo-gone1']
  const answer = sync(request)
  t.same(newPods(request, answer).map(p => p.metadata.labels?.[INSTANCE_LABEL]), ['foo-2jaln'])
  t.same(claimNames(answer), ['data-foo-2jaln', 'data-foo-jk4r5'], 'whenScaled: Delete, and no claim deleted')
})

t.test('no new Pod is named after a claim being deleted', async t => {
  const request = fixture(FIXTURE)
  noReplace(request)
  const claim = request.children['PersistentVolumeClaim.v1']?.['default/data-foo-gone1'] as KubeObject
  claim.metadata.deletionTimestamp = '2026-01-02T03:00:00Z'
  claim.metadata.name = `data-${new PodNamer('foo', 'foo', []).next()}`
  claim.metadata.labels = { [INSTANCE_LABEL]: claim.metadata.name.slice('data-'.length) }
  specOf(request.parent).replicas = 3
  const [added] = newPods(request, sync(request))
  t.ok(added, 'a Pod is added')
  t.not(`data-${String(added?.metadata.name)}`, claim.metadata.name, 'not under the instance of the terminating claim')
  t.not(added?.metadata.labels?.[INSTANCE_LABEL], claim.metadata.labels[INSTANCE_LABEL])
})

t.test('a released Pod (podToExclude) keeps its claims: never deleted, never handed over', async t => {
  const request = fixture(FIXTURE)
  noReplace(request)
  scaleStrategy(request).persistentVolumeClaimRetentionPolicy = { whenScaled: 'Delete' }
  scaleStrategy(request).podToExclude = ['foo-gone1']
  specOf(request.parent).replicas = 3
  const answer = sync(request)
  t.ok(claimNames(answer).includes('data-foo-gone1'), 'whenScaled: Delete, yet the released Pod\'s claim stays')
  const [added] = newPods(request, answer)
  t.ok(added, 'a Pod is added')
  t.not(added?.metadata.labels?.[INSTANCE_LABEL], 'foo-gone1', 'it does not take the released instance')
  t.not(added?.metadata.name, 'foo-gone1')
})

t.test('once the origin is gone, the replacement keeps the claim, even under whenScaled: Delete', async t => {
  const request = fixture(FIXTURE)
  const first = sync(request)
  const replacement = newPods(request, first).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === 'foo-jk4r5')
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  const origin = pods['default/foo-jk4r5'] as KubeObject
  delete pods['default/foo-jk4r5']
  const name = String(replacement?.metadata.name)
  pods[`default/${name}`] = { ...origin, metadata: { ...origin.metadata, ...replacement?.metadata, uid: 'r-1' } }
  const answer = sync(request)
  t.ok(claimNames(answer).includes('data-foo-jk4r5'), 'the claim of the instance is kept')
  t.notOk(newPods(request, answer).some(p => p.metadata.labels?.[INSTANCE_LABEL] === 'foo-jk4r5'),
    'and no new Pod takes the instance, while its Pod lives')
})

t.test('templates it cannot read: Invalid, every Pod and claim kept (law 2)', async t => {
  const cases: Array<[string, unknown]> = [
    ['no name', [{ spec: {} }]],
    ['a name twice', [{ metadata: { name: 'data' }, spec: {} }, { metadata: { name: 'data' }, spec: {} }]],
    ['not an object', ['data']],
    ['not a list', { metadata: { name: 'data' } }]
  ]
  for (const [what, templates] of cases) {
    const request = fixture(FIXTURE)
    specOf(request.parent).volumeClaimTemplates = templates
    const answer = sync(request)
    t.match(condition(answer.response.status, 'Valid'), { status: 'False' }, what)
    t.same(claimNames(answer), ['data-foo-2jaln', 'data-foo-gone1', 'data-foo-jk4r5'], `${what}: every claim kept`)
    t.equal(ofKind(answer, 'Pod').length, 2, `${what}: every Pod kept`)
  }
  const problems: string[] = []
  parseClaimTemplates([{ metadata: { name: 'data' }, spec: {} }, { metadata: { name: 'data' }, spec: {} }], problems)
  t.match(problems, [/names "data" twice/])
})

t.test('an unknown policy is refused, every child kept', async t => {
  for (const policy of [{ whenDeleted: 'Sometimes' }, { whenScaled: 'Sometimes' }]) {
    const request = fixture(FIXTURE)
    scaleStrategy(request).persistentVolumeClaimRetentionPolicy = policy
    const answer = sync(request)
    const valid = condition(answer.response.status, 'Valid')
    t.match(valid, { status: 'False', message: /persistentVolumeClaimRetentionPolicy/ })
    t.equal(answer.response.children.length, 5, JSON.stringify(policy))
  }
})
