// The example action, end to end on the in-process Metacontroller: the Label example manifest
// (manifests/examples/operationjob-label.yaml) as a user applies it, through the real hooks and
// the simulated API server, which patches the Pods the way the executor would.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION, controllerFromManifest } from '../../src/simulator/controllers.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { specOf } from '../helpers/objects.js'

const EXAMPLE = fileURLToPath(new URL('../../manifests/examples/operationjob-label.yaml', import.meta.url))
const JOB: ObjectRef = {
  apiVersion: JOBHOOKS_API_VERSION,
  kind: 'OperationJob',
  namespace: 'default',
  name: 'web-canary'
}
const podRef = (name: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'default', name })

function status (sim: Simulator): Record<string, any> {
  const object = sim.get(JOB)
  return isRecord(object?.status) ? object.status : {}
}
const labels = (sim: Simulator, name: string): Record<string, string> => sim.get(podRef(name))?.metadata.labels ?? {}

async function start (
  t: { teardown: (fn: () => unknown) => void },
  edit: (objects: KubeObject[]) => void = () => {}
): Promise<Simulator> {
  const sim = new Simulator({ controllers: [controllerFromManifest('operationjobs')] })
  t.teardown(async () => await sim.close())
  const objects = loadManifest(EXAMPLE)
  edit(objects)
  for (const object of objects) sim.apply(object)
  return sim
}

t.test(
  'the example: web-0 labelled first (partition 1), web-1 after the partition grows, web-2 never; then the TTL ' +
    'deletes the job',
  async t => {
    const sim = await start(t)
    await sim.runUntilQuiet()
    t.match(status(sim), { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1 })
    t.same(
      status(sim).targetDetails.map((d: any) => `${d.name}=${d.progress}`),
      ['web-0=Succeeded', 'web-1=Pending']
    )
    t.same(labels(sim, 'web-0'), { app: 'web', track: 'canary' })
    t.same(labels(sim, 'web-1'), { app: 'web' }, 'the partition holds web-1 back')
    t.ok(
      sim.effects.log.every(e => e.effect.type === 'SetPodLabels' && e.result === 'applied'),
      'only label patches, all applied'
    )

    sim.edit(JOB, o => {
      specOf(o).partition = 2
    })
    await sim.runUntil(s => status(s).progress === 'Succeeded')
    t.match(status(sim), { progress: 'Succeeded', succeededPodCount: 2, failedPodCount: 0 })
    t.same(labels(sim, 'web-1'), { app: 'web', track: 'canary' })
    t.same(labels(sim, 'web-2'), { app: 'web' }, 'not a target: untouched')
    t.equal(
      sim.effects.log.filter(e => e.effect.type === 'SetPodLabels').length,
      2,
      'one patch per target, none repeated'
    )

    await sim.runUntil(s => s.get(JOB) === undefined)
    t.equal(sim.get(JOB), undefined, 'the TTL (default 30 min) deleted the job')
    t.same(labels(sim, 'web-0'), { app: 'web', track: 'canary' }, 'the labels stay, as after kubectl label')
  }
)

t.test(
  'a Pod that has the label with another value fails its target (LabelConflict) and is left as it was, unless ' +
    'overwrite',
  async t => {
    const stable = (objects: KubeObject[]): void => {
      const pod = objects.find(o => o.metadata.name === 'web-0') as KubeObject
      pod.metadata.labels = { ...pod.metadata.labels, track: 'stable' }
      specOf(objects.find(o => o.kind === 'OperationJob')).partition = 2
    }
    const sim = await start(t, stable)
    await sim.runUntil(s => status(s).progress === 'Failed')
    t.same(
      status(sim).targetDetails.map((d: any) => `${d.name}=${d.progress}`),
      ['web-0=Failed', 'web-1=Succeeded']
    )
    t.match(status(sim).targetDetails[0].error, { reason: 'LabelConflict', message: /has track=stable/ })
    t.equal(labels(sim, 'web-0').track, 'stable', 'nothing overwritten')

    const forced = await start(t, objects => {
      stable(objects)
      specOf<{ label: { overwrite?: boolean } }>(objects.find(o => o.kind === 'OperationJob')).label.overwrite = true
    })
    await forced.runUntil(s => status(s).progress === 'Succeeded')
    t.equal(labels(forced, 'web-0').track, 'canary', 'overwrite: replaced')
  }
)

t.test('a job the schema refuses is Invalid and labels nothing; fixed, it runs', async t => {
  const sim = await start(t, objects => {
    specOf(objects.find(o => o.kind === 'OperationJob')).label = { labels: { track: 'not a value' } }
  })
  await sim.runUntilQuiet()
  t.equal(status(sim).progress, 'Invalid')
  t.match(
    status(sim).conditions.find((c: any) => c.type === 'Valid'),
    { status: 'False', message: /spec.label.labels\["track"\] must match/ }
  )
  t.same(sim.effects.log, [], 'nothing done')
  sim.edit(JOB, o => {
    specOf(o).label = { labels: { track: 'canary' } }
  })
  await sim.runUntilQuiet()
  t.equal(status(sim).targetDetails[0].progress, 'Succeeded')
  t.equal(labels(sim, 'web-0').track, 'canary')
})
