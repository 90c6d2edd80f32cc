// OperationJob Replace on the in-process Metacontroller, with the CollaSet that owns the Pods:
// the reference's walkthrough and the cases kuperator's own tests check (manual deletion of the
// origin, a missing Pod, two jobs on one Pod, deadline with partition, TTL, deletion of the job
// mid-replace). The hooks run through the real HTTP app; SetPodLabels and SetPodCondition effects
// are applied to the simulated API server; a scripted kubelet brings Pods up.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { REPLACE_ORIGIN_LABEL, TO_REPLACE_LABEL } from '../../src/k8s/labels.js'
import { Simulator, type HookVersion } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION, controllerFromManifest } from '../../src/simulator/controllers.js'
import { collasetController, PodKubelet, type PodKubeletBehaviour } from '../../src/simulator/collaset.js'
import { capacityGuard, livePods, podCondition } from '../helpers/scenarios.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { specOf } from '../helpers/objects.js'

const COLLASET = fileURLToPath(new URL('../../manifests/examples/collaset.yaml', import.meta.url))
const WALKTHROUGH = fileURLToPath(new URL('../../manifests/examples/operationjob-replace.yaml', import.meta.url))
const jobRef = (name = 'opj-replace'): ObjectRef => ({
  apiVersion: JOBHOOKS_API_VERSION,
  kind: 'OperationJob',
  namespace: 'default',
  name
})
const fooRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'CollaSet', namespace: 'default', name: 'foo' }
const podRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name })

interface Tap {
  teardown: (fn: () => unknown) => void
}

async function setup (
  t: Tap,
  options: { version?: HookVersion; kubelet?: PodKubeletBehaviour; collaset?: Record<string, unknown> } = {}
): Promise<{ sim: Simulator; kubelet: PodKubelet; origins: string[] }> {
  const version = options.version ?? 'v2'
  const sim = new Simulator({
    controllers: [collasetController(version), controllerFromManifest('operationjobs', version)]
  })
  t.teardown(async () => await sim.close())
  const kubelet = new PodKubelet(sim, { startAfterSeconds: 3, ...options.kubelet })
  const collaset = loadManifest(COLLASET).find(o => o.kind === 'CollaSet') as KubeObject
  Object.assign(specOf(collaset), options.collaset)
  sim.apply(collaset)
  await kubelet.run(10)
  return {
    sim,
    kubelet,
    origins: pods(sim)
      .map(p => p.metadata.name)
      .sort()
  }
}

/** The walkthrough's opj-replace, with the real Pod names for its placeholders and `mutate` applied to its spec. */
function replaceJob (
  targets: string[],
  mutate: (spec: Record<string, unknown>) => void = () => {},
  name = 'opj-replace'
): KubeObject {
  const object = loadManifest(WALKTHROUGH).find(o => o.kind === 'OperationJob') as KubeObject
  const spec = specOf(object)
  spec.targets = targets.map(name => ({ name }))
  object.metadata.name = name
  mutate(spec)
  return object
}

const pods = (sim: Simulator): KubeObject[] => livePods(sim)
const names = (sim: Simulator): string[] =>
  pods(sim)
    .map(p => p.metadata.name)
    .sort()
const status = (sim: Simulator, name = 'opj-replace'): Record<string, any> => {
  const object = sim.get(jobRef(name))
  return isRecord(object?.status) ? object.status : {}
}
const progressOf = (sim: Simulator, name?: string): string[] =>
  (status(sim, name).targetDetails ?? []).map((d: any) => `${d.name as string}=${d.progress as string}`)

for (const version of ['v2', 'v1'] as HookVersion[]) {
  t.test(
    `the walkthrough (${version}): partition 1 replaces the first target, partition 2 the other; Succeeded; ` +
      'never fewer than 2 Pods Ready',
    async t => {
      const { sim, kubelet, origins } = await setup(t, { version })
      const [first, second] = origins as [string, string]
      const guard = capacityGuard(t, sim, 2)
      sim.apply(
        replaceJob([first, second], spec => {
          spec.partition = 1
        })
      )
      await kubelet.runUntil(() => status(sim).succeededPodCount === 1, 120, guard)
      const afterOne = status(sim)
      t.match(afterOne, { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1, failedPodCount: 0 })
      t.same(progressOf(sim), [`${first}=Succeeded`, `${second}=Pending`], 'as the walkthrough shows')
      const newPod = afterOne.targetDetails[0].extraInfo.NewPod as string
      t.match(newPod, /^foo-[a-z0-9]{5}$/, 'extraInfo.NewPod names the replacement')
      t.notOk(names(sim).includes(first), 'the origin is gone')
      t.ok(names(sim).includes(newPod), 'the replacement runs')
      t.equal(podCondition(sim.get(podRef(newPod)), 'Ready'), 'True')
      t.equal(sim.get(podRef(newPod))?.metadata.labels?.[REPLACE_ORIGIN_LABEL], first)
      t.equal(afterOne.targetDetails[1].extraInfo, undefined, 'the pending target is untouched')
      t.notOk(sim.get(podRef(second))?.metadata.labels?.[TO_REPLACE_LABEL], 'and its Pod is not labelled')

      sim.edit(jobRef(), o => {
        specOf(o).partition = 2
      })
      await kubelet.runUntil(() => status(sim).progress === 'Succeeded', 120, guard)
      const done = status(sim)
      t.match(done, { progress: 'Succeeded', totalPodCount: 2, succeededPodCount: 2, failedPodCount: 0, endTime: /Z$/ })
      t.equal(done.targetDetails[0].extraInfo.NewPod, newPod, 'the first record is kept')
      const secondNew = done.targetDetails[1].extraInfo.NewPod as string
      t.same(names(sim), [newPod, secondNew].sort(), 'two Pods, both replacements')
      await sim.runUntilQuiet()
    }
  )
}

