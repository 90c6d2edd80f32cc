// spec.activeDeadlineSeconds on the in-process Metacontroller: each new Job gets the time the flow
// has left as its own deadline, where the Job controller (the simulated one as a cluster's) stops
// it, DeadlineExceeded; past the deadline no step starts, and the flow is Failed, saying why.
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

/** The chain played to its end under a deadline of `seconds`. */
async function played (t: { teardown: (fn: () => unknown) => void }, seconds: number): Promise<Simulator> {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(chain(seconds))
  await sim.runUntilQuiet()
  return sim
}

/** The activeDeadlineSeconds a Job of the flow was created with. */
function jobDeadline (sim: Simulator, name: string): number | undefined {
  const job = sim.listJobs().find(j => j.metadata.name === name) as KubeObject
  return (job.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds
}

t.test('past the deadline nothing more starts, and the flow is Failed, DeadlineExceeded', async t => {
  const sim = await played(t, 25)
  t.equal(status(sim).phase, 'Failed')
  t.same(createdJobs(sim), ['nightly-a', 'nightly-b', 'nightly-c'], 'd never created')
  t.equal(jobDeadline(sim, 'nightly-c'), 5, 'c got the 5 s the flow had left')
  t.same(status(sim).jobs.map(j => [j.name, j.phase, j.message]), [
    ['a', 'Succeeded', undefined],
    ['b', 'Succeeded', undefined],
    ['c', 'Failed', 'DeadlineExceeded: Job was active longer than specified deadline'],
    ['d', 'Skipped', 'not started: the JobFlow passed its activeDeadlineSeconds (25 s)']
  ], 'c, 5 s into its 10 s, is stopped by its own deadline')
  t.match(status(sim).conditions, [{ type: 'Valid' }, {
    type: 'Failed',
    reason: 'DeadlineExceeded',
    message: 'the JobFlow passed its activeDeadlineSeconds (25 s): c, d'
  }])
})

t.test('a deadline with room to spare changes nothing but each Job\'s own deadline', async t => {
  const sim = await played(t, 600)
  t.equal(status(sim).phase, 'Succeeded')
  t.equal(jobDeadline(sim, 'nightly-d'), 570, 'd started 30 s in: 570 s left')
})
