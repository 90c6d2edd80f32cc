// CollaSet's podUpgradePolicy on the in-process Metacontroller (as collaset-rollout.test.ts: the
// hook over HTTP, its effects applied, a kubelet that restarts a container whose image changed):
// an image change is made in place, anything else falls back to a replacement; InPlaceOnly holds
// instead; Recreate lets the old Pod go before the new one comes.
import t from 'tap'
import type { PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js'
import { REVISION_LABEL } from '../../src/controllers/collaset/pods.js'
import { IN_PLACE_REASON } from '../../src/controllers/collaset/inplace.js'
import { SERVICE_READY } from '../../src/k8s/labels.js'
import type { Simulator } from '../../src/simulator/simulator.js'
import { capacityGuard, livePods, podCondition } from '../helpers/scenarios.js'
import { condition } from '../helpers/conditions.js'
import { bringUp, fooRef, fooStatus as status, runWatchingCapacity } from '../helpers/collaset.js'
import { specOf } from '../helpers/objects.js'

const identities = (sim: Simulator): string[] => livePods(sim).map(p => `${p.metadata.name}/${p.metadata.uid}`).sort()
const revisions = (sim: Simulator): string[] =>
  livePods(sim).map(p => p.metadata.labels?.[REVISION_LABEL] ?? '-').sort()

function editTemplate (sim: Simulator, change: (spec: PodSpec) => void, policy?: string): void {
  sim.edit(fooRef, o => {
    change(specOf<{ template: PodTemplateSpec }>(o).template.spec!)
    if (policy !== undefined) specOf(o).updateStrategy = { podUpgradePolicy: policy }
  })
}

const newImage = (spec: PodSpec): void => { spec.containers[0]!.image = 'nginx:1.28' }
const newEnv = (spec: PodSpec): void => { spec.containers[0]!.env = [{ name: 'MODE', value: 'fast' }] }

t.test('an image change is made in place: out of traffic, patched, restarted, back; one Pod at a time', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = identities(sim)
  editTemplate(sim, newImage)
  let outOfTraffic = 0
  const guard = capacityGuard(t, sim, 2)
  await kubelet.run(60, () => {
    guard()
    const held = livePods(sim).filter(p => podCondition(p, SERVICE_READY) === 'False')
    outOfTraffic = Math.max(outOfTraffic, held.length)
  })
  t.same(identities(sim), before, 'the same Pods: names and UIDs')
  const updated = status(sim).updatedRevision as string
  t.same(revisions(sim), [updated, updated, updated])
  t.equal(outOfTraffic, 1, 'one Pod out of traffic at a time')
  t.match(status(sim), { readyReplicas: 3, updatedReadyReplicas: 3, operatingReplicas: 0, currentRevision: updated })
  t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'Updated' })
  // Each Pod: the gate False first (reason InPlaceUpdate), then the patch, then the gate True.
  for (const pod of livePods(sim)) {
    const steps = sim.effects.log
      .filter(e => e.effect.target.name === pod.metadata.name && e.result === 'applied')
      .map(e => e.effect.type === 'SetPodCondition'
        ? `${e.effect.condition.status}:${e.effect.condition.reason ?? ''}`
        : e.effect.type)
    t.same(steps.slice(-3), [`False:${IN_PLACE_REASON}`, 'UpdatePodInPlace', 'True:ContainersReady'], pod.metadata.name)
  }
  await sim.runUntilQuiet()
})

t.test('a change beyond images falls back to a replacement under InPlaceIfPossible', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = new Set(livePods(sim).map(p => p.metadata.name))
  editTemplate(sim, newEnv)
  await kubelet.run(60, capacityGuard(t, sim, 3))
  const names = livePods(sim).map(p => p.metadata.name)
  t.equal(names.length, 3)
  t.ok(names.every(n => !before.has(n)), 'every Pod replaced by a new one')
  t.equal(sim.effects.log.filter(e => e.effect.type === 'UpdatePodInPlace').length, 0, 'no in-place patch')
  await sim.runUntilQuiet()
})

t.test('InPlaceOnly holds a change beyond images and says why; an image change then goes in place', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = identities(sim)
  editTemplate(sim, newEnv, 'InPlaceOnly')
  await kubelet.run(20)
  t.same(identities(sim), before, 'no Pod touched')
  t.match(condition(status(sim), 'Update'), {
    status: 'False',
    reason: 'InPlaceImpossible',
    message: /podUpgradePolicy InPlaceOnly: Pod foo-\w+ cannot take revision/
  })
  editTemplate(sim, spec => { delete spec.containers[0]!.env; newImage(spec) })
  await kubelet.run(60, capacityGuard(t, sim, 2))
  t.same(identities(sim), before, 'the image change is made in place')
  t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'Updated' })
  await sim.runUntilQuiet()
})

