// The CollaSet rollout controls on requests as Metacontroller sends them (test/fixtures/collaset/,
// curlable at their clock in test/fixtures/clocks.json): spec.paused, kuperator's
// updateStrategy.rollingUpdate.byPartition.partition and .byLabel, updateStrategy.operationDelaySeconds,
// and the Invalid answer to a strategy it cannot read (law 2).
import t, { type Test } from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { REVISION_LABEL, UPDATE_INCLUDED_LABEL } from '../../../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL, TO_REPLACE_LABEL } from '../../../src/k8s/labels.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { named, podsOf } from '../../helpers/collaset.js'
import { specOf } from '../../helpers/objects.js'

const OLD = 'foo-7bdb974bc7'
const NEW = 'foo-96cbe2a113'

function sync (request: SyncRequest, now?: Date): SyncAnswer {
  return syncCollaSet(request, context(now))
}
/** The Pods the answer creates (not observed), as `origin` names (or `+` for one that adds capacity). */
function createdFor (request: SyncRequest, answer: SyncAnswer): string[] {
  const observed = new Set(podsOf(request).map(p => p.metadata.name))
  return answer.response.children.filter(c => !observed.has(c.metadata.name))
    .map(c => c.metadata.labels?.[REPLACE_ORIGIN_LABEL] ?? '+')
}
function keptAll (t: Test, request: SyncRequest, answer: SyncAnswer, what: string): void {
  t.same(answer.response.children.map(c => c.metadata.name).sort(), podsOf(request).map(p => p.metadata.name).sort(),
    `${what}: every Pod kept, none added`)
}
function setLabel (pod: KubeObject, key: string, value: string | undefined): void {
  const labels = { ...pod.metadata.labels }
  if (value === undefined) delete labels[key]
  else labels[key] = value
  pod.metadata.labels = labels
}
/** Replaces Pod `name` of the request by its Ready replacement of the updated revision (the origin gone). */
function updatedInPlaceOf (request: SyncRequest, name: string, newName: string): void {
  const pods = request.children['Pod.v1'] as Record<string, KubeObject>
  const origin = named(request, name)
  const replacement = structuredClone(origin)
  replacement.metadata = { ...replacement.metadata, name: newName, uid: `uid-${newName}` }
  setLabel(replacement, REVISION_LABEL, NEW)
  setLabel(replacement, REPLACE_ORIGIN_LABEL, name)
  delete pods[`default/${name}`]
  pods[`default/${newName}`] = replacement
}
function strategy (request: SyncRequest): Record<string, any> {
  const spec = specOf(request.parent)
  spec.updateStrategy ??= {}
  return spec.updateStrategy as Record<string, any>
}

