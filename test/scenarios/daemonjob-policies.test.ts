// DaemonJob with OpenKruise BroadcastJob's policies on the in-process Metacontroller:
// nodeParallelism (never more nodes' Jobs running than it allows, read from the timeline),
// failurePolicy FailFast (the default for a new DaemonJob), Pause and Continue, paused, and
// completionPolicy Never. Every run must go quiet.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { daemonjobController, simNode } from '../../src/simulator/daemonjob.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, mostRunning } from '../helpers/scenarios.js'

const EXAMPLE_MANIFEST = fileURLToPath(new URL('../../manifests/examples/daemonjob.yaml', import.meta.url))
const NAME = 'daemonjob-example'
const ref: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'DaemonJob', namespace: 'default', name: NAME }
const jobName = (node: string): string => `${NAME}-${node}`

function simulator (t: { teardown: (fn: () => unknown) => void }): Simulator {
  const sim = new Simulator({ controllers: [daemonjobController('v2')], jobs: { durationSeconds: 30 } })
  t.teardown(async () => await sim.close())
  return sim
}

/** The example DaemonJob on every node, with `policies` under its spec. */
function daemonJob (policies: Record<string, unknown>): KubeObject {
  const found = loadManifest(EXAMPLE_MANIFEST).find(o => o.kind === 'DaemonJob')
  if (found === undefined) throw new Error(`${EXAMPLE_MANIFEST} has no DaemonJob`)
  const spec = found.spec as Record<string, unknown>
  delete spec.excludeNodeList
  Object.assign(spec, policies)
  return found
}

function status (sim: Simulator): Record<string, any> {
  const object = sim.get(ref)
  return isRecord(object?.status) ? object.status : {}
}

function nodes (sim: Simulator, names: string[]): void {
  for (const name of names) sim.apply(simNode(name))
}

t.test('nodeParallelism 1 over 3 nodes: one Job at a time, in the order of the node names', async t => {
  const sim = simulator(t)
  nodes(sim, ['node-c', 'node-a', 'node-b'])
  sim.apply(daemonJob({ nodeParallelism: 1 }))
  await sim.reconcile(ref)
  t.same(createdJobs(sim), [jobName('node-a')])
  t.match(status(sim), { waiting: 2, message: 'nodeParallelism 1: 2 nodes waiting for their Job' })
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['node-a', 'node-b', 'node-c'].map(jobName))
  t.equal(mostRunning(sim), 1, 'never two Jobs running at once')
  t.match(status(sim), { phase: 'Succeeded', desired: 3, succeeded: 3 })
  t.notOk('waiting' in status(sim), 'nothing waits at the end')
  t.equal(sim.secondsAt(status(sim).completionTime) >= 90, true, 'three Jobs of 30 s, one after the other')
})

t.test('nodeParallelism "50%" of 4 nodes: two at a time', async t => {
  const sim = simulator(t)
  nodes(sim, ['node-1', 'node-2', 'node-3', 'node-4'])
  sim.apply(daemonJob({ nodeParallelism: '50%' }))
  await sim.reconcile(ref)
  t.same(createdJobs(sim), [jobName('node-1'), jobName('node-2')])
  t.match(status(sim), { message: 'nodeParallelism 50% (2 of 4 nodes): 2 nodes waiting for their Job' })
  await sim.runUntilQuiet()
  t.equal(mostRunning(sim), 2)
  t.match(status(sim), { phase: 'Succeeded', succeeded: 4 })
})

