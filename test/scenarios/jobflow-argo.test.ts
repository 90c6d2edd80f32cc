// Argo Workflows' DAG rules on the in-process Metacontroller: `dependencies: [a]` holds when `a`
// succeeded or its own `when` skipped it; `depends` combines results; the flow's phase is its leaf
// steps' (a failure a later step handles does not fail it); items of any JSON; a `forEachFrom`
// over a fan-out step.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { containerEnvironment } from '../../src/k8s/expansion.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'dag' }

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

function step (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  return { name, jobTemplate: { template: { spec: { containers } } }, ...extra }
}

function dag (flows: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'dag', namespace: 'default' },
    spec: { flows, ...extra }
  }
}

interface Status { phase?: string, jobs: Array<{ name: string, phase: string, message?: string }> }

function status (sim: Simulator): Status {
  const value = sim.get(flowRef)?.status
  return isRecord(value) ? value as unknown as Status : { jobs: [] }
}

function phases (sim: Simulator): Record<string, string> {
  return Object.fromEntries(status(sim).jobs.map(j => [j.name, j.phase]))
}

t.test('dependencies: a step after a when-skipped one runs (conditionals-complex), not after omitted', async t => {
  const sim = simulator(t)
  sim.apply(dag([
    step('flip', {}),
    step('heads', { dependencies: ['flip'], when: "flows.flip.phase == 'Failed'" }),
    step('after-heads', { dependencies: ['heads'] }),
    step('strict', { depends: 'heads.Succeeded' }),
    step('after-strict', { dependencies: ['strict'] })
  ]))
  await sim.runUntilQuiet()
  t.same(phases(sim), {
    flip: 'Succeeded', heads: 'Skipped', 'after-heads': 'Succeeded', strict: 'Skipped', 'after-strict': 'Skipped'
  })
  const afterStrict = status(sim).jobs.find(j => j.name === 'after-strict')
  t.match(afterStrict, { message: 'not started: depends on strict (skipped)' })
  t.equal(status(sim).phase, 'Succeeded', 'no failure anywhere: skipped leaves do not fail the flow')
})

t.test('depends: a failure that a branch handles does not fail the flow, under FailFast too', async t => {
  for (const failurePolicy of ['FailFast', 'Continue']) {
    const sim = simulator(t, { jobs: { outcomes: { 'dag-b': 'fail' } } })
    sim.apply(dag([
      step('a'),
      step('b', { dependencies: ['a'] }),
      step('c', { dependencies: ['a'] }),
      step('d', { depends: 'b.Failed && c' }),
      step('e', { depends: 'b.Succeeded' })
    ], { failurePolicy }))
    await sim.runUntilQuiet()
    t.same(phases(sim), { a: 'Succeeded', b: 'Failed', c: 'Succeeded', d: 'Succeeded', e: 'Skipped' }, failurePolicy)
    t.equal(status(sim).jobs.find(j => j.name === 'e')?.message, 'not started: its depends is false: b.Succeeded')
    t.equal(status(sim).phase, 'Failed', `${failurePolicy}: the leaf e did not run, below the failed b`)
  }
  const handled = simulator(t, { jobs: { outcomes: { 'dag-b': 'fail' } } })
  handled.apply(dag([step('a'), step('b', { dependencies: ['a'] }), step('fix', { depends: 'b.Failed' }),
    step('later', { dependencies: ['a'] })]))
  await handled.runUntilQuiet()
  t.same(phases(handled), { a: 'Succeeded', b: 'Failed', fix: 'Succeeded', later: 'Succeeded' })
  t.equal(status(handled).phase, 'Succeeded', 'every leaf succeeded: the failure of b was handled by fix')
})

t.test('FailFast: an unhandled failure stops what has not started; a handler still decides for itself', async t => {
  const sim = simulator(t, { jobs: { outcomes: { 'dag-a': { result: 'fail', afterSeconds: 5 } } } })
  sim.apply(dag([
    step('a'),
    step('slow'),
    step('after-slow', { dependencies: ['slow'] }),
    step('after-a', { dependencies: ['a'] }),
    step('notify', { depends: 'a.Failed' })
  ]))
  await sim.runUntilQuiet()
  t.same(phases(sim),
    { a: 'Failed', slow: 'Succeeded', 'after-slow': 'Skipped', 'after-a': 'Skipped', notify: 'Succeeded' })
  t.equal(status(sim).jobs.find(j => j.name === 'after-slow')?.message, 'not started: a failed')
  t.equal(status(sim).phase, 'Failed')
})

t.test('depends: AnySucceeded and AllFailed read a fan-out step as one', async t => {
  const sim = simulator(t, { jobs: { outcomes: { 'dag-shard-item-1': 'fail' } } })
  sim.apply(dag([
    step('shard', { forEach: ['x', 'y'] }),
    step('any', { depends: 'shard.AnySucceeded' }),
    step('all', { depends: 'shard.AllFailed' }),
    step('bad', { depends: 'shard.Failed' })
  ], { failurePolicy: 'Continue' }))
  await sim.runUntilQuiet()
  t.match(phases(sim),
    { 'shard[0]': 'Succeeded', 'shard[1]': 'Failed', any: 'Succeeded', all: 'Skipped', bad: 'Succeeded' })
})

