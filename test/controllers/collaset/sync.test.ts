// The CollaSet sync hook on requests as Metacontroller sends them (test/fixtures/collaset/, Pods
// as the API server returns them): names, the readiness gate and its effect, scaling, the
// replace protocol, the rollout, invalid specs, and determinism.
import t from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import { REVISION_LABEL, templateRevision } from '../../../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL, SERVICE_READY, TO_REPLACE_LABEL, OPS_LIFECYCLE_LABEL } from '../../../src/k8s/labels.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { SetPodCondition } from '../../../src/effects/types.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { timestamp } from '../../../src/k8s/time.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { FIXED_NOW, testApp } from '../../helpers/app.js'
import { condition } from '../../helpers/conditions.js'
import { specOf, statusOf } from '../../helpers/objects.js'
import type { CollaSetStatus } from '../../../src/controllers/collaset/sync.js'
import type { PodSpec, PodStatus } from 'kubernetes-types/core/v1.js'

/** A CollaSet's spec as written: the pod template the tests read and edit. */
type CollaSetManifestSpec = {
  template: Parameters<typeof templateRevision>[1] & { spec: PodSpec }
} & Record<string, unknown>

const NOW = timestamp(FIXED_NOW)

function sync (request: SyncRequest): SyncAnswer {
  return syncCollaSet(request, context())
}
function pods (request: SyncRequest): KubeObject[] {
  return Object.values(request.children['Pod.v1'] ?? {})
}
function pod (request: SyncRequest, index: number): KubeObject {
  return pods(request)[index] as KubeObject
}
function names (answer: SyncAnswer): string[] {
  return answer.response.children.map(c => c.metadata.name)
}
function conditions (answer: SyncAnswer): SetPodCondition[] {
  return answer.effects.filter((e): e is SetPodCondition => e.type === 'SetPodCondition')
}
/** Makes a Pod of the request Ready, as the kubelet reports it once its readiness gate is True. */
function makeReady (p: KubeObject): void {
  const status = statusOf<PodStatus>(p)
  status.phase = 'Running'
  for (const c of status.conditions!) if (c.type === 'Ready' || c.type === 'ContainersReady') c.status = 'True'
  if (!status.conditions!.some(c => c.type === SERVICE_READY)) {
    status.conditions!.push(
      { type: SERVICE_READY, status: 'True' }
    )
  }
}
function setLabel (p: KubeObject, key: string, value: string | undefined): void {
  const labels = { ...p.metadata.labels }
  if (value === undefined) delete labels[key]
  else labels[key] = value
  p.metadata.labels = labels
}

t.test('the first sync creates `replicas` Pods with deterministic names, the revision label and the readiness ' +
  'gate', async t => {
  const request = fixture('collaset/sync-new.v2.json')
  const answer = sync(request)
  const spec = specOf<CollaSetManifestSpec>(request.parent)
  const revision = templateRevision('foo', spec.template)
  t.equal(answer.response.children.length, 2)
  for (const child of answer.response.children) {
    t.match(child.metadata.name, /^foo-[a-z0-9]{5}$/)
    t.same(child.metadata.labels, { app: 'foo', [REVISION_LABEL]: revision })
    t.equal(child.metadata.namespace, 'default')
    t.same(specOf<PodSpec>(child).readinessGates, [{ conditionType: SERVICE_READY }])
    t.same(specOf<PodSpec>(child).containers, spec.template.spec.containers)
  }
  t.same(names(answer), names(sync(fixture('collaset/sync-new.v2.json'))), 'the same names every time')
  t.same(answer.effects, [])
  t.same(answer.response.status, {
    observedGeneration: request.parent.metadata.generation,
    replicas: 0,
    scheduledReplicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    operatingReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
    currentRevision: revision,
    updatedRevision: revision,
    selector: 'app=foo',
    conditions: [
      { type: 'Valid', status: 'True', reason: 'SpecValid', message: 'the spec is valid', lastTransitionTime: NOW },
      {
        type: 'Scale',
        status: 'False',
        reason: 'ScalingOut',
        message: '0 Pods of 2: creating 2',
        lastTransitionTime: NOW
      },
      {
        type: 'Update',
        status: 'True',
        reason: 'Updated',
        message: `every Pod runs revision ${revision}`,
        lastTransitionTime: NOW
      }
    ]
  })
  t.notOk('resyncAfterSeconds' in answer.response)
})

