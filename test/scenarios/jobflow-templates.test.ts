// flows[].flowTemplateRef on the in-process Metacontroller: a JobFlowTemplate's DAG runs as a
// group of steps named <step>.<inner>, started once the group may start, reading the template's
// arguments (defaults, then the reference's values) and their dependencies' outputs by the names
// the template gives them; the group ends as Argo's nested DAG node, and its dependants read that.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { createdJobs, inlineStep as step, scenarioJobFlow } from '../helpers/scenarios.js'

const flowRef: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'ci' }

/** A JobFlowTemplate `name` of `spec`. */
function template (name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlowTemplate', metadata: { name, namespace: 'default' }, spec }
}

/** Argo's dag-nested in small: a diamond template run twice, the second after the first. */
const diamond = template('diamond', {
  arguments: [{ name: 'target', value: 'linux' }, { name: 'suite' }],
  flows: [
    step('a'),
    step('b', { dependencies: ['a'] }),
    step('c', { dependencies: ['a'], when: "args.target == 'linux'" }),
    step('d', { dependencies: ['b', 'c'] })
  ]
})

const arg = (name: string, value: string): { name: string, value: string } => ({ name, value })

function ci (flows: unknown[]): KubeObject {
  return scenarioJobFlow('ci', { arguments: [{ name: 'release', value: 'v1' }], flows })
}

const twice = ci([
  { name: 'first', flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 'fast')] } },
  {
    name: 'second',
    dependencies: ['first'],
    flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 'slow'), arg('target', 'mac')] }
  },
  step('publish', { dependencies: ['second'] })
])

interface Row { name: string, phase: string, message?: string }
function records (sim: Simulator): Row[] {
  const status = sim.get(flowRef)?.status
  return isRecord(status) && Array.isArray(status.jobs) ? status.jobs as Row[] : []
}
/** The record of a step's last attempt. */
const recordOf = (sim: Simulator, name: string): Row | undefined => records(sim).findLast(r => r.name === name)
const statusOf = (sim: Simulator): unknown => sim.get(flowRef)?.status

/** The JobFlow ci of `spec`: the group `first` (diamond, suite fast), then `more`, played to its end. */
async function runFirst (sim: Simulator, spec: Record<string, unknown>, more: unknown[] = []): Promise<void> {
  sim.apply(diamond)
  const first = { name: 'first', flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 'fast')] } }
  sim.apply(scenarioJobFlow('ci', { ...spec, flows: [first, ...more] }))
  await sim.runUntilQuiet()
}

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 }, ...options })
  t.teardown(async () => await sim.close())
  return sim
}

/** The env of a created Job's first container, by name. */
function envOf (sim: Simulator, job: string): Record<string, unknown> {
  const found = sim.list({ apiVersion: 'batch/v1', kind: 'Job' }, 'default').find(j => j.metadata.name === job)
  type Env = Array<{ name: string, value: string }>
  const env = (found?.spec as { template: { spec: { containers: Array<{ env?: Env }> } } } | undefined)
    ?.template.spec.containers[0]?.env ?? []
  return Object.fromEntries(env.map(e => [e.name, e.value]))
}

t.test('a template runs as a group of steps; the next group and step wait for it', async t => {
  const sim = simulator(t)
  sim.apply(diamond)
  sim.apply(twice)
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), [
    'ci-first.a', 'ci-first.b', 'ci-first.c', 'ci-first.d',
    'ci-second.a', 'ci-second.b', 'ci-second.d', 'ci-publish'
  ], 'in dependency order, each group after what it depends on; second.c skipped by its when')
  t.match(recordOf(sim, 'first'),
    { phase: 'Succeeded', message: 'JobFlowTemplate diamond (generation 1): 4 of 4 steps succeeded' })
  t.match(recordOf(sim, 'second.c'), { phase: 'Skipped', message: /when is false: args.target == 'linux'/ })
  t.match(recordOf(sim, 'second'), { phase: 'Succeeded' })
  t.match(statusOf(sim), { phase: 'Succeeded' })
  t.match(envOf(sim, 'ci-first.a'),
    { JOBHOOKS_ARG_RELEASE: 'v1', JOBHOOKS_ARG_TARGET: 'linux', JOBHOOKS_ARG_SUITE: 'fast' })
  t.match(envOf(sim, 'ci-second.a'), { JOBHOOKS_ARG_TARGET: 'mac', JOBHOOKS_ARG_SUITE: 'slow' })
  t.equal(envOf(sim, 'ci-publish').JOBHOOKS_ARG_SUITE, undefined, 'a template\'s arguments stay in its group')
})

