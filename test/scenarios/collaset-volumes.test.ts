// CollaSet volumes on the in-process Metacontroller (as test/scenarios/collaset.test.ts: the hook
// over HTTP, its effects applied, a scripted kubelet): a claim per Pod from
// spec.volumeClaimTemplates, kept or deleted on scale-in by whenScaled, kept across a Replace, and
// garbage-collected with the CollaSet.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { TO_REPLACE_LABEL } from '../../src/k8s/labels.js'
import { INSTANCE_LABEL } from '../../src/controllers/collaset/volumes.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { livePods, podCondition } from '../helpers/scenarios.js'
import { bringUp, fooRef, podRef } from '../helpers/collaset.js'
import { specOf } from '../helpers/objects.js'

const CLAIMS = [
  { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }
]

function claims (sim: Simulator): KubeObject[] {
  return sim.list({ apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, 'default')
}
const claimNames = (sim: Simulator): string[] => claims(sim).map(c => c.metadata.name).sort()
const ready = (sim: Simulator): KubeObject[] => livePods(sim).filter(p => podCondition(p, 'Ready') === 'True')

/** The claim a Pod mounts as its `data` volume. */
function mounted (pod: KubeObject | undefined): string | undefined {
  const volumes = isRecord(pod?.spec) && Array.isArray(pod.spec.volumes) ? pod.spec.volumes : []
  const data = volumes.filter(isRecord).find(v => v.name === 'data')
  return isRecord(data?.persistentVolumeClaim) ? data.persistentVolumeClaim.claimName as string : undefined
}

function withPolicy (whenScaled?: string): Record<string, unknown> {
  const scaleStrategy = whenScaled === undefined ? {} : { persistentVolumeClaimRetentionPolicy: { whenScaled } }
  return { volumeClaimTemplates: CLAIMS, scaleStrategy }
}

t.test('each Pod mounts its own claim, owned by the CollaSet', async t => {
  const { sim } = await bringUp(t, withPolicy())
  const pods = livePods(sim)
  t.equal(pods.length, 3)
  t.same(pods.map(mounted).sort(), pods.map(p => `data-${p.metadata.name}`).sort(), 'data-<pod> each')
  t.same(claimNames(sim), pods.map(p => `data-${p.metadata.name}`).sort(), 'and those claims exist, no other')
  const uid = sim.get(fooRef)?.metadata.uid
  for (const claim of claims(sim)) {
    t.equal(claim.metadata.ownerReferences?.[0]?.uid, uid, `${claim.metadata.name} is owned by foo`)
  }
  await sim.runUntilQuiet()
})

t.test('scale-in: whenScaled Delete deletes the claims of the Pods that went, Retain keeps them', async t => {
  for (const whenScaled of ['Delete', 'Retain']) {
    const { sim, kubelet } = await bringUp(t, withPolicy(whenScaled))
    const before = claimNames(sim)
    sim.edit(fooRef, o => { specOf(o).replicas = 1 })
    await kubelet.run(20)
    const left = livePods(sim)
    t.equal(left.length, 1, `${whenScaled}: one Pod left`)
    const own = `data-${String(left[0]?.metadata.name)}`
    t.same(claimNames(sim), whenScaled === 'Delete' ? [own] : before, `${whenScaled}: the claims left`)
    if (whenScaled === 'Retain') {
      sim.edit(fooRef, o => { specOf(o).replicas = 3 })
      await kubelet.run(20)
      t.same(claimNames(sim), before, 'scaled out again: the retained claims, no new one')
      t.same(livePods(sim).map(mounted).sort(), before, 'each mounted by a Pod again')
    }
    await sim.runUntilQuiet()
  }
})

t.test('a replaced Pod hands its claim to its replacement', async t => {
  const { sim, kubelet } = await bringUp(t, withPolicy('Delete'))
  const before = claims(sim)
  const origin = livePods(sim)[0] as KubeObject
  const claim = `data-${origin.metadata.name}`
  sim.edit(podRef(origin.metadata.name), o => {
    o.metadata.labels = { ...o.metadata.labels, [TO_REPLACE_LABEL]: 'true' }
  })
  await kubelet.run(20)
  t.notOk(sim.get(podRef(origin.metadata.name)), 'the origin is gone')
  t.equal(ready(sim).length, 3)
  const replacement = livePods(sim).find(p => p.metadata.labels?.[INSTANCE_LABEL] === origin.metadata.name)
  t.ok(replacement, "a Pod of the origin's instance")
  t.not(replacement?.metadata.name, origin.metadata.name)
  t.equal(mounted(replacement), claim, "it mounts the origin's claim")
  t.same(claims(sim).map(c => [c.metadata.name, c.metadata.uid]).sort(),
    before.map(c => [c.metadata.name, c.metadata.uid]).sort(), 'every claim the same object (UID), none added')
  await sim.runUntilQuiet()
})

t.test('deleting the CollaSet garbage-collects its claims (whenDeleted: Delete)', async t => {
  const { sim } = await bringUp(t, withPolicy())
  t.equal(claims(sim).length, 3)
  sim.delete(fooRef)
  await sim.runUntilQuiet()
  t.same(claimNames(sim), [], 'no claim left')
  t.equal(livePods(sim).length, 0)
})

t.test('whenDeleted: Retain releases the claims before the CollaSet goes: they stay, owned by nothing', async t => {
  const retain = { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain' } }
  const policy = { volumeClaimTemplates: CLAIMS, scaleStrategy: retain }
  const { sim } = await bringUp(t, policy)
  const before = claims(sim).map(c => `${c.metadata.name}/${c.metadata.uid}`).sort()
  t.equal(before.length, 3)
  sim.delete(fooRef)
  await sim.runUntilQuiet()
  t.notOk(sim.get(fooRef), 'the CollaSet is gone')
  t.equal(livePods(sim).length, 0, 'its Pods with it')
  t.same(claims(sim).map(c => `${c.metadata.name}/${c.metadata.uid}`).sort(), before, 'the same claims stay')
  for (const claim of claims(sim)) {
    t.same(claim.metadata.ownerReferences ?? [], [], `${claim.metadata.name}: no owner`)
    t.notOk(claim.metadata.labels?.['controller-uid'], `${claim.metadata.name}: out of the generated selector`)
  }
  t.ok(sim.effects.log.some(e => e.effect.type === 'ReleaseClaim' && e.result === 'applied'), 'released by the effect')
})

t.test('a Recreate rollout: each new Pod takes the instance and claim of the Pod it recreates', async t => {
  const { sim, kubelet } = await bringUp(t, {
    ...withPolicy('Delete'), updateStrategy: { podUpgradePolicy: 'Recreate' }
  })
  const before = claims(sim).map(c => `${c.metadata.name}/${String(c.metadata.uid)}`).sort()
  const oldPods = livePods(sim).map(p => p.metadata.uid)
  sim.edit(fooRef, o => {
    const template = specOf(o).template as { spec: { containers: Array<Record<string, unknown>> } }
    const [first] = template.spec.containers
    if (first !== undefined) first.env = [{ name: 'MODE', value: 'new' }]
  })
  await kubelet.run(60)
  const pods = livePods(sim)
  t.equal(pods.length, 3)
  t.notOk(pods.some(p => oldPods.includes(p.metadata.uid)), 'every Pod recreated')
  t.same(claims(sim).map(c => `${c.metadata.name}/${String(c.metadata.uid)}`).sort(), before,
    'the same claims (UIDs), none deleted, none added')
  t.same(pods.map(mounted).sort(), before.map(c => c.split('/')[0]).sort(), 'each mounted by a new Pod')
  await sim.runUntilQuiet()
})
