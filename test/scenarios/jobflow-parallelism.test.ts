// spec.parallelism on the in-process Metacontroller: at most N of a JobFlow's Jobs run at once,
// fan-out items included, started in dependency order and then by step name and item index, and
// the steps held back say why.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, mostRunning } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'capped' }

function step (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

function capped (flows: Array<Record<string, unknown>>, parallelism: number): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'capped', namespace: 'default' },
    spec: { parallelism, flows }
  }
}

function status (sim: Simulator): { phase?: string, jobs: Array<{ name: string, message?: string }> } {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as { jobs: Array<{ name: string }> } : { jobs: [] }
}

t.test('at most N Jobs at once, items included, in dependency order and then by name', async t => {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(capped([
    step('zeta'),
    step('alpha'),
    step('shard', { forEach: ['a', 'b', 'c'] }),
    step('merge', { dependencies: ['shard', 'alpha'] })
  ], 2))
  await sim.runUntil(s => s.seconds() >= 5)
  t.same(createdJobs(sim), ['capped-alpha', 'capped-shard-item-0'], 'the first two by name: alpha, then shard[0]')
  t.match(status(sim).jobs.find(j => j.name === 'zeta'),
    { message: 'waiting: at most 2 Jobs of the JobFlow at once (spec.parallelism)' })
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  t.equal(mostRunning(sim), 2, 'never more than two running')
  t.same(createdJobs(sim), [
    'capped-alpha', 'capped-shard-item-0', 'capped-shard-item-1', 'capped-shard-item-2', 'capped-zeta', 'capped-merge'
  ], 'roots by name and index, merge once its dependencies are done')
})

t.test('a cap above what runs holds nothing back', async t => {
  const sim = new Simulator({ controllers: [jobflowController('v2')] })
  t.teardown(async () => await sim.close())
  sim.apply(capped([step('a'), step('b'), step('c', { dependencies: ['a', 'b'] })], 5))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  t.equal(mostRunning(sim), 2)
})
