// Fan-out on the in-process Metacontroller: `forEach` and `forEachFrom` make a step one Job per
// item, `parallelism` caps how many run at once, retries count per item, and the step's
// dependants wait for every item.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { containerEnvironment } from '../../src/k8s/expansion.js'
import { condition } from '../helpers/conditions.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'batch' }

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

function step (name: string, extra: Record<string, unknown> = {}, command = 'work'): Record<string, unknown> {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', command] }]
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

function batch (flows: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'batch', namespace: 'default' },
    spec: { flows, ...extra }
  }
}

interface Record_ { name: string, jobName: string, phase: string, message?: string, startTime?: string }

function status (sim: Simulator): { phase?: string, jobsSucceeded?: string, jobs: Record_[] } {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as { jobs: Record_[] } : { jobs: [] }
}

function jobsNamed (sim: Simulator): string[] {
  return sim.listJobs().map(j => j.metadata.name).sort()
}

function envOf (job: KubeObject): Array<{ name: string, value?: string }> {
  const spec = job.spec as { template: { spec: { containers: Array<{ env?: Array<{ name: string }> }> } } }
  return spec.template.spec.containers[0]?.env ?? []
}

t.test('forEach: one Job per item, at most `parallelism` at once, the next step after every item', async t => {
  const sim = simulator(t)
  sim.apply(batch([
    step('shard', { forEach: ['eu', 'us', 'ap'], parallelism: 2 }),
    step('merge', { dependencies: ['shard'] })
  ]))
  await sim.runUntil(s => s.seconds() >= 5)
  t.same(jobsNamed(sim), ['batch-shard-item-0', 'batch-shard-item-1'], 'two at once')
  const waiting = status(sim).jobs.find(j => j.name === 'shard[2]')
  t.match(waiting, { phase: 'Pending', message: 'waiting: at most 2 items of shard at once' })
  t.match(status(sim).jobs.find(j => j.name === 'merge'), { message: 'waiting for shard (3 of 3 items)' })
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  t.equal(status(sim).jobsSucceeded, '4/4', 'the JOBS column counts items')
  const item1 = sim.listJobs().find(j => j.metadata.name === 'batch-shard-item-1') as KubeObject
  t.same(envOf(item1), [{ name: 'JOBHOOKS_ITEM', value: 'us' }, { name: 'JOBHOOKS_INDEX', value: '1' }])
  t.match(item1.metadata.labels, { 'jobhooks.io/flow': 'shard', 'jobhooks.io/item-index': '1' })
  t.match(status(sim).jobs.find(j => j.name === 'merge'), { phase: 'Succeeded', startTime: '2026-01-01T00:00:20Z' },
    'merge started once the last item succeeded')
  t.same(envOf(sim.listJobs().find(j => j.metadata.name === 'batch-merge') as KubeObject), [],
    'the items hand no output variables on')
})

