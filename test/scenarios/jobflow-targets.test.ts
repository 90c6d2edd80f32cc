// spec.targets and `rerun --step` on the in-process Metacontroller: only the targets and the steps
// they need get Jobs, the rest are Skipped and fail nothing, exit steps still run; targets edited
// while the flow runs decide only the steps still to start; a rerun with jobhooks.io/rerun-steps
// runs the steps named and every step after them again, and keeps the others' records and Jobs.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, inlineStep, scenarioJobFlow } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'release' }

const step = inlineStep

/**
 * build → test → publish, build → docs, lint alone, a fan-out `shard` over a list `plan` writes,
 * and a notifier on exit.
 */
function release (spec: Record<string, unknown> = {}): KubeObject {
  return scenarioJobFlow('release', {
    flows: [
      step('build'), step('test', { dependencies: ['build'] }), step('publish', { depends: 'test && build' }),
      step('docs', { dependencies: ['build'] }), step('lint'),
      step('plan'), step('shard', { dependencies: ['plan'], forEachFrom: 'plan' })
    ],
    onExit: [step('notify')],
    ...spec
  })
}

interface Record_ { name: string, phase: string, message?: string, attempt?: number }
function status (sim: Simulator): { phase?: string, jobs: Record_[], rerun?: unknown, conditions?: unknown[] } {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as never : { jobs: [] }
}
/** Each flow's last record: its phase. */
const lastPhases = (sim: Simulator): Record<string, string> =>
  Object.fromEntries(status(sim).jobs.map(j => [j.name, j.phase]))
const all = (phase: string, ...names: string[]): Record<string, string> =>
  Object.fromEntries(names.map(name => [name, phase]))

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({
    controllers: [jobflowController('v2')],
    ...options,
    jobs: { durationSeconds: 10, outputs: { plan: '["eu","us"]' }, ...options.jobs }
  })
  t.teardown(async () => await sim.close())
  return sim
}

const UNTARGETED = 'not started: not a target and no target needs it (spec.targets: publish, shard)'

t.test('targets: only they and what they need run; the rest are Skipped, fail nothing; exit steps run', async t => {
  const sim = simulator(t)
  sim.apply(release({ targets: ['publish', 'shard'] }))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['release-build', 'release-plan', 'release-test', 'release-shard-item-0',
    'release-shard-item-1', 'release-publish', 'release-notify'], 'no Job for docs or lint')
  t.same(lastPhases(sim), {
    ...all('Succeeded', 'build', 'test', 'publish', 'plan', 'shard[0]', 'shard[1]', 'notify'),
    ...all('Skipped', 'docs', 'lint')
  })
  t.same(status(sim).jobs.filter(j => j.name === 'docs' || j.name === 'lint').map(j => j.message),
    [UNTARGETED, UNTARGETED])
  t.equal(status(sim).phase, 'Succeeded')
})

t.test('targets: a failure only a non-target would carry does not fail the flow', async t => {
  // Without targets, docs (omitted below the failed build) is a leaf on a failed branch.
  const spec = {
    flows: [step('build'), step('report', { depends: 'build.Failed' }), step('docs', { dependencies: ['build'] })]
  }
  const sim = simulator(t, { jobs: { outcomes: { 'release-build': 'fail' } } })
  sim.apply(release({ ...spec, onExit: [], targets: ['report'] }))
  await sim.runUntilQuiet()
  t.same(lastPhases(sim), { build: 'Failed', report: 'Succeeded', docs: 'Skipped' })
  t.equal(status(sim).phase, 'Succeeded', 'the target handled the failure; docs is no target')
  const all = simulator(t, { jobs: { outcomes: { 'release-build': 'fail' } } })
  all.apply(release({ ...spec, onExit: [] }))
  await all.runUntilQuiet()
  t.equal(status(all).phase, 'Failed', 'the same flow without targets fails')
})

t.test('targets edited while the flow runs: started steps go on, the steps still to start follow the edit', async t => {
  const sim = simulator(t)
  sim.apply(release({ targets: ['test'] }))
  await sim.runUntil(s => s.listJobs().some(j => j.metadata.name === 'release-build'))
  sim.edit(flowRef, flow => { (flow.spec as Record<string, unknown>).targets = ['docs'] }, 'targets docs')
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['release-build', 'release-docs', 'release-notify'], 'test never starts')
  t.match(lastPhases(sim), { build: 'Succeeded', test: 'Skipped', docs: 'Succeeded', lint: 'Skipped' })
  t.equal(status(sim).phase, 'Succeeded')
})

/** Annotates the finished flow as `kubectl jobhooks rerun jf release --step …` does. */
function rerunSteps (sim: Simulator, value: string, steps: string): void {
  sim.edit(flowRef, flow => {
    flow.metadata.annotations = { 'jobhooks.io/rerun': value, 'jobhooks.io/rerun-steps': steps }
  }, `rerun --step ${steps}`)
}

t.test('rerun --step: the step and every step after it run again; the others keep their records and Jobs', async t => {
  const sim = simulator(t)
  sim.apply(release())
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  const before = createdJobs(sim).length
  rerunSteps(sim, '1', 'test')
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).slice(before), ['release-test-2', 'release-publish-2', 'release-notify-2'],
    'test, publish after it, then the exit step')
  t.match(status(sim).rerun, {
    value: '1', steps: ['test'], message: 'rerunning test, publish (test and the steps after them)'
  })
  const attempts = (name: string): Array<[string, number | undefined]> =>
    status(sim).jobs.filter(j => j.name === name).map(j => [j.phase, j.attempt])
  t.same(attempts('test'), [['Succeeded', undefined], ['Succeeded', 2]])
  t.same(attempts('build'), [['Succeeded', undefined]], 'build keeps its one record')
  t.same(attempts('docs'), [['Succeeded', undefined]], 'docs follows build, not test: kept')
  t.ok(sim.listJobs().some(j => j.metadata.name === 'release-build'), "build's Job stays")
  t.equal(status(sim).phase, 'Succeeded')
})

t.test('rerun --step of a forEachFrom source: its fan-out step takes its items anew from the new output', async t => {
  const sim = simulator(t)
  sim.apply(release({ targets: ['shard'] }))
  await sim.runUntilQuiet()
  const before = createdJobs(sim).length
  rerunSteps(sim, 'again', 'plan')
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).slice(before),
    ['release-plan-2', 'release-shard-item-0', 'release-shard-item-1', 'release-notify-2'])
  t.match(status(sim).rerun, { message: 'rerunning plan, shard[0-1] (plan and the steps after them)' })
  const created = sim.timeline.filter(e => e.object.kind === 'Job' && e.type === 'created')
  const planDone = sim.timeline.find(e => e.type === 'job-succeeded' && e.object.name === 'release-plan-2')?.seconds
  const items = created.filter(e => e.object.name.startsWith('release-shard-item-')).slice(-2)
  t.ok(planDone !== undefined && items.every(e => e.seconds >= planDone), 'the items start once plan ran again')
  t.same(lastPhases(sim), {
    ...all('Skipped', 'build', 'test', 'publish', 'docs', 'lint'),
    ...all('Succeeded', 'plan', 'shard[0]', 'shard[1]', 'notify')
  }, 'the steps no target needs are not rerun')
})