t.test('items of any JSON: JOBHOOKS_ITEM is a scalar as text or JSON, an object adds a variable per key', async t => {
  const sim = simulator(t)
  sim.apply(dag([step('each', { forEach: [3, true, { os: 'debian', 'version-id': 9.1, tags: ['a'] }] })]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded')
  const env = (name: string): Record<string, string> => {
    const job = sim.listJobs().find(j => j.metadata.name === name) as KubeObject
    const spec = job.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }
    return Object.fromEntries(containerEnvironment(spec.template.spec.containers[0] as never))
  }
  t.match(env('dag-each-item-0'), { JOBHOOKS_ITEM: '3', JOBHOOKS_INDEX: '0' })
  t.match(env('dag-each-item-1'), { JOBHOOKS_ITEM: 'true' })
  t.match(env('dag-each-item-2'), {
    JOBHOOKS_ITEM: '{"os":"debian","version-id":9.1,"tags":["a"]}',
    JOBHOOKS_ITEM_OS: 'debian',
    JOBHOOKS_ITEM_VERSION_ID: '9.1',
    JOBHOOKS_ITEM_TAGS: '["a"]'
  })
})

t.test('forEachFrom a fan-out step: the JSON array of its items\' outputs, in index order', async t => {
  const outcomes = {
    'dag-gen-item-0': { result: 'succeed' as const, output: '{"n": 1}' },
    'dag-gen-item-1': { result: 'succeed' as const, output: 'two' },
    'dag-gen-item-2': { result: 'succeed' as const, output: '3' }
  }
  const sim = simulator(t, { jobs: { outcomes } })
  sim.apply(dag([
    step('gen', { forEach: ['a', 'b', 'c'] }),
    step('sum', { dependencies: ['gen'], forEachFrom: 'gen' })
  ]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Succeeded', 'it ends: the items were found')
  const items = sim.listJobs().filter(j => j.metadata.name.startsWith('dag-sum-item-')).map(job => {
    type Env = Array<{ name: string, value: string }>
    const spec = job.spec as { template: { spec: { containers: Array<{ env?: Env }> } } }
    return spec.template.spec.containers[0]?.env?.find(e => e.name === 'JOBHOOKS_ITEM')?.value
  })
  t.same(items, ['{"n":1}', 'two', '3'])
})

t.test('the spec: depends is exclusive with dependencies, parsed when read, its names must exist', async t => {
  const sim = simulator(t)
  sim.apply(dag([step('a'), step('b', { dependencies: ['a'], depends: 'a' })]))
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Invalid')
  const bad = simulator(t)
  bad.apply(dag([step('a'), step('b', { depends: 'a &&' }), step('c', { depends: 'nope.Failed' })]))
  await bad.runUntilQuiet()
  t.equal(bad.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').length, 0)
  const valid = (bad.get(flowRef)?.status as { conditions: Array<{ type: string, message: string }> }).conditions
    .find(c => c.type === 'Valid')
  t.match(valid?.message, /depends ends where a step name was expected/)
})

t.test('Continue: a retry in its backoff still runs after a failure elsewhere, and what follows it', async t => {
  // Found by test/controllers/jobflow/dag-properties.test.ts: the JobFlow ended Failed the moment
  // nothing ran, so b's retry and c never started ("added after the JobFlow finished").
  const sim = simulator(t, { jobs: { outcomes: { 'dag-a': 'fail', 'dag-b': 'fail' } } })
  sim.apply(dag([
    step('a'),
    step('b', { retry: { limit: 1, backoffSeconds: 5 } }),
    step('c', { dependencies: ['b'] })
  ], { failurePolicy: 'Continue' }))
  await sim.runUntilQuiet()
  const created = sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name)
  t.same(created, ['dag-a', 'dag-b', 'dag-b-2', 'dag-c'])
  t.same(status(sim).jobs.map(j => [j.name, j.phase]),
    [['a', 'Failed'], ['b', 'Failed'], ['b', 'Succeeded'], ['c', 'Succeeded']])
  t.equal(status(sim).phase, 'Failed', 'a, a leaf, failed')
})

t.test('forEachFrom an empty array: a step held back as any other, then Succeeded with nothing to do', async t => {
  // Found by test/controllers/jobflow/dag-properties.test.ts: a step of no items had no record at
  // all, so neither its dependencies nor its depends held it back (a.Failed did not fail the flow
  // here), and a depends naming it threw in the hook at every sync (Invalid for ever).
  const outcomes = { 'dag-a': 'fail' as const, 'dag-list': { result: 'succeed' as const, output: '[]' } }
  const sim = simulator(t, { jobs: { outcomes } })
  sim.apply(dag([
    step('a'),
    step('list'),
    step('load', { dependencies: ['list'], forEachFrom: 'list' }),
    step('again', { dependencies: ['load'], forEachFrom: 'load' }),
    step('after', { depends: 'again && load' }),
    step('any', { depends: 'load.AnySucceeded || load.AllFailed' }),
    step('held', { depends: 'a.Succeeded && list', forEachFrom: 'list' })
  ], { failurePolicy: 'Continue' }))
  await sim.runUntilQuiet()
  t.same(phases(sim), {
    a: 'Failed',
    list: 'Succeeded',
    load: 'Succeeded',
    again: 'Succeeded',
    after: 'Succeeded',
    any: 'Skipped',
    held: 'Skipped'
  })
  t.match(status(sim).jobs.find(j => j.name === 'load'), { message: 'nothing to do: forEachFrom list gives no items' })
  t.match(status(sim).jobs.find(j => j.name === 'again'), { message: 'nothing to do: forEachFrom load gives no items' })
  t.same(sim.listJobs().map(j => j.metadata.name).sort(), ['dag-a', 'dag-after', 'dag-list'], 'no Job for no items')
  t.equal(status(sim).phase, 'Failed', 'held, a leaf, was omitted below the failed a')
})
