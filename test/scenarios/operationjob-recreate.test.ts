// OperationJob Recreate on the in-process Metacontroller: the PodOpsLifecycle takes the Pod out of
// traffic (lock label, readiness gate False, not Ready), waits operationDelaySeconds, evicts it
// through the simulated eviction API — where a PodDisruptionBudget may refuse, which means wait —
// and succeeds once the workload (a CollaSet here) has the Pod back and Ready. Failure and the
// deadline give the Pod back; one lifecycle holds a Pod at a time.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { OPS_LIFECYCLE_LABEL, SERVICE_READY } from '../../src/k8s/labels.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION, controllerFromManifest } from '../../src/simulator/controllers.js'
import { collasetController, PodKubelet } from '../../src/simulator/collaset.js'
import { livePods, podCondition } from '../helpers/scenarios.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { specOf } from '../helpers/objects.js'

const COLLASET = fileURLToPath(new URL('../../manifests/examples/collaset.yaml', import.meta.url))
const FOO: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'CollaSet', namespace: 'default', name: 'foo' }
const jobRef = (name = 'recreate'): ObjectRef => ({
  apiVersion: JOBHOOKS_API_VERSION,
  kind: 'OperationJob',
  namespace: 'default',
  name
})
const podRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name })

interface Tap {
  teardown: (fn: () => unknown) => void
}

async function setup (t: Tap): Promise<{ sim: Simulator; kubelet: PodKubelet; origins: string[] }> {
  const sim = new Simulator({ controllers: [collasetController(), controllerFromManifest('operationjobs')] })
  t.teardown(async () => await sim.close())
  const kubelet = new PodKubelet(sim, { startAfterSeconds: 3 })
  sim.apply(loadManifest(COLLASET).find(o => o.kind === 'CollaSet') as KubeObject)
  await kubelet.run(10)
  return {
    sim,
    kubelet,
    origins: live(sim)
      .map(p => p.metadata.name)
      .sort()
  }
}

function recreateJob (targets: string[], spec: Record<string, unknown> = {}, name = 'recreate'): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'OperationJob',
    metadata: { name },
    spec: { action: 'Recreate', operationDelaySeconds: 5, targets: targets.map(name => ({ name })), ...spec }
  }
}

function pdb (minAvailable: number): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'foo' },
    spec: { minAvailable, selector: { matchLabels: { app: 'foo' } } }
  }
}

const live = (sim: Simulator): KubeObject[] => livePods(sim)
const status = (sim: Simulator, name = 'recreate'): Record<string, any> => {
  const object = sim.get(jobRef(name))
  return isRecord(object?.status) ? object.status : {}
}
const conditionMessage = (sim: Simulator, type: string, name?: string): string =>
  (status(sim, name).conditions ?? []).find((c: any) => c.type === type)?.message ?? ''

/** When (simulated seconds) the effects log first shows an effect `type` on Pod `pod` matching `match`. */
function firstEffect (
  sim: Simulator,
  type: string,
  pod: string,
  match: (e: any) => boolean = () => true
): { seconds: number; result: string; message?: string } | undefined {
  return sim.effects.log.find(e => e.effect.type === type && e.effect.target.name === pod && match(e.effect))
}

t.test(
  'Recreate takes the Pod out of traffic first, waits operationDelaySeconds, waits on a PodDisruptionBudget ' +
    'refusal, then evicts; the CollaSet brings it back Ready and the job succeeds',
  async t => {
    const { sim, kubelet, origins } = await setup(t)
    const [target, other] = origins as [string, string]
    sim.apply(pdb(2))
    sim.apply(recreateJob([target], { activeDeadlineSeconds: 600 }))
    await kubelet.runUntil(() => firstEffect(sim, 'Evict', target) !== undefined, 60)

    // Out of traffic before anything else: the lock, then service-ready False, then not Ready.
    const lock = firstEffect(sim, 'SetPodLabels', target, e => e.labels[OPS_LIFECYCLE_LABEL] === 'recreate')
    const off = firstEffect(
      sim,
      'SetPodCondition',
      target,
      e => e.condition.type === SERVICE_READY && e.condition.status === 'False'
    )
    const evict = firstEffect(sim, 'Evict', target)
    t.ok(lock !== undefined && off !== undefined && evict !== undefined)
    t.ok((lock?.seconds ?? Infinity) <= (off?.seconds ?? -1), 'locked before the gate goes False')
    t.ok(
      (evict?.seconds ?? -1) - (off?.seconds ?? Infinity) >= 5,
      `evicted ${(evict?.seconds ?? 0) - (off?.seconds ?? 0)}s after traffic went off (operationDelaySeconds 5)`
    )
    const pod = sim.get(podRef(target))
    t.equal(podCondition(pod, 'Ready'), 'False', 'the Pod is not Ready while it waits')
    t.equal(pod?.metadata.labels?.[OPS_LIFECYCLE_LABEL], 'recreate', 'and carries the lock')

    // The budget refuses: wait, not fail.
    t.equal(evict?.result, 'failed')
    t.match(evict?.message, /disruption budget/)
    await kubelet.run(20)
    t.equal(status(sim).progress, 'Processing', 'a refusal is waited out, not a failure')
    t.ok(sim.get(podRef(target)) !== undefined, 'the Pod is still there')
    t.match(
      conditionMessage(sim, 'EffectsApplied'),
      /evict Pod default\/.*disruption budget/,
      'the refusal shows in EffectsApplied'
    )
    t.equal(podCondition(sim.get(podRef(other)), 'Ready'), 'True', 'the other Pod serves throughout')

    // More capacity lets the eviction through.
    sim.edit(FOO, o => {
      specOf(o).replicas = 3
    })
    const originalUid = sim.get(podRef(target))?.metadata.uid
    await kubelet.runUntil(() => status(sim).progress === 'Succeeded', 120)
    const evicted = sim.effects.log.find(e => e.effect.type === 'Evict' && e.result === 'applied')
    t.ok(evicted !== undefined && evicted.seconds > 35, 'evicted once the scale-up Pod is Ready')
    t.notOk(
      live(sim).some(p => p.metadata.uid === originalUid),
      'the target Pod was evicted'
    )
    t.equal(live(sim).length, 3)
    t.ok(
      live(sim).every(p => podCondition(p, 'Ready') === 'True'),
      'every Pod Ready again: the job waited for the Pod to come back, not for the scale-up Pod'
    )
    const detail = status(sim).targetDetails[0]
    // The CollaSet hands the freed name out again: the Pod is back under its own name.
    t.match(detail, {
      name: target,
      progress: 'Succeeded',
      extraInfo: { Controller: 'CollaSet/foo', Lifecycle: 'Completing', NewPod: target }
    })
    t.not(sim.get(podRef(target))?.metadata.uid, originalUid, 'another Pod of the same name')
    t.notOk(
      live(sim).some(p => p.metadata.labels?.[OPS_LIFECYCLE_LABEL] !== undefined),
      'no lock left anywhere'
    )
    await sim.runUntilQuiet()
  }
)

