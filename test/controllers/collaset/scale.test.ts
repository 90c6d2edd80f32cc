// CollaSet scale controls on requests as Metacontroller sends them (test/fixtures/collaset/,
// curlable at their clock in test/fixtures/clocks.json): kuperator's scaleStrategy.podToDelete and
// our jobhooks.io/to-delete label, the scale-in order, and the Invalid answer to a list it cannot
// read (law 2).
import t, { type Test } from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { customizeCollaSet } from '../../../src/controllers/collaset/include.js'
import { TO_DELETE_LABEL } from '../../../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL, SERVICE_READY, TO_REPLACE_LABEL } from '../../../src/k8s/labels.js'
import type { SetPodCondition } from '../../../src/effects/types.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { named, podsOf } from '../../helpers/collaset.js'
import { specOf } from '../../helpers/objects.js'

function sync (request: SyncRequest): SyncAnswer {
  return syncCollaSet(request, context())
}
function names (answer: SyncAnswer): string[] {
  return answer.response.children.map(c => c.metadata.name).sort()
}
function created (request: SyncRequest, answer: SyncAnswer): KubeObject[] {
  const observed = new Set(podsOf(request).map(p => p.metadata.name))
  return answer.response.children.filter(c => !observed.has(c.metadata.name))
}
function setLabel (pod: KubeObject, key: string, value: string): void {
  pod.metadata.labels = { ...pod.metadata.labels, [key]: value }
}
/** The Pods the answer takes out of traffic (service-ready False), by name. */
function drained (answer: SyncAnswer): string[] {
  return answer.effects
    .filter((e): e is SetPodCondition => e.type === 'SetPodCondition' && e.condition.status === 'False')
    .map(e => e.target.name).sort()
}
/** As the kubelet reports a Pod once its service-ready condition is False: not Ready. */
function outOfTraffic (pod: KubeObject): void {
  const conditions = (pod.status as { conditions: Array<Record<string, unknown>> }).conditions
  for (const c of conditions) if (c.type === SERVICE_READY || c.type === 'Ready') c.status = 'False'
}
/** Syncs, takes the drained Pods out of traffic as the service and the kubelet would, and syncs again. */
function settled (request: SyncRequest): SyncAnswer {
  for (const name of drained(sync(request))) outOfTraffic(named(request, name))
  return sync(request)
}
function keptAll (t: Test, request: SyncRequest, answer: SyncAnswer, what: string): void {
  t.same(names(answer), podsOf(request).map(p => p.metadata.name).sort(), `${what}: every Pod kept, none added`)
}

t.test('podToDelete: the named Pod is left out and replaced; a name of no Pod is ignored and said', async t => {
  const request = fixture('collaset/sync-delete.v2.json')
  const answer = sync(request)
  const added = created(request, answer)
  t.equal(added.length, 1, 'one replacement, at once, as replicas 2 still wants it')
  t.same(drained(answer), ['foo-2jaln'], 'foo-2jaln leaves traffic first (service-ready False)')
  t.ok(names(answer).includes('foo-2jaln'), 'and is kept for now')
  t.ok(names(answer).includes('foo-jk4r5'))
  t.not(added[0]?.metadata.name, 'foo-2jaln', 'the new Pod never takes a name podToDelete lists')
  t.notOk(added[0]?.metadata.labels?.[REPLACE_ORIGIN_LABEL], 'a new member, not a replacement pair')
  t.match(condition(answer.response.status, 'Valid'), { status: 'True' })
  t.match(condition(answer.response.status, 'Scale'), {
    status: 'False',
    reason: 'Deleting',
    message: '2 Pods of 2; deleting foo-2jaln (podToDelete or jobhooks.io/to-delete); ' +
      'spec.scaleStrategy.podToDelete names no Pod of the set, ignored: bar'
  })
  t.same(sync(request), answer, 'deterministic')
  const replacement = added[0] as KubeObject
  ;(request.children['Pod.v1'] as Record<string, KubeObject>)[`default/${replacement.metadata.name}`] = replacement
  outOfTraffic(named(request, 'foo-2jaln'))
  const gone = sync(request)
  t.same(names(gone), ['foo-jk4r5', replacement.metadata.name].sort(), 'out of traffic, foo-2jaln goes; no Pod more')
  t.same(gone.effects.filter(e => e.type === 'SetPodCondition' && e.target.name === 'foo-2jaln'), [])
})