t.test('partition 1 of 3: the newest, last-Ready Pods are updated, the oldest is kept at its revision', async t => {
  const request = fixture('collaset/sync-partition.v2.json')
  const first = sync(request)
  t.same(createdFor(request, first), ['foo-2jaln'], 'of the two to update (2jaln, 7xq2m), the older goes first')
  t.match(first.response.status, {
    replicas: 3, scheduledReplicas: 3, readyReplicas: 3, updatedReplicas: 0, currentRevision: OLD, updatedRevision: NEW
  })
  t.match(condition(first.response.status, 'Update'), { status: 'False', reason: 'Updating' })
  t.match(condition(first.response.status, 'Scale'), { status: 'True', reason: 'Scaled' })

  updatedInPlaceOf(request, 'foo-2jaln', 'foo-new01')
  t.same(createdFor(request, sync(request)), ['foo-7xq2m'], 'then the other one')

  updatedInPlaceOf(request, 'foo-7xq2m', 'foo-new02')
  const held = sync(request)
  keptAll(t, request, held, 'partition reached')
  t.match(held.response.status, {
    replicas: 3, updatedReplicas: 2, updatedReadyReplicas: 2, currentRevision: OLD, updatedRevision: NEW
  })
  t.match(condition(held.response.status, 'Update'), {
    status: 'True', reason: 'Partitioned', message: /^partition 1 keeps 1 Pod at an older revision \(2 of 3 Pods/
  })
  t.notOk('resyncAfterSeconds' in held.response)

  strategy(request).rollingUpdate.byPartition.partition = 0
  t.same(createdFor(request, sync(request)), ['foo-jk4r5'], 'partition 0: the last one is updated too')
  delete strategy(request).rollingUpdate
  t.same(createdFor(request, sync(request)), ['foo-jk4r5'], 'no partition: the same')
})

t.test('a partition as large as replicas updates nothing; kuperator updates all when there are fewer Pods',
  async t => {
    const request = fixture('collaset/sync-partition.v2.json')
    strategy(request).rollingUpdate.byPartition.partition = 3
    const answer = sync(request)
    keptAll(t, request, answer, 'partition 3 of 3')
    t.match(condition(answer.response.status, 'Update'), { status: 'True', reason: 'Partitioned' })

    const few = fixture('collaset/sync-partition.v2.json')
    specOf(few.parent).replicas = 3
    delete few.children['Pod.v1']?.['default/foo-7xq2m']
    delete few.children['Pod.v1']?.['default/foo-2jaln']
    strategy(few).rollingUpdate.byPartition.partition = 1
    t.same(createdFor(few, sync(few)).sort(), ['+', '+', 'foo-jk4r5'],
      'one Pod of 3 wanted, fewer than the 2 to update: it is updated, and 2 are added')
  })

t.test('a Pod not Ready is updated before Ready ones, whatever the partition keeps', async t => {
  const request = fixture('collaset/sync-partition.v2.json')
  const oldest = named(request, 'foo-jk4r5')
  for (const c of (oldest.status as { conditions: Array<Record<string, unknown>> }).conditions) {
    if (c.type === 'Ready') c.status = 'False'
  }
  t.same(createdFor(request, sync(request)), ['foo-jk4r5'])
})

t.test('paused: no Pod is created or removed to scale and none is updated; resumed, both go on', async t => {
  const request = fixture('collaset/sync-paused.v2.json')
  const paused = sync(request)
  keptAll(t, request, paused, 'paused, one Pod short and both of an older revision')
  t.match(condition(paused.response.status, 'Scale'), { status: 'False', reason: 'Paused', message: /spec.paused/ })
  t.match(condition(paused.response.status, 'Update'), { status: 'False', reason: 'Paused', message: /spec.paused/ })
  t.match(paused.response.status, { replicas: 2, updatedReplicas: 0 })

  const down = fixture('collaset/sync-paused.v2.json')
  specOf(down.parent).replicas = 1
  keptAll(t, down, sync(down), 'paused above replicas')

  const replace = fixture('collaset/sync-paused.v2.json')
  setLabel(named(replace, 'foo-2jaln'), TO_REPLACE_LABEL, 'true')
  t.same(createdFor(replace, sync(replace)), ['foo-2jaln'], 'a replace request still gets its replacement')

  specOf(request.parent).paused = false
  const resumed = sync(request)
  t.same(createdFor(request, resumed).sort(), ['+', 'foo-jk4r5'], 'resumed: the missing Pod, and the rollout')
  t.match(condition(resumed.response.status, 'Scale'), { status: 'False', reason: 'ScalingOut' })
  t.match(condition(resumed.response.status, 'Update'), { status: 'False', reason: 'Updating' })
})

t.test('byLabel: only Pods labelled jobhooks.io/update-included are updated', async t => {
  const request = fixture('collaset/sync-bylabel.v2.json')
  t.equal(UPDATE_INCLUDED_LABEL, 'jobhooks.io/update-included')
  t.same(createdFor(request, sync(request)), ['foo-2jaln'], 'the labelled Pod, though the other is older')

  setLabel(named(request, 'foo-2jaln'), UPDATE_INCLUDED_LABEL, undefined)
  const none = sync(request)
  keptAll(t, request, none, 'no Pod labelled')
  t.match(condition(none.response.status, 'Update'), {
    status: 'True',
    reason: 'ByLabel',
    message: /^2 Pods of an older revision wait for the label jobhooks.io\/update-included/
  })

  setLabel(named(request, 'foo-jk4r5'), UPDATE_INCLUDED_LABEL, '')
  t.same(createdFor(request, sync(request)), ['foo-jk4r5'], 'any value of the label counts')

  strategy(request).rollingUpdate.byPartition = { partition: 0 }
  setLabel(named(request, 'foo-jk4r5'), UPDATE_INCLUDED_LABEL, undefined)
  keptAll(t, request, sync(request), 'byLabel wins over a partition, as in kuperator')
})

t.test('operationDelaySeconds: the next Pod waits that long after the last replacement became Ready', async t => {
  const request = fixture('collaset/sync-delay.v2.json')
  const waiting = sync(request)
  keptAll(t, request, waiting, 'within the delay')
  t.equal(waiting.response.resyncAfterSeconds, 20, 'Ready at 03:03:55, 30 s, now 03:04:05: 20 s left (law 4)')
  t.equal(waiting.response.status.nextUpdateTime, '2026-01-02T03:04:25Z')
  t.match(condition(waiting.response.status, 'Update'), {
    status: 'False',
    reason: 'OperationDelay',
    message: /^operationDelaySeconds 30: the next Pod is updated at 2026-01-02T03:04:25Z/
  })
  t.equal(JSON.stringify(sync(request)), JSON.stringify(waiting), 'the same answer again (law 3)')
  const later = sync(request, new Date('2026-01-02T03:04:15Z'))
  t.equal(later.response.resyncAfterSeconds, 10)
  t.equal(later.response.status.nextUpdateTime, '2026-01-02T03:04:25Z', 'a still status: an absolute time (law 5)')

  const due = sync(request, new Date('2026-01-02T03:04:25Z'))
  t.same(createdFor(request, due), ['foo-jk4r5'], 'at the end of the delay the next Pod is updated')
  t.notOk('resyncAfterSeconds' in due.response)
  t.notOk('nextUpdateTime' in due.response.status)

  strategy(request).operationDelaySeconds = 0
  t.same(createdFor(request, sync(request)), ['foo-jk4r5'], 'no delay: at once')
})

t.test('an update strategy it cannot read is Invalid and keeps every Pod (law 2)', async t => {
  const request = fixture('collaset/sync-invalid-strategy.v2.json')
  const answer = sync(request)
  keptAll(t, request, answer, 'partition -1')
  t.same(answer.effects, [])
  t.match(condition(answer.response.status, 'Valid'), {
    status: 'False', reason: 'InvalidSpec', message: /spec.updateStrategy.rollingUpdate.byPartition.partition/
  })
  const cases: Array<[string, (spec: Record<string, any>) => void, RegExp]> = [
    ['partition 1.5', s => { s.updateStrategy.rollingUpdate.byPartition.partition = 1.5 }, /partition/],
    ['partition "1"', s => { s.updateStrategy.rollingUpdate.byPartition.partition = '1' }, /partition/],
    ['paused "yes"', s => { s.paused = 'yes' }, /spec.paused must be true or false/],
    ['updateStrategy "fast"', s => { s.updateStrategy = 'fast' }, /spec.updateStrategy must be an object/],
    ['byLabel true', s => { s.updateStrategy = { rollingUpdate: { byLabel: true } } }, /byLabel must be an object/],
    ['delay -5', s => { s.updateStrategy = { operationDelaySeconds: -5 } }, /operationDelaySeconds/],
    ['delay 2 days', s => { s.updateStrategy = { operationDelaySeconds: 172800 } }, /operationDelaySeconds/]
  ]
  for (const [what, edit, message] of cases) {
    const bad = fixture('collaset/sync-invalid-strategy.v2.json')
    edit(specOf(bad.parent))
    const refused = sync(bad)
    keptAll(t, bad, refused, what)
    t.match(condition(refused.response.status, 'Valid'), { status: 'False', message }, what)
  }
})
