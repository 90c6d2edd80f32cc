// spec.onExit on the in-process Metacontroller: exit steps start once every step of the DAG has
// finished, whatever its outcome, in their own dependency order; their Jobs are told the DAG's
// outcome (JOBHOOKS_FLOW_PHASE, JOBHOOKS_FLOW_FAILURES), their `when` reads flow.phase; a failed
// exit step fails a flow whose DAG succeeded; the deadline stops the DAG, never them; a rerun runs
// them again.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, inlineStep, scenarioJobFlow } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'nightly' }

const step = inlineStep

function jobFlow (spec: Record<string, unknown>): KubeObject {
  return scenarioJobFlow('nightly', spec)
}

/** A build → test DAG with a notifier and a clean-up after it: `cleanup` only on failure. */
function withExits (extra: Record<string, unknown> = {}): KubeObject {
  return jobFlow({
    flows: [step('build'), step('test', { dependencies: ['build'] })],
    onExit: [
      step('notify'),
      step('cleanup', { dependencies: ['notify'], when: "flow.phase == 'Failed'" })
    ],
    ...extra
  })
}

interface Record_ { name: string, phase: string, message?: string }
function status (sim: Simulator): { phase?: string, jobs: Record_[], conditions?: unknown[] } {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as never : { jobs: [] }
}
const phases = (sim: Simulator): string[][] => status(sim).jobs.map(j => [j.name, j.phase])

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

/** The variables of a Job's first container, by name. */
function env (sim: Simulator, job: string): Record<string, string | undefined> {
  const found = sim.listJobs().find(j => j.metadata.name === job) as KubeObject
  type Env = Array<{ name: string, value?: string }>
  const spec = found.spec as { template: { spec: { containers: Array<{ env?: Env }> } } }
  return Object.fromEntries((spec.template.spec.containers[0]?.env ?? []).map(e => [e.name, e.value]))
}

t.test('after a DAG that succeeded: the exit steps run after it, the failure-only one is skipped', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10 } })
  sim.apply(withExits())
  await sim.runUntil(s => s.listJobs().some(j => j.metadata.name === 'nightly-test'))
  t.match(status(sim).jobs.find(j => j.name === 'notify'), {
    phase: 'Pending', message: 'waiting: an exit step starts once every step of spec.flows has finished'
  })
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['nightly-build', 'nightly-test', 'nightly-notify'])
  t.same(phases(sim), [['build', 'Succeeded'], ['test', 'Succeeded'], ['notify', 'Succeeded'], ['cleanup', 'Skipped']])
  t.equal(status(sim).phase, 'Succeeded')
  t.same(env(sim, 'nightly-notify'), { JOBHOOKS_FLOW_PHASE: 'Succeeded', JOBHOOKS_FLOW_FAILURES: '[]' })
})

t.test('after a DAG that failed: every exit step runs, told which step failed; the flow stays Failed', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'nightly-build': 'fail' } } })
  sim.apply(withExits())
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['nightly-build', 'nightly-notify', 'nightly-cleanup'], 'test never ran; both exits did')
  t.same(phases(sim), [['build', 'Failed'], ['test', 'Skipped'], ['notify', 'Succeeded'], ['cleanup', 'Succeeded']])
  t.equal(status(sim).phase, 'Failed')
  const told = env(sim, 'nightly-cleanup')
  t.equal(told.JOBHOOKS_FLOW_PHASE, 'Failed')
  t.match(JSON.parse(told.JOBHOOKS_FLOW_FAILURES as string), [{ name: 'build', message: String }])
  t.equal(JSON.parse(told.JOBHOOKS_FLOW_FAILURES as string).length, 1, 'a skipped step is no failure')
})

t.test('a failed exit step fails a flow whose DAG succeeded (Argo\'s rule)', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'nightly-notify': 'fail' } } })
  sim.apply(withExits())
  await sim.runUntilQuiet()
  t.same(phases(sim), [['build', 'Succeeded'], ['test', 'Succeeded'], ['notify', 'Failed'], ['cleanup', 'Skipped']])
  t.equal(status(sim).phase, 'Failed')
})

t.test('past the deadline the DAG stops but the exit steps still run, unbounded by it', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10 } })
  const flow = withExits({ activeDeadlineSeconds: 15 })
  const spec = flow.spec as { flows: Array<Record<string, unknown>> }
  spec.flows.push(step('publish', { dependencies: ['test'] }))
  sim.apply(flow)
  await sim.runUntilQuiet()
  t.same(phases(sim), [
    ['build', 'Succeeded'], ['test', 'Failed'], ['publish', 'Skipped'],
    ['notify', 'Succeeded'], ['cleanup', 'Succeeded']
  ], 'test got the 5 s the flow had left and its Job failed at the deadline; publish never started')
  t.match(status(sim).jobs.find(j => j.name === 'test')?.message, /^DeadlineExceeded/)
  const notify = sim.listJobs().find(j => j.metadata.name === 'nightly-notify') as KubeObject
  const own = (notify.spec as { activeDeadlineSeconds?: number }).activeDeadlineSeconds
  t.equal(own, undefined, 'no deadline of the flow')
  t.equal(env(sim, 'nightly-notify').JOBHOOKS_FLOW_PHASE, 'Failed', 'a flow past its deadline failed')
  t.equal(status(sim).phase, 'Failed')
})

t.test('an exit step that fails stops the other exit steps under FailFast, not the DAG', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'nightly-notify': 'fail' } } })
  sim.apply(jobFlow({
    flows: [step('build')],
    onExit: [step('notify'), step('page', { dependencies: ['notify'] }), step('archive')]
  }))
  await sim.runUntilQuiet()
  t.same(phases(sim), [['build', 'Succeeded'], ['notify', 'Failed'], ['page', 'Skipped'], ['archive', 'Succeeded']])
})

t.test('a rerun runs every exit step again after the DAG ends again', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'nightly-test': 'fail' } } })
  sim.apply(withExits())
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Failed')
  const flow = sim.get(flowRef) as KubeObject
  sim.apply({ ...flow, metadata: { ...flow.metadata, annotations: { 'jobhooks.io/rerun': 'one' } }, status: undefined })
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).slice(4), ['nightly-test-2', 'nightly-notify-2'],
    'test again (it succeeds this time), then the exit steps again: notify runs, cleanup is skipped')
  t.equal(env(sim, 'nightly-notify-2').JOBHOOKS_FLOW_PHASE, 'Succeeded', 'told the new outcome')
  t.match(status(sim).jobs.filter(j => j.name === 'cleanup'), [{ phase: 'Succeeded' }, { phase: 'Skipped' }])
  t.equal(status(sim).phase, 'Succeeded')
})
