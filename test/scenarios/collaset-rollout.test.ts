// CollaSet rollout controls on the in-process Metacontroller (as test/scenarios/collaset.test.ts:
// the hook over HTTP, its effects applied, a scripted kubelet): kuperator's partition, paused,
// byLabel and operationDelaySeconds limit which Pods a template change updates, and when; the
// partition is played with in-place updates (the default policy), the others with Replace.
import t from 'tap'
import { REVISION_LABEL, UPDATE_INCLUDED_LABEL } from '../../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL } from '../../src/k8s/labels.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { capacityGuard, livePods, podCondition } from '../helpers/scenarios.js'
import type { PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js'
import { condition } from '../helpers/conditions.js'
import { bringUp, fooRef, fooStatus, podRef, runWatchingCapacity } from '../helpers/collaset.js'
import { specOf } from '../helpers/objects.js'

const status = fooStatus
const revisions = (sim: Simulator): string[] =>
  livePods(sim).map(p => p.metadata.labels?.[REVISION_LABEL] ?? '-').sort()
const names = (sim: Simulator): string[] => livePods(sim).map(p => p.metadata.name).sort()

/** The policy the tests of replacements run under: an image change alone would be made in place. */
const REPLACE = { updateStrategy: { podUpgradePolicy: 'Replace' } }

function changeImage (sim: Simulator, image = 'nginx:1.28'): void {
  sim.edit(fooRef, o => {
    specOf<{ template: PodTemplateSpec }>(o).template.spec!.containers[0]!.image = image
  })
}

t.test('partition 1 of 3, in place: two Pods updated, name and UID kept, one kept old; then partition 0', async t => {
  const { sim, kubelet } = await bringUp(t, { updateStrategy: { rollingUpdate: { byPartition: { partition: 1 } } } })
  const oldRevision = status(sim).updatedRevision as string
  const uids = new Map(livePods(sim).map(p => [p.metadata.name, p.metadata.uid]))
  const oldest = [...livePods(sim)].sort((a, b) =>
    (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
    a.metadata.name.localeCompare(b.metadata.name))[0]?.metadata.name as string
  changeImage(sim)
  // In place, one Pod at a time leaves traffic: never fewer than 2 of 3 Ready, never a 4th Pod.
  const peak = await runWatchingCapacity(t, sim, kubelet, 60, 2)
  t.equal(peak, 3, 'no Pod added: the Pods are updated where they run')
  const newRevision = status(sim).updatedRevision as string
  t.not(newRevision, oldRevision)
  t.same(revisions(sim), [newRevision, newRevision, oldRevision].sort(), 'two updated, one kept')
  t.same(new Map(livePods(sim).map(p => [p.metadata.name, p.metadata.uid])), uids, 'the same Pods, names and UIDs')
  t.equal(sim.get(podRef(oldest))?.metadata.labels?.[REVISION_LABEL], oldRevision,
    `the kept Pod is one of the first (${oldest}), as kuperator keeps them`)
  for (const pod of livePods(sim).filter(p => p.metadata.labels?.[REVISION_LABEL] === newRevision)) {
    t.equal(specOf<PodSpec>(pod).containers[0]?.image, 'nginx:1.28', `${pod.metadata.name} runs the new image`)
    const restarts = (pod.status as { containerStatuses?: Array<{ restartCount?: number }> }).containerStatuses
    t.equal(restarts?.[0]?.restartCount, 1, 'its container restarted once')
  }
  t.match(status(sim), {
    replicas: 3,
    readyReplicas: 3,
    availableReplicas: 3,
    updatedReplicas: 2,
    updatedReadyReplicas: 2,
    updatedAvailableReplicas: 2,
    operatingReplicas: 0,
    currentRevision: oldRevision,
    updatedRevision: newRevision
  })
  t.match(condition(status(sim), 'Update'), {
    status: 'True', reason: 'Partitioned', message: /^partition 1 keeps 1 Pod/
  })
  t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
  const patched = sim.effects.log.filter(e => e.effect.type === 'UpdatePodInPlace' && e.result === 'applied')
  t.equal(new Set(patched.map(e => e.effect.target.name)).size, 2, 'two Pods patched')

  sim.edit(fooRef, o => {
    specOf(o).updateStrategy = { rollingUpdate: { byPartition: { partition: 0 } } }
  })
  await kubelet.run(30, capacityGuard(t, sim, 2))
  t.same(revisions(sim), [newRevision, newRevision, newRevision])
  t.equal(sim.get(podRef(oldest))?.metadata.uid, uids.get(oldest), 'the kept Pod is updated at last, in place')
  t.match(status(sim), { updatedReplicas: 3, currentRevision: newRevision })
  t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'Updated' })
  await sim.runUntilQuiet()
})