t.test('a failure inside fails the group, and its dependants read that as any step\'s failure', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'ci-first.b': 'fail' } } })
  sim.apply(diamond)
  sim.apply(ci([
    { name: 'first', flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 'fast')] } },
    step('report', { depends: 'first.Failed' })
  ]))
  await sim.runUntilQuiet()
  t.match(recordOf(sim, 'first.b'), { phase: 'Failed' })
  t.match(recordOf(sim, 'first'), { phase: 'Failed', message: 'JobFlowTemplate diamond (generation 1): failed: b' })
  t.match(recordOf(sim, 'first.d'), { phase: 'Skipped' }, 'd needs b')
  t.match(recordOf(sim, 'report'), { phase: 'Succeeded' })
  t.match(statusOf(sim), { phase: 'Succeeded' }, 'the failure was handled by report (Argo\'s leaves rule)')
})

t.test('a group its dependencies skip skips every step inside it', async t => {
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes: { 'ci-build': 'fail' } } })
  sim.apply(diamond)
  sim.apply(ci([
    step('build'),
    { name: 'test', dependencies: ['build'], flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 'x')] } }
  ]))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['ci-build'])
  t.match(recordOf(sim, 'test'), { phase: 'Skipped' })
  t.match(recordOf(sim, 'test.a'), { phase: 'Skipped', message: 'not started: its group test was skipped' })
  t.match(statusOf(sim), { phase: 'Failed' })
})

t.test('templates run templates; a missing one, a cycle and a missing argument are Invalid', async t => {
  const sim = simulator(t)
  sim.apply(diamond)
  const inner = { name: 'inner', flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 's')] } }
  sim.apply(template('outer', { flows: [inner] }))
  sim.apply(ci([{ name: 'all', flowTemplateRef: { name: 'outer' } }]))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['ci-all.inner.a', 'ci-all.inner.b', 'ci-all.inner.c', 'ci-all.inner.d'])
  t.match(recordOf(sim, 'all'),
    { phase: 'Succeeded', message: 'JobFlowTemplate outer (generation 1): 1 of 1 steps succeeded' })
  t.match(recordOf(sim, 'all.inner'),
    { phase: 'Succeeded', message: 'JobFlowTemplate diamond (generation 1): 4 of 4 steps succeeded' })

  const invalid = async (spec: KubeObject, extra: KubeObject[], message: RegExp): Promise<void> => {
    const other = simulator(t)
    for (const object of extra) other.apply(object)
    other.apply(spec)
    // A missing template is looked for again every 300 s: the run stops before the first look.
    await other.runUntilQuiet({ untilSeconds: 200 })
    t.match(other.get(flowRef)?.status, { phase: 'Invalid', conditions: [{ type: 'Valid', status: 'False', message }] })
    t.same(createdJobs(other), [])
  }
  await invalid(ci([{ name: 'x', flowTemplateRef: { name: 'nowhere' } }]), [],
    /flow "x": JobFlowTemplate "nowhere" not found in namespace default/)
  await invalid(ci([{ name: 'x', flowTemplateRef: { name: 'diamond' } }]), [diamond],
    /JobFlowTemplate "diamond" needs argument suite/)
  await invalid(ci([{ name: 'x', flowTemplateRef: { name: 'p' } }]), [
    template('p', { flows: [{ name: 'q', flowTemplateRef: { name: 'q' } }] }),
    template('q', { flows: [{ name: 'p', flowTemplateRef: { name: 'p' } }] })
  ], /a cycle of JobFlowTemplates: p → q → p/)
})

t.test('a template edited while the flow runs changes nothing of it: the JobFlow pinned it', async t => {
  const sim = simulator(t)
  sim.apply(diamond)
  sim.apply(twice)
  await sim.runUntil(s => createdJobs(s).includes('ci-first.a'))
  const pins = sim.list({ apiVersion: 'v1', kind: 'ConfigMap' }, 'default')
    .filter(c => c.metadata.labels?.['jobhooks.io/pinned'] === 'jobflowtemplates')
  t.same(pins.map(c => Object.keys(c.data as object)), [['diamond']], 'the template is pinned in a ConfigMap child')
  sim.apply(template('diamond', { arguments: [{ name: 'suite' }, { name: 'target' }], flows: [step('only')] }))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).filter(j => j.startsWith('ci-second')), ['ci-second.a', 'ci-second.b', 'ci-second.d'],
    'the second group, started after the edit, runs the template as it was')
  t.match(recordOf(sim, 'second'), { phase: 'Succeeded', message: /^JobFlowTemplate diamond \(generation 1\)/ })
  t.match(statusOf(sim), { phase: 'Succeeded' })

  const later = simulator(t)
  later.apply(template('diamond', { flows: [step('only')] }))
  later.apply(ci([{ name: 'first', flowTemplateRef: { name: 'diamond' } }]))
  await later.runUntilQuiet()
  t.same(createdJobs(later), ['ci-first.only'], 'a new JobFlow reads the template as it is now')
})