t.test('once the Pod terminates, no Pod more is created and the name stays ignored', async t => {
  const request = fixture('collaset/sync-delete.v2.json')
  const first = sync(request)
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  const replacement = created(request, first)[0] as KubeObject
  named(request, 'foo-2jaln').metadata.deletionTimestamp = '2026-01-02T03:04:06Z'
  pods[`default/${replacement.metadata.name}`] = {
    ...replacement, metadata: { ...replacement.metadata, creationTimestamp: '2026-01-02T03:04:06Z' }
  }
  const second = sync(request)
  keptAll(t, request, second, 'the terminating Pod as observed, the replacement kept')
  t.match(condition(second.response.status, 'Scale'), {
    status: 'True', reason: 'Scaled', message: /ignored: bar$/
  })
  delete pods['default/foo-2jaln']
  t.match(condition(sync(request).response.status, 'Scale'), {
    status: 'True', message: /ignored: bar, foo-2jaln$/
  }, 'gone: its name matches no Pod now')
})

t.test('the jobhooks.io/to-delete label deletes the Pod as podToDelete does', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  setLabel(named(request, 'foo-jk4r5'), TO_DELETE_LABEL, 'true')
  const answer = sync(request)
  t.same(drained(answer), ['foo-jk4r5'])
  t.equal(created(request, answer).length, 1)
  t.match(condition(answer.response.status, 'Scale'), { reason: 'Deleting', message: /deleting foo-jk4r5/ })
  outOfTraffic(named(request, 'foo-jk4r5'))
  t.notOk(names(sync(request)).includes('foo-jk4r5'), 'out of traffic, it goes')
})

t.test('paused: the deletes wait, and the Scale condition says so', async t => {
  const request = fixture('collaset/sync-delete.v2.json')
  specOf(request.parent).paused = true
  const answer = sync(request)
  keptAll(t, request, answer, 'paused')
  t.match(condition(answer.response.status, 'Scale'), {
    status: 'False', reason: 'Paused', message: /waiting to delete foo-2jaln/
  })
})

t.test('an origin being replaced that is deleted hands its place to its replacement', async t => {
  const request = fixture('collaset/sync-replace.v2.json')
  const origin = podsOf(request).find(p => p.metadata.labels?.[TO_REPLACE_LABEL] === 'true') as KubeObject
  const replacement = podsOf(request).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] !== undefined)
  t.ok(replacement, 'the fixture has a replacement coming up')
  specOf(request.parent).scaleStrategy = { podToDelete: [origin.metadata.name] }
  const answer = sync(request)
  t.same(drained(answer), [origin.metadata.name], 'the origin leaves traffic')
  t.same(created(request, answer), [], 'no Pod more: the replacement takes the place')
  outOfTraffic(origin)
  const gone = sync(request)
  t.notOk(names(gone).includes(origin.metadata.name), 'the origin goes')
  t.ok(names(gone).includes(replacement?.metadata.name ?? ''), 'its replacement stays, as a member')
  t.same(created(request, gone), [], 'still no Pod more')
})

t.test('a podToDelete it cannot read is Invalid, names the field and keeps every Pod (law 2)', async t => {
  for (const bad of ['foo-2jaln', [''], [3], { name: 'foo-2jaln' }]) {
    const request = fixture('collaset/sync-delete.v2.json')
    specOf(request.parent).scaleStrategy = { podToDelete: bad }
    const answer = sync(request)
    keptAll(t, request, answer, JSON.stringify(bad))
    t.match(condition(answer.response.status, 'Valid'), {
      status: 'False', reason: 'InvalidSpec', message: /spec\.scaleStrategy\.podToDelete must list/
    })
  }
  const request = fixture('collaset/sync-delete.v2.json')
  specOf(request.parent).scaleStrategy = 'all'
  t.match(condition(sync(request).response.status, 'Valid'), { message: /spec\.scaleStrategy must be an object/ })
})

t.test('scale-in order: to-delete, then not Ready, then the Pod Ready last, then the newest', async t => {
  // aaaaa: Ready since 01:00:03; bbbbb: Ready since 01:00:10 (last); ccccc: the newest, Ready since
  // 01:00:06; ddddd: not Ready; eeeee: labelled jobhooks.io/to-delete. replicas 2.
  const first = fixture('collaset/sync-scale-in.v2.json')
  const answer = sync(first)
  t.same(names(answer), ['foo-aaaaa', 'foo-bbbbb', 'foo-ccccc', 'foo-eeeee'], 'ddddd, not Ready, goes at once')
  t.same(drained(answer), ['foo-bbbbb', 'foo-eeeee'], 'eeeee (to-delete) and bbbbb (Ready last) leave traffic')
  t.same(created(first, answer), [])
  t.same(names(settled(fixture('collaset/sync-scale-in.v2.json'))), ['foo-aaaaa', 'foo-ccccc'],
    'then they go; ccccc, the newest, stays')
  const request = fixture('collaset/sync-scale-in.v2.json')
  specOf(request.parent).replicas = 3
  t.same(names(settled(request)), ['foo-aaaaa', 'foo-bbbbb', 'foo-ccccc'], 'replicas 3: eeeee and ddddd go')
  const four = fixture('collaset/sync-scale-in.v2.json')
  specOf(four.parent).replicas = 4
  t.same(names(settled(four)), ['foo-aaaaa', 'foo-bbbbb', 'foo-ccccc', 'foo-ddddd'], 'replicas 4: eeeee goes')
  const unknown = fixture('collaset/sync-scale-in.v2.json')
  delete named(unknown, 'foo-bbbbb').metadata.creationTimestamp
  t.same(names(settled(unknown)), ['foo-aaaaa', 'foo-ccccc'], 'a Ready time decides before the creation time')
})