t.test('FailFast, the default of a new DaemonJob: the first failure fails it at once and stops the rest', async t => {
  const sim = simulator(t)
  nodes(sim, ['node-1', 'node-2', 'node-3'])
  sim.setJobOutcome(jobName('node-1'), { result: 'fail', afterSeconds: 5 })
  sim.apply(daemonJob({ nodeParallelism: 2 }))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), [jobName('node-1'), jobName('node-2')], 'node-3 never gets a Job')
  const s = status(sim)
  t.match(s, { phase: 'Failed', defaultFailurePolicy: 'FailFast', desired: 2, active: 0, failed: 2 })
  t.equal(sim.secondsAt(s.completionTime), 5, 'Failed when node-1 failed, not when node-2 would have finished')
  t.match(s.failedNodes, [
    { name: 'node-1', message: /BackoffLimitExceeded/ },
    { name: 'node-2', message: 'Stopped: failurePolicy FailFast, the Job of node-1 failed' }
  ])
  t.same(
    sim.timeline.filter(e => e.type === 'deleted' && e.object.kind === 'Job').map(e => e.object.name),
    [jobName('node-2')],
    "node-2's unfinished Job is deleted, as BroadcastJob deletes its active pods"
  )
})

/** Three nodes, one at a time, node-1's Job failing after 5 s, under `failurePolicy`; run until quiet. */
async function firstOfThreeFails (t: Parameters<typeof simulator>[0], failurePolicy: string): Promise<Simulator> {
  const sim = simulator(t)
  nodes(sim, ['node-1', 'node-2', 'node-3'])
  sim.setJobOutcome(jobName('node-1'), { result: 'fail', afterSeconds: 5 })
  sim.apply(daemonJob({ nodeParallelism: 1, failurePolicy }))
  await sim.runUntilQuiet()
  return sim
}

t.test('failurePolicy Continue: a failure does not stop the others', async t => {
  const sim = await firstOfThreeFails(t, 'Continue')
  t.same(createdJobs(sim), ['node-1', 'node-2', 'node-3'].map(jobName))
  t.match(status(sim), { phase: 'Failed', succeeded: 2, failed: 1 })
})

t.test('failurePolicy Pause: a failure holds the nodes still waiting until failurePolicy changes', async t => {
  const sim = await firstOfThreeFails(t, 'Pause')
  t.same(createdJobs(sim), [jobName('node-1')])
  t.match(status(sim), {
    phase: 'Running',
    waiting: 2,
    message: 'failurePolicy Pause: the Job of node-1 failed (set failurePolicy to Continue to go on): ' +
      '2 nodes waiting for their Job'
  })
  sim.edit(ref, object => { (object.spec as Record<string, unknown>).failurePolicy = 'Continue' })
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['node-1', 'node-2', 'node-3'].map(jobName))
  t.match(status(sim), { phase: 'Failed', succeeded: 2, failed: 1 })
})

t.test('paused: no new Job while true, running ones go on; unpaused, the rest start', async t => {
  const sim = simulator(t)
  nodes(sim, ['node-1'])
  sim.apply(daemonJob({}))
  await sim.reconcile(ref)
  sim.edit(ref, object => { (object.spec as Record<string, unknown>).paused = true })
  nodes(sim, ['node-2'])
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), [jobName('node-1')])
  t.match(status(sim), { phase: 'Running', succeeded: 1, waiting: 1, message: 'paused: 1 node waiting for their Job' })
  sim.edit(ref, object => { (object.spec as Record<string, unknown>).paused = false })
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), [jobName('node-1'), jobName('node-2')])
  t.match(status(sim), { phase: 'Succeeded', succeeded: 2 })
})

t.test('completionPolicy Never: it never finishes, and a node that joins later gets its Job', async t => {
  const sim = simulator(t)
  nodes(sim, ['node-1'])
  sim.apply(daemonJob({ completionPolicy: 'Never' }))
  await sim.runUntilQuiet()
  const idle = 'completionPolicy Never: waiting for nodes that join'
  t.match(status(sim), { phase: 'Running', succeeded: 1, message: idle })
  t.notOk('completionTime' in status(sim))
  await sim.advance(600)
  nodes(sim, ['node-2'])
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), [jobName('node-1'), jobName('node-2')])
  t.match(status(sim), { phase: 'Running', succeeded: 2 })
})