t.test('paused stops scale and update; resuming continues both', async t => {
  const { sim, kubelet } = await bringUp(t, REPLACE)
  const before = names(sim)
  const oldRevision = status(sim).updatedRevision as string
  sim.edit(fooRef, o => {
    specOf(o).paused = true
  })
  await kubelet.run(3)
  changeImage(sim)
  sim.edit(fooRef, o => {
    specOf(o).replicas = 4
  })
  await kubelet.run(30)
  t.same(names(sim), before, 'no Pod created or removed while paused')
  t.same(revisions(sim), [oldRevision, oldRevision, oldRevision])
  t.match(condition(status(sim), 'Scale'), { status: 'False', reason: 'Paused' })
  t.match(condition(status(sim), 'Update'), { status: 'False', reason: 'Paused' })
  t.match(status(sim), { replicas: 3, updatedReplicas: 0 })

  sim.edit(fooRef, o => {
    specOf(o).paused = false
  })
  await kubelet.run(60, capacityGuard(t, sim, 3))
  const newRevision = status(sim).updatedRevision as string
  t.not(newRevision, oldRevision)
  t.same(revisions(sim), [newRevision, newRevision, newRevision, newRevision], 'scaled to 4, all updated')
  t.match(status(sim), { replicas: 4, readyReplicas: 4, updatedReplicas: 4, updatedReadyReplicas: 4 })
  t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
  t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'Updated' })
  await sim.runUntilQuiet()
})

t.test('byLabel updates only the Pods labelled jobhooks.io/update-included', async t => {
  const byLabel = { podUpgradePolicy: 'Replace', rollingUpdate: { byLabel: {} } }
  const { sim, kubelet } = await bringUp(t, { updateStrategy: byLabel })
  const oldRevision = status(sim).updatedRevision as string
  const [chosen, ...others] = names(sim) as [string, ...string[]]
  sim.edit(podRef(chosen), p => {
    p.metadata.labels = { ...p.metadata.labels, [UPDATE_INCLUDED_LABEL]: 'true' }
  })
  changeImage(sim)
  await kubelet.run(40, capacityGuard(t, sim, 3))
  const newRevision = status(sim).updatedRevision as string
  t.notOk(sim.get(podRef(chosen)), 'the labelled Pod is replaced')
  for (const other of others) t.equal(sim.get(podRef(other))?.metadata.labels?.[REVISION_LABEL], oldRevision, other)
  const replacement = livePods(sim).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === chosen)
  t.equal(replacement?.metadata.labels?.[REVISION_LABEL], newRevision)
  t.notOk(replacement?.metadata.labels?.[UPDATE_INCLUDED_LABEL], 'the new Pod does not carry the label on')
  t.match(status(sim), { replicas: 3, updatedReplicas: 1, updatedReadyReplicas: 1, currentRevision: oldRevision })
  t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'ByLabel', message: /^2 Pods of an older/ })
  await sim.runUntilQuiet()
})

t.test('operationDelaySeconds spaces the updates: each starts 20 s after the last one became Ready', async t => {
  const delay = { podUpgradePolicy: 'Replace', operationDelaySeconds: 20 }
  const { sim, kubelet } = await bringUp(t, { updateStrategy: delay })
  const before = new Set(names(sim))
  const start = sim.seconds()
  changeImage(sim)
  let sawWaiting = false
  await kubelet.run(120, () => {
    const update = condition(status(sim), 'Update')
    if (update?.reason === 'OperationDelay' && typeof status(sim).nextUpdateTime === 'string') sawWaiting = true
  })
  t.ok(sawWaiting, 'while it waits, Update says OperationDelay and nextUpdateTime when it ends')
  const newRevision = status(sim).updatedRevision as string
  t.same(revisions(sim), [newRevision, newRevision, newRevision])
  const created = sim.timeline
    .filter(e => e.type === 'created' && e.object.kind === 'Pod' && e.seconds >= start && !before.has(e.object.name))
  t.equal(created.length, 3)
  const readyAt = (name: string): number => {
    const pod = sim.get(podRef(name))
    const ready = (pod?.status as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions
      ?.find(c => c.type === 'Ready')
    return Date.parse(ready?.lastTransitionTime as string)
  }
  for (let i = 1; i < created.length; i++) {
    const previous = created[i - 1]?.object.name as string
    const createdAt = sim.now().getTime() - (sim.seconds() - (created[i]?.seconds as number)) * 1000
    const gap = (createdAt - readyAt(previous)) / 1000
    t.ok(gap >= 20, `update ${i + 1} starts ${gap}s after update ${i}'s Pod became Ready`)
    t.ok(gap <= 22, 'and not much later: the hook asked for a resync when the delay ends')
  }
  t.equal(podCondition(sim.get(podRef(created[2]?.object.name as string)), 'Ready'), 'True')
  t.notOk('nextUpdateTime' in status(sim), 'gone once nothing waits')
  await sim.runUntilQuiet()
})