t.test('podToExclude: the Pod loses controller-uid (Metacontroller then releases it), is kept until then, ' +
  'and is replaced', async t => {
  const request = fixture('collaset/sync-exclude.v2.json')
  const answer = sync(request)
  t.ok(names(answer).includes('foo-2jaln'), 'kept as observed: never deleted')
  t.equal(created(request, answer).length, 1, 'a new Pod takes its place in the count')
  const uid = named(request, 'foo-2jaln').metadata.uid
  t.same(answer.effects.filter(e => e.type === 'SetPodLabels'), [{
    type: 'SetPodLabels',
    target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'foo-2jaln', uid },
    labels: { 'controller-uid': null }
  }])
  t.match(answer.response.status, { replicas: 1 })
  t.match(condition(answer.response.status, 'Scale'), {
    status: 'False',
    reason: 'Excluding',
    message: '2 Pods of 2; releasing foo-2jaln (podToExclude); spec.scaleStrategy.podToExclude names no Pod of ' +
      'the set (released, or never one): gone'
  })
  const replacement = created(request, answer)[0] as KubeObject
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  pods[`default/${replacement.metadata.name}`] = replacement
  const labels = { ...named(request, 'foo-2jaln').metadata.labels }
  delete labels['controller-uid']
  named(request, 'foo-2jaln').metadata.labels = labels
  const relabelled = sync(request)
  t.same(names(relabelled), ['foo-2jaln', 'foo-jk4r5', replacement.metadata.name].sort(), 'no Pod more, none deleted')
  t.same(relabelled.effects.filter(e => e.type === 'SetPodLabels'), [], 'the label is gone: nothing owed')
  delete pods['default/foo-2jaln']
  const released = sync(request)
  t.same(names(released), ['foo-jk4r5', replacement.metadata.name].sort())
  t.match(condition(released.response.status, 'Scale'), {
    status: 'True',
    reason: 'Scaled',
    message: /podToExclude names no Pod of the set \(released, or never one\): foo-2jaln, gone$/
  })
})

t.test('podToInclude: a Pod the set could have made is labelled for adoption; the others are said', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  const [own] = podsOf(request) as [KubeObject]
  const stray = (name: string, change: (pod: KubeObject) => void = () => {}): KubeObject => {
    const pod = structuredClone(own)
    pod.metadata = { ...pod.metadata, name, uid: `uid-${name}`, ownerReferences: [] }
    delete pod.metadata.labels?.['controller-uid']
    change(pod)
    return pod
  }
  const related = [
    stray('stray'),
    stray('owned', p => {
      const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }
      p.metadata.ownerReferences = [owner]
    }),
    stray('other', p => { p.metadata.labels = { app: 'bar' } })
  ]
  request.related = { 'Pod.v1': Object.fromEntries(related.map(p => [`default/${p.metadata.name}`, p])) }
  const named = ['stray', 'owned', 'other', 'missing', own.metadata.name]
  specOf(request.parent).scaleStrategy = { podToInclude: named }
  const answer = sync(request)
  t.same(answer.effects.filter(e => e.type === 'SetPodLabels'), [{
    type: 'SetPodLabels',
    target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'stray', uid: 'uid-stray' },
    labels: { 'controller-uid': request.parent.metadata.uid }
  }], 'only the stray Pod, labelled with the set\'s controller-uid')
  keptAll(t, request, answer, 'podToInclude')
  t.match(condition(answer.response.status, 'Scale'), {
    message: new RegExp('including stray \\(podToInclude\\); spec\\.scaleStrategy\\.podToInclude cannot take ' +
      'missing: no such Pod; other: spec\\.selector does not match its labels; ' +
      'owned: it is controlled by ReplicaSet web$')
  })
  const customize = customizeCollaSet({ controller: request.controller, parent: request.parent })
  t.match(customize.relatedResources, [{ apiVersion: 'v1', resource: 'pods', namespace: 'default', names: named }])
  specOf(request.parent).scaleStrategy = { podToInclude: ['stray'], podToExclude: ['stray'] }
  t.match(condition(sync(request).response.status, 'Valid'), {
    status: 'False', message: /podToInclude and podToExclude both name stray/
  })
})