t.test('Recreate lets each old Pod go before its successor comes: never a 4th Pod', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = new Set(livePods(sim).map(p => p.metadata.uid))
  editTemplate(sim, newImage, 'Recreate')
  const peak = await runWatchingCapacity(t, sim, kubelet, 90, 2)
  t.equal(peak, 3, 'never more Pods than replicas')
  // The names come back (a free slot's name is reused), the Pods are new.
  t.ok(livePods(sim).every(p => !before.has(p.metadata.uid)), 'every Pod made anew')
  const order = sim.timeline.filter(e => e.object.kind === 'Pod' && (e.type === 'created' || e.type === 'deleted'))
    .slice(3).map(e => e.type)
  t.same(order, ['deleted', 'created', 'deleted', 'created', 'deleted', 'created'], 'each old Pod goes first')
  const updated = status(sim).updatedRevision as string
  t.same(revisions(sim), [updated, updated, updated])
  t.match(status(sim), { readyReplicas: 3, updatedReadyReplicas: 3 })
  await sim.runUntilQuiet()
})

t.test('a template changed again during an in-place update: the Pod goes on to the newest image', async t => {
  const { sim, kubelet } = await bringUp(t)
  const before = identities(sim)
  editTemplate(sim, newImage)
  await kubelet.run(2)
  editTemplate(sim, spec => { spec.containers[0]!.image = 'nginx:1.29' })
  await kubelet.run(80, capacityGuard(t, sim, 2))
  t.same(identities(sim), before)
  for (const pod of livePods(sim)) t.equal(specOf<PodSpec>(pod).containers[0]?.image, 'nginx:1.29', pod.metadata.name)
  t.match(status(sim), { readyReplicas: 3, availableReplicas: 3, updatedReadyReplicas: 3 })
  t.equal(livePods(sim).filter(p => podCondition(p, SERVICE_READY) !== 'True').length, 0, 'every Pod back in traffic')
  await sim.runUntilQuiet()
})

t.test('paused during an in-place update: a Pod held but not patched gets its gate back', async t => {
  const { sim, kubelet } = await bringUp(t)
  editTemplate(sim, newImage)
  await kubelet.run(1)
  sim.edit(fooRef, o => { specOf(o).paused = true })
  await kubelet.run(30)
  t.equal(livePods(sim).filter(p => podCondition(p, 'Ready') === 'True').length, 3, 'all Ready while paused')
  t.match(condition(status(sim), 'Update'), { reason: 'Paused' })
  await sim.runUntilQuiet()
})

const cpu = (amount: string) => (spec: PodSpec): void => {
  spec.containers[0]!.resources = { requests: { cpu: amount, memory: '64Mi' } }
}

t.test('a resources-only change resizes each Pod in place where the kubelet resizes: no restart', async t => {
  const { sim, kubelet } = await bringUp(t, {})
  editTemplate(sim, cpu('100m'), 'Replace')
  await kubelet.run(60)
  editTemplate(sim, cpu('0.25'), 'InPlaceIfPossible')
  const before = identities(sim)
  await kubelet.run(60, capacityGuard(t, sim, 2))
  t.same(identities(sim), before, 'the same Pods')
  const updated = status(sim).updatedRevision as string
  t.same(revisions(sim), [updated, updated, updated])
  for (const pod of livePods(sim)) {
    const [container] = (pod.status as { containerStatuses: Array<Record<string, any>> }).containerStatuses
    const resized = { resources: { requests: { cpu: '0.25' } }, restartCount: 0 }
    t.match(container, resized, `${pod.metadata.name}: resized, not restarted`)
  }
  const resized = sim.effects.log.filter(e => e.effect.type === 'ResizePod' && e.result === 'applied')
  t.equal(resized.length, 3, 'one resize each')
  t.match(status(sim), { readyReplicas: 3, updatedReadyReplicas: 3 })
  await sim.runUntilQuiet()
})

t.test('a resize is not made in place on a kubelet that does not resize, nor across QoS classes', async t => {
  for (const [what, change, kubeletOptions] of [
    ['no resources reported', cpu('250m'), { resizes: false }],
    ['BestEffort to Guaranteed', (spec: PodSpec) => {
      spec.containers[0]!.resources = { limits: { cpu: '1', memory: '1Gi' } }
    }, {}]
  ] as const) {
    const { sim, kubelet } = await bringUp(t, {}, kubeletOptions)
    if (what === 'no resources reported') {
      editTemplate(sim, cpu('100m'), 'Replace')
      await kubelet.run(60)
      editTemplate(sim, change, 'InPlaceIfPossible')
    } else {
      editTemplate(sim, change)
    }
    const before = new Set(livePods(sim).map(p => p.metadata.uid))
    await kubelet.run(60, capacityGuard(t, sim, 3))
    t.ok(livePods(sim).every(p => !before.has(p.metadata.uid)), `${what}: every Pod replaced`)
    t.equal(sim.effects.log.filter(e => e.effect.type === 'ResizePod').length, 0, `${what}: no resize asked`)
    await sim.runUntilQuiet()
  }
})