t.test(
  'the deadline fails a target stuck behind a PodDisruptionBudget and gives the Pod back: condition True, no lock, ' +
    'Ready',
  async t => {
    const { sim, kubelet, origins } = await setup(t)
    const [target] = origins as [string]
    sim.apply(pdb(2))
    sim.apply(recreateJob([target], { activeDeadlineSeconds: 20, operationDelaySeconds: 0 }))
    await kubelet.runUntil(() => status(sim).progress === 'Failed', 60)
    t.match(status(sim).targetDetails[0], { progress: 'Failed', error: { reason: 'DeadlineExceeded' } })
    await kubelet.runUntil(() => status(sim).targetDetails[0].extraInfo?.Released === 'true', 20)
    const pod = sim.get(podRef(target))
    t.equal(pod?.metadata.labels?.[OPS_LIFECYCLE_LABEL], undefined, 'the lock is gone')
    t.equal(podCondition(pod, SERVICE_READY), 'True', 'service-ready is back')
    t.equal(podCondition(pod, 'Ready'), 'True', 'and the Pod serves again')
  }
)

t.test('one lifecycle per Pod: a second job waits for the first to give the Pod back', async t => {
  const { sim, kubelet, origins } = await setup(t)
  const [target] = origins as [string]
  sim.apply(pdb(2))
  sim.apply(recreateJob([target], { activeDeadlineSeconds: 30, operationDelaySeconds: 0 }, 'first'))
  await kubelet.runUntil(() => sim.get(podRef(target))?.metadata.labels?.[OPS_LIFECYCLE_LABEL] === 'first', 20)
  sim.apply(recreateJob([target], { activeDeadlineSeconds: 600, operationDelaySeconds: 0 }, 'second'))
  await kubelet.run(5)
  t.match(status(sim, 'second').targetDetails[0], {
    progress: 'Processing',
    extraInfo: { Lifecycle: 'Preparing', LifecycleHolder: 'first' }
  })
  t.equal(sim.get(podRef(target))?.metadata.labels?.[OPS_LIFECYCLE_LABEL], 'first', 'the lock is not taken over')
  // The first runs into its deadline and gives the Pod back; the second takes it, and with the
  // budget lifted it goes through.
  await kubelet.runUntil(() => status(sim, 'first').progress === 'Failed', 60)
  sim.delete({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespace: 'default', name: 'foo' })
  const originalUid = sim.get(podRef(target))?.metadata.uid
  await kubelet.runUntil(() => status(sim, 'second').progress === 'Succeeded', 120)
  t.notOk(
    live(sim).some(p => p.metadata.uid === originalUid),
    'evicted'
  )
  t.equal(live(sim).filter(p => podCondition(p, 'Ready') === 'True').length, 2)
})

t.test('deleting the job while the Pod is out of traffic gives it back before the job goes', async t => {
  const { sim, kubelet, origins } = await setup(t)
  const [target] = origins as [string]
  sim.apply(recreateJob([target], { operationDelaySeconds: 600 }))
  await kubelet.runUntil(() => podCondition(sim.get(podRef(target)), 'Ready') === 'False', 20)
  sim.delete(jobRef())
  await kubelet.runUntil(() => sim.get(jobRef()) === undefined, 30)
  const pod = sim.get(podRef(target))
  t.equal(pod?.metadata.labels?.[OPS_LIFECYCLE_LABEL], undefined)
  t.equal(podCondition(pod, 'Ready'), 'True', 'back in traffic')
  t.notOk(
    sim.effects.log.some(e => e.effect.type === 'Evict'),
    'never evicted'
  )
})

t.test('a Pod without a controller fails with NoController and is never evicted', async t => {
  const { sim, kubelet } = await setup(t)
  sim.apply({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'bare', labels: { app: 'bare' } },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }
  })
  sim.apply(recreateJob(['bare'], { operationDelaySeconds: 0 }))
  await kubelet.runUntil(() => status(sim).progress === 'Failed', 30)
  t.match(status(sim).targetDetails[0], { progress: 'Failed', error: { reason: 'NoController' } })
  t.ok(sim.get(podRef('bare')) !== undefined)
  t.notOk(sim.effects.log.some(e => e.effect.type === 'Evict'))
  t.equal(sim.get(podRef('bare'))?.metadata.labels?.[OPS_LIFECYCLE_LABEL], undefined, 'the lock was given back')
})