t.test(
  'deleting the origin by hand before the replacement is Ready is not success: the job waits for the replacement',
  async t => {
    let hold = true // Replacements stay not Ready until released.
    const { sim, kubelet, origins } = await setup(t, {
      kubelet: { neverStarts: p => hold && p.metadata.labels?.[REPLACE_ORIGIN_LABEL] !== undefined }
    })
    const [target] = origins as [string]
    sim.apply(replaceJob([target]))
    await kubelet.runUntil(() => status(sim).targetDetails?.[0]?.extraInfo?.NewPod !== undefined, 30)
    const newPod = status(sim).targetDetails[0].extraInfo.NewPod as string
    sim.delete(podRef(target))
    await kubelet.run(20)
    t.equal(status(sim).progress, 'Processing', 'not Succeeded while the replacement is not Ready')
    t.same(progressOf(sim), [`${target}=Processing`])
    t.equal(status(sim).targetDetails[0].extraInfo.NewPod, newPod)
    t.ok(names(sim).includes(newPod), 'the CollaSet keeps the replacement as a regular Pod')
    hold = false
    await kubelet.runUntil(() => status(sim).progress === 'Succeeded', 60)
    t.equal(status(sim).targetDetails[0].extraInfo.NewPod, newPod)
    t.equal(podCondition(sim.get(podRef(newPod)), 'Ready'), 'True')
  }
)

t.test('Replace works on a CollaSet whatever its rollout, naming and scale settings', async t => {
  const partitioned = { podUpgradePolicy: 'InPlaceOnly', rollingUpdate: { byPartition: { partition: 1 } } }
  const settings: Array<[string, Record<string, unknown>]> = [
    ['paused (once up)', { paused: true }],
    ['InPlaceOnly at partition 1 with a delay', { updateStrategy: { ...partitioned, operationDelaySeconds: 30 } }],
    ['Recreate', { updateStrategy: { podUpgradePolicy: 'Recreate' } }],
    ['byLabel', { updateStrategy: { rollingUpdate: { byLabel: {} } } }],
    ['PersistentSequence', { namingStrategy: { podNamingSuffixPolicy: 'PersistentSequence' } }],
    ['podToDelete naming no Pod', { scaleStrategy: { podToDelete: ['foo-gone'] } }]
  ]
  for (const [what, collaset] of settings) {
    // A CollaSet paused from the start makes no Pod: it is paused once its Pods are up.
    const { sim, kubelet, origins } = await setup(t, { collaset: collaset.paused === true ? {} : collaset })
    if (collaset.paused === true) sim.edit(fooRef, o => { specOf(o).paused = true })
    const [first] = origins as [string]
    sim.apply(replaceJob([first]))
    await kubelet.runUntil(() => status(sim).progress === 'Succeeded', 120, capacityGuard(t, sim, 2))
    const newPod = status(sim).targetDetails[0].extraInfo.NewPod as string
    t.notOk(names(sim).includes(first), `${what}: the origin is gone`)
    t.equal(sim.get(podRef(newPod))?.metadata.labels?.[REPLACE_ORIGIN_LABEL], first, `${what}: ${newPod} replaced it`)
    t.equal(names(sim).length, 2, `${what}: two Pods`)
    await sim.runUntilQuiet()
  }
})

t.test('a target Pod that does not exist fails with PodNotFound; the job ends Failed', async t => {
  const { sim, kubelet, origins } = await setup(t)
  sim.apply(
    replaceJob(['non-exist', origins[0] as string], spec => {
      delete spec.partition
    })
  )
  await kubelet.runUntil(() => status(sim).progress === 'Failed', 120)
  t.match(status(sim), { progress: 'Failed', succeededPodCount: 1, failedPodCount: 1 })
  t.match(status(sim).targetDetails[0], { name: 'non-exist', progress: 'Failed', error: { reason: 'PodNotFound' } })
})