t.test('a steady CollaSet keeps its Pods as observed and owes nothing; its status reads like the ' +
  'reference', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  const answer = sync(request)
  t.same(names(answer), pods(request).map(p => p.metadata.name).sort())
  for (const child of answer.response.children) {
    t.notOk('status' in child, 'no status in a desired child')
    t.notOk('uid' in child.metadata)
    t.notOk('managedFields' in child.metadata)
    t.notOk(
      child.metadata.annotations?.['metacontroller.k8s.io/last-applied-configuration'],
      'no last-applied bookkeeping'
    )
  }
  t.same(answer.effects, [])
  const previous = statusOf<CollaSetStatus>(request.parent)
  t.match(answer.response.status, {
    observedGeneration: request.parent.metadata.generation,
    replicas: 2,
    scheduledReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    operatingReplicas: 0,
    updatedReplicas: 2,
    updatedReadyReplicas: 2,
    updatedAvailableReplicas: 2,
    currentRevision: previous.updatedRevision,
    updatedRevision: previous.updatedRevision
  })
  const answered = answer.response.status.conditions as unknown[]
  t.same(answered.slice(0, previous.conditions.length), previous.conditions, 'conditions carried as they were (law 5)')
  t.match(
    condition(answer.response.status, 'Scale'),
    { status: 'True', reason: 'Scaled', message: '2 Pods, as spec.replicas asks' }
  )
  t.match(condition(answer.response.status, 'Update'), { status: 'True', reason: 'Updated' })
  const again = fixture('collaset/sync-steady.v2.json')
  again.parent.status = answer.response.status
  t.same(sync(again).response.status, answer.response.status, 'the status it answered is answered again (law 5)')
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call or another key order', async t => {
  for (const name of ['sync-steady', 'sync-replace']) {
    const v1 = JSON.stringify(sync(fixture(`collaset/${name}.v1.json`)))
    const v2 = JSON.stringify(sync(fixture(`collaset/${name}.v2.json`)))
    t.equal(v1, v2, name)
    t.equal(JSON.stringify(sync(fixture(`collaset/${name}.v2.json`))), v2, `${name}: repeated`)
    const reversed = fixture(`collaset/${name}.v2.json`)
    reversed.children['Pod.v1'] = Object.fromEntries(Object.entries(reversed.children['Pod.v1'] ?? {}).reverse())
    t.equal(JSON.stringify(sync(reversed)), v2, `${name}: another key order`)
  }
})

t.test('service-ready is set True (an effect) once the containers are ready, once, with the Pod UID', async t => {
  const request = fixture('collaset/sync-containers-ready.v2.json')
  const answer = sync(request)
  const target = pod(request, 1)
  t.same(answer.effects, [{
    type: 'SetPodCondition',
    target: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'default',
      name: target.metadata.name,
      uid: target.metadata.uid
    },
    condition: {
      type: SERVICE_READY,
      status: 'True',
      reason: 'ContainersReady',
      message: 'the containers of the Pod are ready',
      lastTransitionTime: '2026-01-02T03:04:05Z'
    }
  }])
  t.equal(answer.response.status.readyReplicas, 1)
  t.equal(answer.response.status.availableReplicas, 1)
  makeReady(target)
  t.same(sync(request).effects, [], 'nothing owed once the condition is there')

  const pending = fixture('collaset/sync-containers-ready.v2.json')
  for (const c of statusOf<PodStatus>(pod(pending, 1)).conditions!) if (c.type === 'ContainersReady') c.status = 'False'
  t.same(sync(pending).effects, [], 'not before the containers are ready')

  const held = fixture('collaset/sync-containers-ready.v2.json')
  setLabel(pod(held, 1), OPS_LIFECYCLE_LABEL, 'opj-restart')
  t.same(sync(held).effects, [], 'a Pod held by a PodOpsLifecycle: the lifecycle owns the condition')

  const off = fixture('collaset/sync-containers-ready.v2.json')
  statusOf<PodStatus>(pod(off, 1)).conditions!.push({ type: SERVICE_READY, status: 'False' })
  t.equal(conditions(sync(off)).length, 1, 'a False condition without a lifecycle is set True again')

  const ungated = fixture('collaset/sync-containers-ready.v2.json')
  delete specOf<PodSpec>(pod(ungated, 1)).readinessGates
  t.same(sync(ungated).effects, [], 'a Pod without the gate (adopted, say) is left alone')
})

