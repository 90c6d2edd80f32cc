// CollaSet scenarios on the in-process Metacontroller: the hook runs through the real HTTP app
// (or in-process), its SetPodCondition effects are applied to the simulated API server, and a
// scripted kubelet brings Pods up (Pending → Running, containers ready) and computes Ready from
// the readiness gate. Capacity is checked every simulated second.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { REVISION_LABEL } from '../../src/controllers/collaset/pods.js'
import { REPLACE_ORIGIN_LABEL, SERVICE_READY, TO_REPLACE_LABEL } from '../../src/k8s/labels.js'
import { Simulator, type HookVersion, type Transport } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { collasetController, PodKubelet } from '../../src/simulator/collaset.js'
import { capacityGuard, podCondition } from '../helpers/scenarios.js'
import { runWatchingCapacity } from '../helpers/collaset.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import type { PodSpec, PodTemplateSpec } from 'kubernetes-types/core/v1.js'
import { condition } from '../helpers/conditions.js'
import { specOf } from '../helpers/objects.js'

const EXAMPLE = fileURLToPath(new URL('../../manifests/examples/collaset.yaml', import.meta.url))
const fooRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'CollaSet', namespace: 'default', name: 'foo' }
const podRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name })

interface Tap {
  teardown: (fn: () => unknown) => void
}

function setup (
  t: Tap,
  version: HookVersion = 'v2',
  transport: Transport = 'http'
): { sim: Simulator; kubelet: PodKubelet } {
  const sim = new Simulator({ controllers: [collasetController(version)], transport })
  t.teardown(async () => await sim.close())
  return { sim, kubelet: new PodKubelet(sim, { startAfterSeconds: 3 }) }
}

function foo (mutate: (spec: any) => void = () => {}): KubeObject {
  const object = loadManifest(EXAMPLE).find(o => o.kind === 'CollaSet') as KubeObject
  mutate(object.spec)
  return object
}

const pods = (sim: Simulator): KubeObject[] => sim.list({ apiVersion: 'v1', kind: 'Pod' }, 'default')
const names = (sim: Simulator): string[] =>
  pods(sim)
    .map(p => p.metadata.name)
    .sort()
const ready = (sim: Simulator): KubeObject[] => pods(sim).filter(p => podCondition(p, 'Ready') === 'True')
const status = (sim: Simulator): Record<string, any> => {
  const object = sim.get(fooRef)
  return isRecord(object?.status) ? object.status : {}
}

async function bringUp (sim: Simulator, kubelet: PodKubelet, seconds = 10): Promise<void> {
  sim.apply(foo())
  await kubelet.run(seconds)
}

for (const [version, transport] of [
  ['v2', 'http'],
  ['v1', 'http'],
  ['v2', 'direct']
] as Array<[HookVersion, Transport]>) {
  t.test(
    `foo (${version}, ${transport}): two Pods with deterministic names get service-ready and become Ready; ` +
      'the status reads like the reference',
    async t => {
      const { sim, kubelet } = setup(t, version, transport)
      await bringUp(sim, kubelet)
      const list = pods(sim)
      t.equal(list.length, 2)
      for (const pod of list) {
        t.match(pod.metadata.name, /^foo-[a-z0-9]{5}$/, `${pod.metadata.name}: foo-<5 letters or digits>`)
        t.equal(podCondition(pod, SERVICE_READY), 'True', `${pod.metadata.name}: service-ready True`)
        t.equal(podCondition(pod, 'Ready'), 'True', `${pod.metadata.name}: Ready`)
        t.same(specOf<PodSpec>(pod).readinessGates, [{ conditionType: SERVICE_READY }])
        t.equal(pod.metadata.labels?.[REVISION_LABEL], status(sim).updatedRevision)
      }
      t.match(status(sim), {
        observedGeneration: 1,
        replicas: 2,
        scheduledReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        operatingReplicas: 0,
        updatedReplicas: 2,
        updatedReadyReplicas: 2,
        updatedAvailableReplicas: 2,
        currentRevision: /^foo-[0-9a-f]{10}$/,
        selector: 'app=foo'
      })
      t.equal(status(sim).currentRevision, status(sim).updatedRevision)
      t.match(condition(status(sim), 'Scale'), { status: 'True', reason: 'Scaled' })
      t.match(condition(status(sim), 'Update'), { status: 'True', reason: 'Updated' })
      t.equal(
        sim.effects.log.filter(e => e.effect.type === 'SetPodCondition').length,
        2,
        'one condition write per Pod, never repeated'
      )
      t.same(
        sim.effects.log.filter(e => e.result !== 'applied'),
        []
      )
      await sim.runUntilQuiet()
      t.ok(sim.isQuiet(), 'the system goes quiet')

      // The same names on a second run: a function of observed state, never random.
      const again = setup(t, version, transport)
      await bringUp(again.sim, again.kubelet)
      t.same(names(again.sim), names(sim), 'the same names again')
    }
  )
}

