// CollaSet scale controls on the in-process Metacontroller (as test/scenarios/collaset.test.ts: the
// hook over HTTP, its effects applied, a scripted kubelet): kuperator's scaleStrategy.podToDelete
// and the jobhooks.io/to-delete label replace the Pods they name, scale-in goes in kube-xset's
// order, and PersistentSequence names Pods by ordinal.
import t from 'tap'
import { TO_DELETE_LABEL } from '../../src/controllers/collaset/pods.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { livePods, podCondition } from '../helpers/scenarios.js'
import { condition } from '../helpers/conditions.js'
import { bringUp, fooRef, fooStatus, podRef } from '../helpers/collaset.js'
import { specOf } from '../helpers/objects.js'

const status = fooStatus
const names = (sim: Simulator): string[] => livePods(sim).map(p => p.metadata.name).sort()
const ready = (sim: Simulator): string[] =>
  livePods(sim).filter(p => podCondition(p, 'Ready') === 'True').map(p => p.metadata.name).sort()

t.test('podToDelete deletes the named Pod and a new one takes its place', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = names(sim)
  t.equal(ready(sim).length, 3)
  const victim = before[1] as string
  sim.edit(fooRef, o => {
    specOf(o).scaleStrategy = { podToDelete: [victim, 'nobody'] }
  })
  await kubelet.run(15)
  t.notOk(sim.get(podRef(victim)), `${victim} is gone`)
  t.equal(ready(sim).length, 3, 'three Pods Ready again')
  t.notOk(names(sim).includes(victim), 'no new Pod takes the listed name')
  t.same(names(sim).filter(n => before.includes(n)), before.filter(n => n !== victim), 'the others stay')
  const ignored = [victim, 'nobody'].sort().join(', ')
  t.match(condition(status(sim), 'Scale'), {
    status: 'True',
    reason: 'Scaled',
    message: '3 Pods, as spec.replicas asks; spec.scaleStrategy.podToDelete names no Pod of the set, ' +
      `ignored: ${ignored}`
  })
  await sim.runUntilQuiet()
})

t.test('the jobhooks.io/to-delete label does the same', async t => {
  const { sim, kubelet } = await bringUp(t)
  const victim = names(sim)[0] as string
  sim.edit(podRef(victim), o => {
    o.metadata.labels = { ...o.metadata.labels, [TO_DELETE_LABEL]: 'true' }
  })
  await kubelet.run(15)
  t.notOk(sim.get(podRef(victim)))
  t.equal(ready(sim).length, 3)
  t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
  await sim.runUntilQuiet()
})

t.test('scale 3 to 1 removes the to-delete Pod, then the one not Ready, and keeps the Ready one', async t => {
  const stuck = new Set<string>()
  const { sim, kubelet } = await bringUp(t, { replicas: 2 }, { neverStarts: p => stuck.has(p.metadata.name) })
  const [first, second] = names(sim) as [string, string]
  const known = new Set(names(sim))
  sim.edit(fooRef, o => {
    specOf(o).replicas = 3
  })
  await sim.advance(0)
  const third = names(sim).find(n => !known.has(n)) as string
  stuck.add(third)
  await kubelet.run(10)
  t.same(ready(sim), [first, second].sort(), `${third} never starts`)
  sim.edit(podRef(first), o => {
    o.metadata.labels = { ...o.metadata.labels, [TO_DELETE_LABEL]: 'true' }
  })
  sim.edit(fooRef, o => {
    specOf(o).replicas = 1
  })
  await kubelet.run(15)
  t.same(names(sim), [second], `${first} (to-delete) and ${third} (not Ready) went, ${second} stays`)
  t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
  await sim.runUntilQuiet()
})

t.test('PersistentSequence names foo-0..2 and reuses foo-1 after it is deleted', async t => {
  const { sim, kubelet } = await bringUp(t, { namingStrategy: { podNamingSuffixPolicy: 'PersistentSequence' } })
  t.same(names(sim), ['foo-0', 'foo-1', 'foo-2'])
  t.same(ready(sim), ['foo-0', 'foo-1', 'foo-2'])
  for (const pod of livePods(sim)) t.equal((pod.spec as { hostname?: string }).hostname, pod.metadata.name)
  const uid = sim.get(podRef('foo-1'))?.metadata.uid
  sim.delete(podRef('foo-1'))
  await kubelet.run(10)
  t.same(names(sim), ['foo-0', 'foo-1', 'foo-2'], 'foo-1 is back')
  t.not(sim.get(podRef('foo-1'))?.metadata.uid, uid, 'a new Pod')
  t.same(ready(sim), ['foo-0', 'foo-1', 'foo-2'])
  sim.edit(fooRef, o => {
    specOf(o).replicas = 4
  })
  await kubelet.run(10)
  t.same(names(sim), ['foo-0', 'foo-1', 'foo-2', 'foo-3'])
  await sim.runUntilQuiet()
})