t.test('scale up adds Pods with new names; scale down drains, removes not-Ready Pods first, then newest', async t => {
  const up = fixture('collaset/sync-steady.v2.json')
  specOf(up.parent).replicas = 4
  const grown = sync(up)
  const before = pods(up).map(p => p.metadata.name)
  const added = names(grown).filter(n => !before.includes(n))
  t.equal(added.length, 2)
  for (const name of added) t.match(name, /^foo-[a-z0-9]{5}$/)

  const down = fixture('collaset/sync-steady.v2.json')
  specOf(down.parent).replicas = 1
  const newest = pods(down).sort(
    (a, b) => (a.metadata.creationTimestamp as string).localeCompare(b.metadata.creationTimestamp as string)
  )[1] as KubeObject
  const draining = sync(down)
  t.same(names(draining), pods(down).map(p => p.metadata.name).sort(), 'a serving Pod is drained first: kept')
  t.same(conditions(draining).map(e => [e.target.name, e.condition.status, e.condition.reason]),
    [[newest.metadata.name, 'False', 'ScaleIn']], 'the newest leaves traffic')
  for (const c of statusOf<PodStatus>(newest).conditions!) if (c.type === SERVICE_READY) c.status = 'False'
  t.notOk(names(sync(down)).includes(newest.metadata.name), 'out of traffic, the newest goes')

  const notReady = fixture('collaset/sync-steady.v2.json')
  specOf(notReady.parent).replicas = 1
  const oldest = pod(notReady, 0)
  for (const c of statusOf<PodStatus>(oldest).conditions!) if (c.type === 'Ready') c.status = 'False'
  t.same(names(sync(notReady)), [pod(notReady, 1).metadata.name], 'a not-Ready Pod goes before a Ready one')

  const zero = fixture('collaset/sync-steady.v2.json')
  specOf(zero.parent).replicas = 0
  t.equal(conditions(sync(zero)).length, 2, 'both leave traffic first')
  for (const p of pods(zero)) {
    for (const c of statusOf<PodStatus>(p).conditions!) if (c.type === 'Ready') c.status = 'False'
  }
  t.same(names(sync(zero)), [], 'not Ready, both go')
})

t.test('replace: the replacement is kept while it comes up, the origin goes once it is Ready', async t => {
  const request = fixture('collaset/sync-replace.v2.json')
  const [origin, other, replacement] = pods(request) as [KubeObject, KubeObject, KubeObject]
  t.equal(replacement.metadata.labels?.[REPLACE_ORIGIN_LABEL], origin.metadata.name)
  const answer = sync(request)
  t.same(names(answer), [origin, other, replacement].map(p => p.metadata.name).sort(), 'all three kept, nothing new')
  t.match(
    answer.response.status,
    { replicas: 3, readyReplicas: 2, operatingReplicas: 1, updatedReplicas: 3, updatedReadyReplicas: 2 }
  )

  makeReady(replacement)
  const done = sync(request)
  t.same(names(done), [other, replacement].map(p => p.metadata.name).sort(), 'the origin is dropped')
  t.match(done.response.status, { replicas: 2, readyReplicas: 2, operatingReplicas: 0 })
})

t.test('replace: a to-replace Pod without a replacement gets one, labelled with its origin and the current ' +
  'revision', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  const origin = pod(request, 1)
  setLabel(origin, TO_REPLACE_LABEL, 'true')
  const answer = sync(request)
  const created = answer.response.children.filter(c => !pods(request).some(p => p.metadata.name === c.metadata.name))
  t.equal(created.length, 1)
  t.equal(created[0]?.metadata.labels?.[REPLACE_ORIGIN_LABEL], origin.metadata.name)
  t.equal(created[0]?.metadata.labels?.[REVISION_LABEL], statusOf<CollaSetStatus>(request.parent).updatedRevision)
  t.notOk(created[0]?.metadata.labels?.[TO_REPLACE_LABEL])
  t.ok(names(answer).includes(origin.metadata.name), 'the origin stays for now')
})