t.test('scale to 3 and back to 2: the newest Pod goes', async t => {
  const { sim, kubelet } = setup(t)
  await bringUp(sim, kubelet)
  const before = names(sim)
  sim.edit(fooRef, o => {
    specOf(o).replicas = 3
  })
  await kubelet.run(10)
  t.equal(ready(sim).length, 3)
  const added = names(sim).filter(n => !before.includes(n))
  t.equal(added.length, 1)
  t.match(status(sim), { replicas: 3, readyReplicas: 3, availableReplicas: 3 })
  sim.edit(fooRef, o => {
    specOf(o).replicas = 2
  })
  await kubelet.run(5)
  t.same(names(sim), before, 'the Pod added last is removed')
  t.match(status(sim), { replicas: 2, readyReplicas: 2 })
})

t.test(
  'to-replace: a replacement comes up first, the origin goes once it is Ready; capacity never below 2',
  async t => {
    const { sim, kubelet } = setup(t)
    await bringUp(sim, kubelet)
    const [origin, other] = names(sim) as [string, string]
    sim.edit(podRef(origin), p => {
      p.metadata.labels = { ...p.metadata.labels, [TO_REPLACE_LABEL]: 'true' }
    })
    const guard = capacityGuard(t, sim, 2)
    await kubelet.run(1, guard)
    const replacement = pods(sim).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === origin)
    t.ok(replacement, 'a replacement Pod labelled replace-origin=<origin>')
    t.match(replacement?.metadata.name, /^foo-[a-z0-9]{5}$/)
    t.equal(replacement?.metadata.labels?.[REVISION_LABEL], status(sim).updatedRevision, 'of the current template')
    t.ok(sim.get(podRef(origin)), 'the origin stays while the replacement is not Ready')
    t.equal(status(sim).replicas, 3, 'CURRENT counts the replacement')
    t.equal(status(sim).operatingReplicas, 1, 'the origin is operating while it is replaced')
    await kubelet.run(10, guard)
    t.equal(sim.get(podRef(origin)), undefined, 'the origin is gone')
    t.same(names(sim), [other, replacement?.metadata.name as string].sort())
    t.equal(ready(sim).length, 2)
    const originGone = sim.timeline.find(e => e.type === 'deleted' && e.object.name === origin)?.seconds as number
    const newReady = sim.effects.log.find(
      e => e.effect.type === 'SetPodCondition' && e.effect.target.name === replacement?.metadata.name
    )?.seconds as number
    t.ok(originGone >= newReady, `the origin went (t=${originGone}s) after the replacement was Ready (t=${newReady}s)`)
    await sim.runUntilQuiet()
  }
)