t.test('forEachFrom: the items are the dependency\'s output; a bad output fails the step, clearly', async t => {
  const sim = simulator(t, { jobs: { outcomes: { list: { result: 'succeed', output: '["a.csv","b.csv"]' } } } })
  sim.apply(batch([
    step('list'),
    step('load', { dependencies: ['list'], forEachFrom: 'list' }),
    step('report', { dependencies: ['load'], when: "flows.load.phase == 'Succeeded'" })
  ]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  t.same(jobsNamed(sim), ['batch-list', 'batch-load-item-0', 'batch-load-item-1', 'batch-report'])
  const bad = simulator(t, { jobs: { outcomes: { list: { result: 'succeed', output: 'a.csv b.csv' } } } })
  bad.apply(batch([step('list'), step('load', { dependencies: ['list'], forEachFrom: 'list' })]))
  await bad.runUntilQuiet()
  t.equal(status(bad).phase, 'Failed')
  t.match(status(bad).jobs.find(j => j.name === 'load'), {
    phase: 'Failed',
    message: /^forEachFrom list: its output is not JSON: "a.csv b.csv": /
  })
  t.same(jobsNamed(bad), ['batch-list'], 'no Job for a step whose items cannot be known')
})

t.test('an item with $( reaches its Job escaped; the container sees it as written', async t => {
  const sim = simulator(t)
  sim.apply(batch([step('shard', { forEach: ['$(HOME)', '$$(X) $5'] })]))
  await sim.runUntilQuiet()
  const envs = sim.listJobs().map(envOf)
  t.same(envs.map(env => env[0]), [
    { name: 'JOBHOOKS_ITEM', value: '$$(HOME)' },
    { name: 'JOBHOOKS_ITEM', value: '$$$$(X) $5' }
  ])
  t.same(envs.map(env => containerEnvironment({ env }).get('JOBHOOKS_ITEM')), ['$(HOME)', '$$(X) $5'])
})

t.test('retries count per item', async t => {
  const sim = simulator(t, { jobs: { outcomes: { 'batch-shard-item-1': 'fail' } } })
  const retry = { limit: 1, backoffSeconds: 0 }
  sim.apply(batch([step('shard', { forEach: ['x', 'y', 'z', 'w'], parallelism: 2, retry })]))
  await sim.runUntilQuiet()
  const records = status(sim).jobs
  t.same(records.filter(r => r.name === 'shard[1]').map(r => [r.jobName, r.phase]),
    [['batch-shard-item-1', 'Failed'], ['batch-shard-item-1-2', 'Succeeded']], 'item 1 retried once, as its own')
  t.equal(status(sim).phase, 'Succeeded')
})

t.test('FailFast: after an item fails, the items not started are skipped and the step fails', async t => {
  const sim = simulator(t, { jobs: { outcomes: { 'batch-shard-item-1': 'fail' } } })
  const shard = step('shard', { forEach: ['x', 'y', 'z', 'w'], parallelism: 1 })
  sim.apply(batch([shard, step('merge', { dependencies: ['shard'] })]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Failed')
  t.same(status(sim).jobs.map(r => [r.name, r.phase]), [
    ['shard[0]', 'Succeeded'],
    ['shard[1]', 'Failed'],
    ['shard[2]', 'Skipped'],
    ['shard[3]', 'Skipped'],
    ['merge', 'Skipped']
  ])
  t.same(jobsNamed(sim), ['batch-shard-item-0', 'batch-shard-item-1'])
})

t.test('Continue: the step after a fan-out step names the step that failed, not its items', async t => {
  const sim = simulator(t, { jobs: { outcomes: { 'batch-shard-item-1': 'fail', 'batch-shard-item-2': 'fail' } } })
  const shard = step('shard', { forEach: ['x', 'y', 'z'] })
  sim.apply(batch([shard, step('merge', { dependencies: ['shard'] })], { failurePolicy: 'Continue' }))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Failed')
  t.same(status(sim).jobs.map(r => [r.name, r.phase]), [
    ['shard[0]', 'Succeeded'], ['shard[1]', 'Failed'], ['shard[2]', 'Failed'], ['merge', 'Skipped']
  ])
  t.match(status(sim).jobs.find(j => j.name === 'merge'), { message: 'not started: depends on shard (failed)' })
})

t.test('forEachFrom a step that failed or was skipped, yet started by a when or a depends: Failed', async t => {
  // Found by test/controllers/jobflow/dag-properties.test.ts: each of these polled every 2 s, Pending
  // "waiting for list", for ever.
  const cases: Array<{ list?: Record<string, unknown>, load: Record<string, unknown>, fails?: boolean }> = [
    { load: { dependencies: ['list'], when: "flows.list.phase == 'Failed'" }, fails: true },
    { load: { depends: 'list || list.Failed' }, fails: true },
    { list: { when: 'false' }, load: { dependencies: ['list'] } }
  ]
  for (const { list, load, fails } of cases) {
    const sim = simulator(t, { jobs: { outcomes: fails === true ? { list: 'fail' } : {} } })
    sim.apply(batch([step('list', list), step('load', { ...load, forEachFrom: 'list' })]))
    await sim.runUntilQuiet()
    const what = JSON.stringify(load)
    t.equal(status(sim).phase, 'Failed', what)
    const ended = fails === true ? 'failed' : 'was skipped'
    t.match(status(sim).jobs.find(j => j.name === 'load'), {
      phase: 'Failed',
      message: `forEachFrom list: list ${ended}, so it has no output to read items from`
    }, what)
  }
})

t.test('forEachFrom a step its depends needs not to have succeeded: Invalid before any Job', async t => {
  // Until 0.3.0 this ran list and then failed load: list had no output to read items from.
  const sim = simulator(t)
  sim.apply(batch([step('list'), step('load', { depends: 'list.Failed', forEachFrom: 'list' })]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Invalid')
  t.match(condition(sim.get(flowRef)?.status, 'Valid')?.message,
    /^flow "load": depends "list.Failed" holds only when list did not succeed/)
  t.same(jobsNamed(sim), [])
})

t.test('a forEachFrom step skipped before its items were known stays skipped: the finished status stays', async t => {
  // Found by test/controllers/jobflow/dag-properties.test.ts: once shard[1] was skipped (merge had
  // failed), the sync after the JobFlow finished found load's items and replaced its record with
  // load[0], "added after the JobFlow finished".
  const outcomes = {
    'batch-shard-item-0': { result: 'succeed' as const, afterSeconds: 1 },
    fail: { result: 'fail' as const, afterSeconds: 1 }
  }
  // shard[0] and fail end in one sync, as Metacontroller folds the events of one instant.
  const sim = simulator(t, { coalesce: true, jobs: { outcomes } })
  sim.apply(batch([
    step('shard', { forEach: ['x', 'y'], parallelism: 1 }),
    step('load', { dependencies: ['shard'], forEachFrom: 'shard' }),
    step('fail')
  ]))
  let atEnd: unknown
  await sim.runUntil(s => {
    if (atEnd === undefined && status(s).phase === 'Failed') atEnd = structuredClone(status(s).jobs)
    return s.isQuiet()
  })
  t.same(status(sim).jobs.map(j => [j.name, j.phase, j.message]), [
    ['shard[0]', 'Succeeded', undefined],
    ['shard[1]', 'Skipped', 'not started: fail failed'],
    ['load', 'Skipped', 'not started: fail failed'],
    ['fail', 'Failed', 'BackoffLimitExceeded: Job has reached the specified backoff limit']
  ])
  t.same(status(sim).jobs, atEnd, 'the status it finished with')
  t.same(jobsNamed(sim), ['batch-fail', 'batch-shard-item-0'])
})