t.test('replace: removing the label before the replacement is Ready drops the replacement', async t => {
  const request = fixture('collaset/sync-replace.v2.json')
  const [origin, other, replacement] = pods(request) as [KubeObject, KubeObject, KubeObject]
  setLabel(origin, TO_REPLACE_LABEL, undefined)
  t.same(names(sync(request)), [origin, other].map(p => p.metadata.name).sort())
  makeReady(replacement)
  const draining = sync(request)
  t.same(conditions(draining).map(e => [e.target.name, e.condition.status]), [[replacement.metadata.name, 'False']],
    'a Ready replacement whose request was withdrawn is one Pod too many: scale-down drains the newest')
  for (const c of statusOf<PodStatus>(replacement).conditions!) if (c.type === SERVICE_READY) c.status = 'False'
  const late = sync(request)
  t.equal(late.response.children.length, 2, 'then it goes')
  t.ok(names(late).includes(origin.metadata.name) && names(late).includes(other.metadata.name))
})

t.test('replace: the origin deleted by hand first leaves the replacement as a regular member, no new Pod', async t => {
  const request = fixture('collaset/sync-replace.v2.json')
  const [origin, other, replacement] = pods(request) as [KubeObject, KubeObject, KubeObject]
  delete request.children['Pod.v1']?.[`default/${origin.metadata.name}`]
  t.same(names(sync(request)), [other, replacement].map(p => p.metadata.name).sort())
  const terminating = fixture('collaset/sync-replace.v2.json')
  pod(terminating, 0).metadata.deletionTimestamp = NOW
  const answer = sync(terminating)
  t.same(
    names(answer),
    pods(terminating).map(p => p.metadata.name).sort(),
    'a terminating origin is returned as observed, nothing new'
  )
  t.equal(answer.response.status.replicas, 2, 'a terminating Pod is not counted')
})

t.test('a template change is rolled out one Pod at a time, new Pod first', async t => {
  const request = fixture('collaset/sync-rollout.v2.json')
  const [first, second] = pods(request) as [KubeObject, KubeObject]
  const answer = sync(request)
  const revision = answer.response.status.updatedRevision as string
  t.not(revision, 'foo-7bdb974bc7')
  const created = answer.response.children.filter(
    c => c.metadata.name !== first.metadata.name && c.metadata.name !== second.metadata.name
  )
  t.equal(created.length, 1, 'one surge Pod')
  t.equal(created[0]?.metadata.labels?.[REPLACE_ORIGIN_LABEL], first.metadata.name, 'the oldest Pod first')
  t.equal(specOf<PodSpec>(created[0]).containers[0]?.image, 'nginx:1.28')
  t.match(
    answer.response.status,
    { currentRevision: 'foo-7bdb974bc7', updatedRevision: revision, updatedReplicas: 0, replicas: 2 }
  )

  // Next sync: the surge Pod exists, not Ready: nothing more.
  const next = fixture('collaset/sync-rollout.v2.json')
  const observed = JSON.parse(JSON.stringify(pod(next, 1))) as KubeObject
  observed.metadata = {
    ...observed.metadata,
    name: created[0]?.metadata.name as string,
    uid: 'uid-new',
    labels: created[0]?.metadata.labels as Record<string, string>,
    creationTimestamp: NOW
  }
  specOf<PodSpec>(observed).containers = specOf<PodSpec>(created[0]).containers
  for (const c of statusOf<PodStatus>(observed).conditions!) {
    if (c.type === 'Ready' || c.type === 'ContainersReady') c.status = 'False'
  }
  next.children['Pod.v1']![`default/${observed.metadata.name}`] = observed
  t.equal(sync(next).response.children.length, 3, 'no second surge Pod while the first is not Ready')
  makeReady(observed)
  const moved = sync(next)
  t.notOk(names(moved).includes(first.metadata.name), 'the old Pod goes once the new one is Ready')
  const second2 = moved.response.children.filter(
    c => c.metadata.labels?.[REPLACE_ORIGIN_LABEL] === second.metadata.name
  )
  t.equal(second2.length, 1, 'and the next old Pod gets its replacement')
})