t.test(
  'removing the label before the replacement is Ready cancels: the replacement goes, the origin stays',
  async t => {
    const { sim, kubelet } = setup(t)
    await bringUp(sim, kubelet)
    const before = names(sim)
    const origin = before[0] as string
    sim.edit(podRef(origin), p => {
      p.metadata.labels = { ...p.metadata.labels, [TO_REPLACE_LABEL]: 'true' }
    })
    await kubelet.run(1)
    t.equal(pods(sim).length, 3, 'the replacement exists')
    sim.edit(podRef(origin), p => {
      const labels = { ...p.metadata.labels }
      delete labels[TO_REPLACE_LABEL]
      p.metadata.labels = labels
    })
    await kubelet.run(10, capacityGuard(t, sim, 2))
    t.same(names(sim), before, 'back to the two Pods it had')
    t.match(status(sim), { replicas: 2, readyReplicas: 2 })
  }
)

t.test(
  'deleting the origin by hand before the replacement is Ready loses no capacity: the replacement stays a member',
  async t => {
    const { sim, kubelet } = setup(t)
    await bringUp(sim, kubelet)
    const origin = names(sim)[0] as string
    sim.edit(podRef(origin), p => {
      p.metadata.labels = { ...p.metadata.labels, [TO_REPLACE_LABEL]: 'true' }
    })
    await kubelet.run(1)
    const replacement = pods(sim).find(p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] === origin)?.metadata
      .name as string
    sim.delete(podRef(origin))
    await kubelet.run(10)
    t.ok(sim.get(podRef(replacement)), 'the replacement stays')
    t.equal(pods(sim).length, 2, 'no extra Pod: the replacement fills the slot')
    t.equal(ready(sim).length, 2)
  }
)

t.test('podUpgradePolicy Replace rolls out one Pod at a time, new Pod first, never below 2 Ready', async t => {
  const { sim, kubelet } = setup(t)
  await bringUp(sim, kubelet)
  const oldRevision = status(sim).updatedRevision as string
  const oldPods = names(sim)
  const start = sim.seconds()
  sim.edit(fooRef, o => {
    specOf<{ template: PodTemplateSpec }>(o).template.spec!.containers[0]!.image = 'nginx:1.28'
    specOf(o).updateStrategy = { podUpgradePolicy: 'Replace' }
  })
  const peak = await runWatchingCapacity(t, sim, kubelet, 30, 2)
  t.equal(peak, 3, 'one surge Pod at a time')
  const newRevision = status(sim).updatedRevision as string
  t.not(newRevision, oldRevision)
  t.equal(pods(sim).length, 2)
  for (const pod of pods(sim)) {
    t.equal(pod.metadata.labels?.[REVISION_LABEL], newRevision)
    t.equal(specOf<PodSpec>(pod).containers[0]?.image, 'nginx:1.28')
    t.notOk(oldPods.includes(pod.metadata.name))
  }
  t.match(status(sim), {
    replicas: 2,
    readyReplicas: 2,
    updatedReplicas: 2,
    updatedReadyReplicas: 2,
    currentRevision: newRevision,
    updatedRevision: newRevision
  })
  // Order: create new 1, delete old 1, create new 2, delete old 2.
  const events = sim.timeline
    .filter(e => e.object.kind === 'Pod' && (e.type === 'created' || e.type === 'deleted') && e.seconds >= start)
    .map(e => `${e.type} ${oldPods.includes(e.object.name) ? 'old' : 'new'}`)
  t.same(events, ['created new', 'deleted old', 'created new', 'deleted old'])
  await sim.runUntilQuiet()
})

t.test('an invalid spec keeps every Pod and says why', async t => {
  const { sim, kubelet } = setup(t)
  await bringUp(sim, kubelet)
  const before = names(sim)
  sim.edit(fooRef, o => {
    specOf(o).replicas = -1
  })
  await kubelet.run(3)
  t.same(names(sim), before)
  const valid = condition(status(sim), 'Valid')
  t.match(valid, { status: 'False', reason: 'InvalidSpec', message: /spec.replicas/ })
})
