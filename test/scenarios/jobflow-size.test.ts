// A JobFlow of any size the API server admits, on the in-process Metacontroller: one step over
// 10,000 items, and 2,000 inline steps, run to Succeeded while the object, spec and status, stays
// under 1 MiB at every status write (etcd refuses a request over 1.5 MiB by default). The status
// groups records alike (record-groups.ts); no outcome is lost on the way.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { crds, openApiErrors } from '../helpers/manifests.js'

const MIB = 1024 * 1024
const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]

function jobFlow (name: string, flows: Array<Record<string, unknown>>): KubeObject {
  const metadata = { name, namespace: 'default' }
  return { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', metadata, spec: { flows } }
}

function inline (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

/**
 * Runs `flow` to the end, measuring the stored JobFlow at every write: its largest size in bytes
 * of JSON, and the statuses it went through. The store's own object is read, not a copy.
 */
async function runMeasured (flow: KubeObject): Promise<{ sim: Simulator, largest: number, writes: number }> {
  // Syncs follow the waves of Jobs (coalesce), and the hook is called in process without the reads
  // check: the scenarios of every kind run both, at sizes where they take a second.
  const sim = new Simulator({
    controllers: [jobflowController('v2')], coalesce: true, transport: 'direct', checkReads: false
  })
  sim.apply(flow)
  let largest = 0
  let writes = 0
  let version: unknown
  await sim.runUntil(() => {
    const stored = sim.store.view(JOBHOOKS_API_VERSION, 'JobFlow')[0]
    if (stored !== undefined && stored.metadata.resourceVersion !== version) {
      version = stored.metadata.resourceVersion
      writes++
      largest = Math.max(largest, Buffer.byteLength(JSON.stringify(stored)))
    }
    return sim.isQuiet()
  }, { maxSteps: 100_000 })
  return { sim, largest, writes }
}

function statusOf (sim: Simulator, name: string): Record<string, unknown> {
  const status = sim.get({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name })?.status
  return isRecord(status) ? status : {}
}

t.test('one step over 10,000 items, then a merge: Succeeded, under 1 MiB throughout', async t => {
  const items = Array.from({ length: 10_000 }, (_, i) => `shard-${String(i).padStart(5, '0')}`)
  const { sim, largest, writes } = await runMeasured(jobFlow('wide', [
    inline('process', { forEach: items, parallelism: 2_500 }),
    inline('merge', { dependencies: ['process'] })
  ]))
  t.teardown(async () => await sim.close())
  const status = statusOf(sim, 'wide')
  t.equal(status.phase, 'Succeeded')
  t.equal(status.jobsSucceeded, '10001/10001')
  t.ok(largest < MIB, `the largest write was ${largest} bytes`)
  t.ok(writes >= 5, 'the status was written as the items went')
  t.equal(sim.listJobs().length, 10_001, 'every item ran once')
  t.same(status.jobGroups, [{ names: ['process[0-9999]', 'merge'], phase: 'Succeeded' }],
    'every outcome in a few bytes: the simulated pods leave an empty output, which reads as none')
  t.same(status.jobs, [])
  // The API server prunes what the CRD does not declare: the groups would be lost with it.
  const crd = crds.find(c => c.spec.names.kind === 'JobFlow')
  const object = sim.get({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'wide' })
  t.same(openApiErrors(crd, object), [], 'the CRD declares every field of the grouped status')
})

t.test('2,000 inline steps in 10 waves: Succeeded, under 1 MiB throughout', async t => {
  const flows = Array.from({ length: 2_000 }, (_, i) => {
    const wave = Math.floor(i / 200)
    return inline(`step-${i}`, wave === 0 ? {} : { dependencies: [`step-${i - 200}`] })
  })
  const { sim, largest } = await runMeasured(jobFlow('long', flows))
  t.teardown(async () => await sim.close())
  const status = statusOf(sim, 'long')
  t.equal(status.phase, 'Succeeded')
  t.equal(status.jobsSucceeded, '2000/2000')
  t.ok(largest < MIB, `the largest write was ${largest} bytes`)
  t.equal(sim.listJobs().length, 2_000, 'every step ran once')
  const groups = status.jobGroups as Array<{ names: string[], phase: string }>
  t.same(groups.map(g => [g.phase, g.names.length]), [['Succeeded', 2_000]])
})