t.test('two jobs on the same Pod converge on one replacement; both succeed with the same NewPod', async t => {
  const { sim, kubelet, origins } = await setup(t)
  const [target] = origins as [string]
  sim.apply(replaceJob([target], () => {}, 'opj-a'))
  sim.apply(replaceJob([target], () => {}, 'opj-b'))
  await kubelet.runUntil(
    () => status(sim, 'opj-a').progress === 'Succeeded' && status(sim, 'opj-b').progress === 'Succeeded',
    120,
    capacityGuard(t, sim, 2)
  )
  const a = status(sim, 'opj-a').targetDetails[0].extraInfo.NewPod
  t.equal(status(sim, 'opj-b').targetDetails[0].extraInfo.NewPod, a, 'the same new Pod')
  t.equal(pods(sim).length, 2, 'one replacement, not two')
  t.ok(names(sim).includes(a))
})

t.test('a replacement Pod is not replaced in turn: the target waits with NotAllowedToReplaceNewPod', async t => {
  const { sim, kubelet, origins } = await setup(t, {
    kubelet: { neverStarts: p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] !== undefined }
  })
  const [target] = origins as [string]
  sim.apply(replaceJob([target], () => {}, 'opj-a'))
  await kubelet.runUntil(() => status(sim, 'opj-a').targetDetails?.[0]?.extraInfo?.NewPod !== undefined, 30)
  const newPod = status(sim, 'opj-a').targetDetails[0].extraInfo.NewPod as string
  sim.apply(replaceJob([newPod], () => {}, 'opj-b'))
  await kubelet.run(10)
  t.equal(status(sim, 'opj-b').progress, 'Processing')
  t.match(status(sim, 'opj-b').targetDetails[0].extraInfo.NotAllowedToReplaceNewPod, /is itself the replacement of/)
  t.notOk(sim.get(podRef(newPod))?.metadata.labels?.[TO_REPLACE_LABEL], 'the replacement is not labelled')
})

t.test(
  'deadline with partition raised step by step fails exactly the started targets, cancels their replacements; then ' +
    'the TTL deletes the job',
  async t => {
    // Replacements never start (a bad image): every started target runs into its deadline.
    const { sim, kubelet } = await setup(t, {
      kubelet: { neverStarts: p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] !== undefined }
    })
    sim.edit({ apiVersion: JOBHOOKS_API_VERSION, kind: 'CollaSet', namespace: 'default', name: 'foo' }, o => {
      specOf(o).replicas = 3
    })
    await kubelet.run(10)
    const all = pods(sim)
      .map(p => p.metadata.name)
      .sort()
    t.equal(all.length, 3)
    sim.apply(
      replaceJob(all, spec => {
        spec.partition = 0
        spec.activeDeadlineSeconds = 3
        spec.TTLSecondsAfterFinished = 5
      })
    )
    await kubelet.run(5)
    t.equal(status(sim).progress, 'Pending', 'partition 0: nothing started')
    for (const partition of [1, 2]) {
      sim.edit(jobRef(), o => {
        specOf(o).partition = partition
      })
      await kubelet.runUntil(() => status(sim).failedPodCount === partition, 30)
      await kubelet.run(3)
      t.equal(status(sim).failedPodCount, partition, `partition ${partition}: ${partition} failed`)
      t.equal(status(sim).progress, 'Processing')
      for (const d of status(sim).targetDetails.slice(0, partition)) {
        t.match(d, { progress: 'Failed', error: { reason: 'DeadlineExceeded' }, extraInfo: { Released: 'true' } })
      }
      t.equal(pods(sim).length, 3, 'the cancelled replacements are gone, the origins stay')
      t.notOk(
        pods(sim).some(p => p.metadata.labels?.[TO_REPLACE_LABEL] !== undefined),
        'no replace request left'
      )
    }
    sim.edit(jobRef(), o => {
      specOf(o).partition = 3
    })
    await kubelet.runUntil(() => status(sim).progress === 'Failed', 30)
    t.equal(status(sim).failedPodCount, 3)
    const endedAt = sim.secondsAt(status(sim).endTime)
    await kubelet.runUntil(() => sim.get(jobRef()) === undefined, 30)
    t.ok(
      sim.seconds() - endedAt >= 5 && sim.seconds() - endedAt <= 7,
      `deleted ${sim.seconds() - endedAt}s after it ended (TTL 5s)`
    )
    t.same(names(sim), all, 'only the original Pods remain')
  }
)

t.test('deleting the job mid-replace releases the Pod: the replacement goes, only the origin remains', async t => {
  const { sim, kubelet, origins } = await setup(t, {
    kubelet: { neverStarts: p => p.metadata.labels?.[REPLACE_ORIGIN_LABEL] !== undefined }
  })
  const [target] = origins as [string]
  sim.apply(replaceJob([target]))
  await kubelet.runUntil(() => status(sim).targetDetails?.[0]?.extraInfo?.NewPod !== undefined, 30)
  t.equal(pods(sim).length, 3, 'the replacement is up (not Ready)')
  sim.delete(jobRef())
  await kubelet.runUntil(() => sim.get(jobRef()) === undefined && pods(sim).length === 2, 30)
  t.same(names(sim), origins, 'only the original Pods')
  t.notOk(sim.get(podRef(target))?.metadata.labels?.[TO_REPLACE_LABEL], 'the replace request is withdrawn')
})