t.test('rerun --step of a step inside a group reruns it, what follows it, its group and what follows that', async t => {
  const sim = simulator(t)
  sim.apply(diamond)
  sim.apply(twice)
  await sim.runUntilQuiet()
  const rerun = async (value: string, steps: string): Promise<string[]> => {
    const before = createdJobs(sim).length
    sim.edit(flowRef, flow => {
      flow.metadata.annotations = { 'jobhooks.io/rerun': value, 'jobhooks.io/rerun-steps': steps }
    }, `rerun --step ${steps}`)
    await sim.runUntilQuiet()
    return createdJobs(sim).slice(before)
  }
  t.same(await rerun('1', 'second.b'), ['ci-second.b-2', 'ci-second.d-2', 'ci-publish-2'],
    'second.a and second.c keep their records; the group ends again, then publish runs again')
  t.match(recordOf(sim, 'second'), { phase: 'Succeeded', attempt: 2 })
  t.same(await rerun('2', 'first'), [
    'ci-first.a-2', 'ci-first.b-2', 'ci-first.c-2', 'ci-first.d-2',
    'ci-second.a-2', 'ci-second.b-3', 'ci-second.d-3', 'ci-publish-3'
  ], 'a group named reruns every step inside it, and everything after it')
  t.match(statusOf(sim), { phase: 'Succeeded' })
})

t.test('a failure two templates deep fails both groups and the flow; FailFast stops a step beside them', async t => {
  const outcomes = { 'ci-all.inner.a': 'fail' as const, 'ci-slow': { result: 'succeed' as const, afterSeconds: 30 } }
  const sim = simulator(t, { jobs: { durationSeconds: 10, outcomes } })
  sim.apply(diamond)
  const inner = { name: 'inner', flowTemplateRef: { name: 'diamond', arguments: [arg('suite', 's')] } }
  sim.apply(template('outer', { flows: [inner] }))
  sim.apply(ci([
    { name: 'all', flowTemplateRef: { name: 'outer' } },
    step('slow'),
    step('later', { dependencies: ['slow'] })
  ]))
  await sim.runUntilQuiet()
  t.match(recordOf(sim, 'all.inner'), { phase: 'Failed', message: 'JobFlowTemplate diamond (generation 1): failed: a' })
  t.match(recordOf(sim, 'all'), { phase: 'Failed', message: 'JobFlowTemplate outer (generation 1): failed: inner' })
  t.match(recordOf(sim, 'later'), { phase: 'Skipped', message: 'not started: all.inner.a failed' })
  t.match(statusOf(sim), { phase: 'Failed' })
})

t.test('past the flow\'s deadline a group\'s Job is stopped, its other steps skipped, and it fails', async t => {
  const sim = simulator(t)
  await runFirst(sim, { activeDeadlineSeconds: 15 })
  t.match(recordOf(sim, 'first.b'), { phase: 'Failed' })
  t.match(recordOf(sim, 'first.d'), { phase: 'Skipped' })
  t.match(recordOf(sim, 'first'), { phase: 'Failed' })
  const conditions = [{ type: 'Valid' }, { type: 'Failed', reason: 'DeadlineExceeded' }]
  t.match(statusOf(sim), { phase: 'Failed', conditions })
})

t.test('a fan-out inside a group runs its items as the group\'s, and ends the group with them', async t => {
  const sim = simulator(t)
  sim.apply(template('shards', {
    flows: [step('split'), step('shard', { dependencies: ['split'], forEach: ['a', 'b', 'c'], parallelism: 2 }),
      step('merge', { dependencies: ['shard'] })]
  }))
  sim.apply(ci([{ name: 'run', flowTemplateRef: { name: 'shards' } }, step('after', { dependencies: ['run'] })]))
  await sim.runUntilQuiet()
  t.same(createdJobs(sim), ['ci-run.split', 'ci-run.shard-item-0', 'ci-run.shard-item-1', 'ci-run.shard-item-2',
    'ci-run.merge', 'ci-after'], 'two items at a time, then merge, then what follows the group')
  t.match(recordOf(sim, 'run.shard[2]'), { phase: 'Succeeded' })
  t.match(recordOf(sim, 'run'), { phase: 'Succeeded', message: /3 of 3 steps succeeded/ })
  t.match(statusOf(sim), { phase: 'Succeeded' })
})

t.test('spec.parallelism counts the Jobs of a group\'s steps, never the group, which runs none', async t => {
  const sim = simulator(t)
  await runFirst(sim, { parallelism: 1 }, [step('docs')])
  t.same(createdJobs(sim), ['ci-docs', 'ci-first.a', 'ci-first.b', 'ci-first.c', 'ci-first.d'],
    'one Job at a time: docs (a root, first by name), then the group\'s, in dependency order and by name')
  t.match(statusOf(sim), { phase: 'Succeeded' })
})
