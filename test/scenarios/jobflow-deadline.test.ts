// spec.activeDeadlineSeconds on the in-process Metacontroller: each new Job gets the time the flow
// has left as its own deadline (on a cluster the Job controller stops it there, DeadlineExceeded;
// the simulated one does not model a Job's deadline yet, so here it runs its course); past the
// deadline no step starts, and the flow is Failed, saying why.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'nightly' }

function chain (deadline: number): KubeObject {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  const step = (name: string, after?: string): Record<string, unknown> => ({
    name, ...(after !== undefined ? { dependencies: [after] } : {}), jobTemplate: { template: { spec: { containers } } }
  })
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'nightly', namespace: 'default' },
    spec: { activeDeadlineSeconds: deadline, flows: [step('a'), step('b', 'a'), step('c', 'b'), step('d', 'c')] }
  }
}

interface Status {
  phase?: string
  jobs: Array<{ name: string, phase: string, message?: string }>
  conditions: unknown[]
}

function status (sim: Simulator): Status {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as unknown as Status : { jobs: [], conditions: [] }
}

t.test('past the deadline nothing more starts, and the flow is Failed, DeadlineExceeded', async t => {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(chain(25))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Failed')
  t.same(createdJobs(sim), ['nightly-a', 'nightly-b', 'nightly-c'], 'd never created')
  const c = sim.listJobs().find(j => j.metadata.name === 'nightly-c') as KubeObject
  t.equal((c.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 5, 'c got the 5 s the flow had left')
  t.same(status(sim).jobs.map(j => [j.name, j.phase, j.message]), [
    ['a', 'Succeeded', undefined],
    ['b', 'Succeeded', undefined],
    ['c', 'Succeeded', undefined],
    ['d', 'Skipped', 'not started: the JobFlow passed its activeDeadlineSeconds (25 s)']
  ])
  t.match(status(sim).conditions, [{ type: 'Valid' }, {
    type: 'Failed',
    reason: 'DeadlineExceeded',
    message: 'the JobFlow passed its activeDeadlineSeconds (25 s): d'
  }])
})

t.test('a deadline with room to spare changes nothing but each Job\'s own deadline', async t => {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(chain(600))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  const d = sim.listJobs().find(j => j.metadata.name === 'nightly-d') as KubeObject
  t.equal((d.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds, 570, 'd started 30 s in: 570 s left')
})