t.test('podToExclude releases the Pod: it stays, unowned, and a new Pod takes its place', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = names(sim)
  const victim = before[0] as string
  sim.edit(fooRef, o => {
    specOf(o).scaleStrategy = { podToExclude: [victim] }
  })
  await kubelet.run(15)
  const released = sim.get(podRef(victim))
  t.ok(released, `${victim} still runs`)
  t.same(released?.metadata.ownerReferences ?? [], [], 'no owner: Metacontroller released it')
  t.notOk(released?.metadata.labels?.['controller-uid'], 'out of the generated selector')
  const owned = livePods(sim).filter(p => (p.metadata.ownerReferences ?? []).length > 0)
  t.equal(owned.length, 3, 'the CollaSet owns 3 Pods again')
  t.equal(owned.filter(p => podCondition(p, 'Ready') === 'True').length, 3)
  t.match(status(sim), { replicas: 3 })
  t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
  await sim.runUntilQuiet()
  t.ok(sim.get(podRef(victim)), 'and is never deleted')
})

t.test('scaleStrategy.operationDelaySeconds: a Pod scaled in stays out of traffic that long, then goes', async t => {
  const { sim, kubelet } = await bringUp(t, { scaleStrategy: { operationDelaySeconds: 20 } })
  const before = names(sim)
  const start = sim.seconds()
  sim.edit(fooRef, o => { specOf(o).replicas = 2 })
  await kubelet.run(2)
  const drained = livePods(sim).filter(p => podCondition(p, 'jobhooks.io/service-ready') === 'False')
  t.equal(drained.length, 1, 'one Pod out of traffic')
  const leaving = drained[0]?.metadata.name as string
  t.match(condition(status(sim), 'Scale'), {
    reason: 'ScalingIn', message: /out of traffic, the Pod goes at .* \(scaleStrategy.operationDelaySeconds 20\)/
  })
  await kubelet.run(15)
  t.ok(sim.get(podRef(leaving)), `${leaving} still there at ${sim.seconds() - start}s`)
  await kubelet.run(10)
  t.notOk(sim.get(podRef(leaving)), `${leaving} gone after the delay`)
  const gone = sim.timeline.find(e => e.type === 'deleted' && e.object.name === leaving)?.seconds as number
  t.ok(gone - start >= 20 && gone - start <= 23, `deleted ${gone - start}s after the scale-in: the resync woke it`)
  t.same(names(sim), before.filter(n => n !== leaving))
  await sim.runUntilQuiet()
})

t.test('podToInclude adopts a released Pod back: owned again, counted, nothing deleted', async t => {
  const { sim, kubelet } = await bringUp(t)
  const victim = names(sim)[0] as string
  sim.edit(fooRef, o => { specOf(o).scaleStrategy = { podToExclude: [victim] } })
  await kubelet.run(15)
  t.same(sim.get(podRef(victim))?.metadata.ownerReferences ?? [], [], `${victim} released first`)
  const before = names(sim)
  sim.edit(fooRef, o => {
    specOf(o).replicas = 4
    specOf(o).scaleStrategy = { podToInclude: [victim, 'nobody'] }
  })
  await kubelet.run(15)
  t.match(sim.get(podRef(victim))?.metadata.ownerReferences, [{ kind: 'CollaSet', name: 'foo', controller: true }],
    'Metacontroller adopted it')
  t.ok(sim.timeline.some(e => e.type === 'adopted' && e.object.name === victim), 'an adoption, on the timeline')
  t.same(names(sim), before, 'four Pods, the same ones: none created, none deleted')
  t.match(status(sim), { replicas: 4, readyReplicas: 4 })
  t.match(condition(status(sim), 'Scale'), {
    status: 'True', message: /podToInclude cannot take nobody: no such Pod$/
  })
  await sim.runUntilQuiet()
})