t.test('an invalid spec keeps every Pod exactly as observed and says why (law 2)', async t => {
  const request = fixture('collaset/sync-invalid.v2.json')
  const answer = sync(request)
  t.same(names(answer), pods(request).map(p => p.metadata.name).sort())
  t.same(answer.effects, [])
  const valid = condition(answer.response.status, 'Valid')
  t.match(
    valid,
    {
      status: 'False',
      reason: 'InvalidSpec',
      message: /spec.selector does not match spec.template.metadata.labels/,
      lastTransitionTime: NOW
    }
  )
  t.equal(answer.response.status.replicas, 2, 'the counts of the last good sync stay')

  for (const [replicas, message] of [[-1, /spec.replicas/], [1.5, /spec.replicas/], ['2', /spec.replicas/]] as const) {
    const bad = fixture('collaset/sync-steady.v2.json')
    specOf(bad.parent).replicas = replicas
    const refused = sync(bad)
    t.equal(refused.response.children.length, 2, `replicas ${JSON.stringify(replicas)}: every Pod kept`)
    t.match(condition(refused.response.status, 'Valid'), { status: 'False', message })
  }
  const noContainers = fixture('collaset/sync-steady.v2.json')
  specOf<CollaSetManifestSpec>(noContainers.parent).template.spec.containers = []
  t.match(JSON.stringify(sync(noContainers).response.status), /at least one container/)
  const noSelector = fixture('collaset/sync-steady.v2.json')
  delete specOf(noSelector.parent).selector
  t.match(JSON.stringify(sync(noSelector).response.status), /spec.selector/)
})

t.test('a finished Pod (Failed) is dropped and replaced by a new one', async t => {
  const request = fixture('collaset/sync-steady.v2.json')
  const failed = pod(request, 0)
  statusOf<PodStatus>(failed).phase = 'Failed'
  const answer = sync(request)
  t.notOk(names(answer).includes(failed.metadata.name))
  t.equal(answer.response.children.length, 2)
})

t.test('the sync route answers with the whole status and applies the SetPodCondition effect', async t => {
  const recorded: string[] = []
  const app = await testApp(
    t,
    {
      effects: {
        mode: 'dry-run',
        apply: async (_parent, effects) => {
          recorded.push(
            ...effects.map(e => `${e.type} ${e.target.name}`)
          ); return effects.map(effect => ({ effect, result: 'applied' as const }))
        }
      }
    }
  )
  const request = fixture('collaset/sync-containers-ready.v2.json')
  const reply = await app.inject({ method: 'POST', url: '/hooks/collaset/sync', payload: request })
  t.equal(reply.statusCode, 200)
  const body = reply.json()
  t.same(Object.keys(body).sort(), ['children', 'status'])
  t.same(recorded, [`SetPodCondition ${pod(request, 1).metadata.name}`])
  t.match(condition(body.status, 'Valid'), { status: 'True' })
  t.match(condition(body.status, 'EffectsApplied'), { status: 'True' })
  const garbage = await app.inject({ method: 'POST', url: '/hooks/collaset/sync', payload: { nope: true } })
  t.equal(garbage.statusCode, 400)
})

t.test('a replacement of a replacement still coming up is dropped, not counted', async t => {
  const request = fixture('collaset/sync-replace.v2.json')
  const [origin, other, replacement] = pods(request) as [KubeObject, KubeObject, KubeObject]
  const chained = JSON.parse(JSON.stringify(replacement)) as KubeObject
  chained.metadata = {
    ...chained.metadata,
    name: 'foo-zzzzz',
    uid: 'uid-chained',
    labels: { ...replacement.metadata.labels, [REPLACE_ORIGIN_LABEL]: replacement.metadata.name }
  }
  request.children['Pod.v1']!['default/foo-zzzzz'] = chained
  t.same(names(sync(request)), [origin, other, replacement].map(p => p.metadata.name).sort())
})
