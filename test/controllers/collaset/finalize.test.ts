// The CollaSet finalize hook on a request as Metacontroller sends it when a CollaSet is deleted
// (test/fixtures/collaset/sync-volumes.v2.json: Pods and their claims): under whenDeleted: Retain
// each claim is released before the CollaSet goes; under Delete nothing is owed.
import t from 'tap'
import { finalizeCollaSet, RELEASE_RETRY_SECONDS } from '../../../src/controllers/collaset/finalize.js'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { requestFor } from '../../../src/effects/executor.js'
import type { Effect } from '../../../src/effects/types.js'
import type { SyncRequest } from '../../../src/protocol/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { specOf } from '../../helpers/objects.js'

const FIXTURE = 'collaset/sync-volumes.v2.json'

function retaining (): SyncRequest {
  const request = fixture(FIXTURE)
  specOf(request.parent).scaleStrategy = { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain' } }
  return request
}

t.test('Retain: each claim released, every child kept as observed, finalized once no claim is left', async t => {
  const request = retaining()
  const answer = finalizeCollaSet(request, context())
  t.same(answer.effects.map(e => `${e.type} ${e.target.kind} ${e.target.name}`).sort(), [
    'ReleaseClaim PersistentVolumeClaim data-foo-2jaln',
    'ReleaseClaim PersistentVolumeClaim data-foo-gone1',
    'ReleaseClaim PersistentVolumeClaim data-foo-jk4r5'
  ])
  t.match(answer.response, { finalized: false, resyncAfterSeconds: RELEASE_RETRY_SECONDS })
  const observed = Object.values(request.children).flatMap(group => Object.values(group)).length
  t.equal(answer.response.children.length, observed, 'nothing deleted meanwhile')
  t.same(answer.response.status, request.parent.status, 'the status as it was')
  t.match(requestFor(answer.effects[0] as Effect), {
    method: 'PATCH',
    path: /^\/api\/v1\/namespaces\/default\/persistentvolumeclaims\/data-foo-/,
    body: {
      metadata: {
        labels: { 'controller-uid': null },
        ownerReferences: [{ $patch: 'delete', uid: request.parent.metadata.uid }]
      }
    }
  }, 'a patch removing the label and the owner reference, UID-guarded')

  // Released: no longer owned, they are no children any more.
  delete request.children['PersistentVolumeClaim.v1']
  const done = finalizeCollaSet(request, context())
  t.equal(done.response.finalized, true)
  t.same(done.effects, [])
})

t.test('Delete, the default: finalized at once, the claims left to the garbage collector', async t => {
  const request = fixture(FIXTURE)
  const answer = finalizeCollaSet(request, context())
  t.equal(answer.response.finalized, true)
  t.same(answer.effects, [])
})

t.test('Retain is honoured even when the rest of the spec is invalid; hook v1 finalizes through sync', async t => {
  const request = retaining()
  specOf(request.parent).replicas = -1
  request.finalizing = true
  const answer = syncCollaSet(request, context())
  t.equal(answer.effects.filter(e => e.type === 'ReleaseClaim').length, 3)
  t.equal(answer.response.finalized, false)
})
