// The simulator's Kueue (src/simulator/kueue.ts): queued Jobs are created suspended, admitted at
// most `quota` at once, higher priority first and then the oldest; a higher priority preempts the
// lowest-priority, latest-admitted Job, which waits again and runs on, using no retry. Jobs
// without a queue name, and simulations without a quota, are as they were.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type SimulatorOptions, type TimelineEvent } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { busyboxJobSpec, exampleJobFlow } from '../helpers/examples.js'

const QUEUE = 'kueue.x-k8s.io/queue-name'
const PRIORITY = 'kueue.x-k8s.io/priority-class'
const flowRef = (name: string): ObjectRef =>
  ({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name })
const jobRef = (name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name })

function simulator (t: { teardown: (fn: () => unknown) => void }, options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 }, ...options })
  t.teardown(async () => await sim.close())
  return sim
}

/** A JobFlow in queue `team-a`: `steps` independent flows, then `final` after all of them. */
function queuedFlow (name: string, steps: number): KubeObject {
  const names = Array.from({ length: steps }, (_, i) => `step${i + 1}`)
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name, namespace: 'default' },
    spec: {
      queueName: 'team-a',
      flows: [
        ...names.map(flow => ({ name: flow, jobTemplate: busyboxJobSpec(flow) })),
        { name: 'final', dependencies: names, jobTemplate: busyboxJobSpec('final') }
      ]
    }
  }
}

/** A plain Job in queue `team-a`, of a WorkloadPriorityClass when `priority` names one. */
function queuedJob (name: string, priority?: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: 'default',
      labels: { [QUEUE]: 'team-a', ...(priority !== undefined ? { [PRIORITY]: priority } : {}) }
    },
    spec: busyboxJobSpec(name)
  }
}

function priorityClass (name: string, value: number, version = 'v1beta1'): KubeObject {
  return { apiVersion: `kueue.x-k8s.io/${version}`, kind: 'WorkloadPriorityClass', metadata: { name }, value }
}

function suspended (job: KubeObject | undefined): boolean {
  return isRecord(job?.spec) && job.spec.suspend === true
}

function finished (job: KubeObject): boolean {
  const conditions = isRecord(job.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []
  return conditions.some(c => isRecord(c) && c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'))
}

/** Queued Jobs that run now: unsuspended, not finished. */
function admitted (sim: Simulator): string[] {
  return sim.listJobs().filter(j => j.metadata.labels?.[QUEUE] !== undefined && !suspended(j) && !finished(j))
    .map(j => j.metadata.name)
}

function events (sim: Simulator, type: TimelineEvent['type']): string[] {
  return sim.timeline.filter(e => e.type === type).map(e => e.object.name)
}

t.test('a queued JobFlow of 6 steps and a final one, quota 2: never more than 2 admitted, each Job created once, ' +
  'all succeed', async t => {
  const sim = simulator(t, { kueue: { quota: 2 } })
  sim.apply(queuedFlow('wide', 6))
  let most = 0
  await sim.runUntil(s => {
    most = Math.max(most, admitted(s).length)
    return (s.get(flowRef('wide'))?.status as { phase?: string } | undefined)?.phase === 'Succeeded'
  }, { maxSteps: 5000 })
  await sim.runUntilQuiet({ maxSteps: 5000 })
  t.equal(most, 2, 'two at once at most, and two at a time')
  const created = events(sim, 'created')
  t.equal(created.length, 7)
  t.equal(new Set(created).size, 7, 'each Job created once')
  t.same(events(sim, 'kueue-admitted'), [...[1, 2, 3, 4, 5, 6].map(i => `wide-step${i}`), 'wide-final'],
    'admitted in the order created')
  t.same(events(sim, 'job-failed'), [])
  t.match(sim.get(flowRef('wide'))?.status, { phase: 'Succeeded', jobsSucceeded: '7/7' })
  t.equal(sim.seconds(), 40, 'three rounds of two, one of one, then the final step')
  t.ok(sim.listJobs().every(j => suspended(j) === false), 'every Job was admitted in the end')
})

t.test('admission order: higher priority first, then the oldest; an unknown class counts 0', async t => {
  const sim = simulator(t, { kueue: { quota: 1 } })
  sim.apply(priorityClass('top', 1000))
  sim.apply(priorityClass('high', 100, 'v1beta2'))
  sim.apply(priorityClass('low', 10))
  sim.apply(queuedJob('first', 'top'))
  await sim.advance(1)
  const waiting = [['a', 'low'], ['b', undefined], ['c', 'high'], ['d', 'high'], ['e', 'nope']] as const
  for (const [name, priority] of waiting) {
    sim.apply(queuedJob(name, priority))
  }
  await sim.runUntilQuiet()
  t.same(events(sim, 'kueue-admitted'), ['first', 'c', 'd', 'a', 'b', 'e'])
  t.same(events(sim, 'kueue-preempted'), [], 'no Job admitted had a lower priority than one waiting')
  t.same(events(sim, 'job-succeeded'), ['first', 'c', 'd', 'a', 'b', 'e'])
})

t.test('a queued Job is created suspended, whoever creates it; one created running is suspended by the webhook',
  async t => {
    const sim = simulator(t, { kueue: { quota: 1 } })
    const job = queuedJob('hold')
    ;(job.spec as Record<string, unknown>).suspend = false
    sim.apply(queuedJob('run'))
    sim.apply(job)
    t.ok(suspended(sim.get(jobRef('hold'))), 'stored suspended')
    await sim.advance(1)
    t.same(admitted(sim), ['run'])
    t.match(sim.get(jobRef('hold'))?.status, { conditions: [{ type: 'Suspended', status: 'True' }] })
    t.equal((sim.get(jobRef('hold'))?.status as Record<string, unknown>).startTime, undefined, 'no pod ran')
  })

t.test('a preemption: the lowest-priority, latest-admitted step goes back to the queue, resumes when admitted ' +
  'again and finishes with its time left, using no retry', async t => {
  const sim = simulator(t, { kueue: { quota: 2 } })
  sim.apply(priorityClass('urgent', 1000))
  const flow = queuedFlow('nightly', 3)
  ;(flow.spec as { flows: Array<Record<string, unknown>> }).flows.forEach(f => { f.retry = { limit: 2 } })
  sim.apply(flow)
  await sim.advance(4)
  t.same(admitted(sim), ['nightly-step1', 'nightly-step2'])
  sim.apply(queuedJob('hotfix', 'urgent'))
  await sim.advance(0)
  const preempted = sim.timeline.find(e => e.type === 'kueue-preempted')
  t.match(preempted, {
    seconds: 4, object: { name: 'nightly-step2' }, owner: { name: 'nightly' }, message: 'for hotfix'
  })
  t.same(admitted(sim).sort(), ['hotfix', 'nightly-step1'])
  t.ok(suspended(sim.get(jobRef('nightly-step2'))), 'Kueue suspended it again')
  await sim.runUntilQuiet({ maxSteps: 5000 })
  const step2 = sim.timeline.filter(e => e.object.name === 'nightly-step2')
  // Metacontroller rewrites its last-applied annotation after each of Kueue's writes, and nothing else.
  t.same(step2.filter(e => e.type === 'updated').map(e => `${e.seconds}:${e.message ?? ''}`), ['0:', '4:', '10:'])
  t.same(step2.filter(e => e.type !== 'updated').map(e => `${e.type}@${e.seconds}`), [
    'created@0', 'kueue-admitted@0', 'job-started@0', 'kueue-preempted@4', 'job-suspended@4',
    'kueue-admitted@10', 'job-resumed@10', 'job-succeeded@16'
  ], '4 s before, 6 s after: its 10 s')
  t.same(events(sim, 'job-failed'), [])
  t.equal(new Set(events(sim, 'created')).size, events(sim, 'created').length, 'no Job created twice: no retry')
  t.match(sim.get(flowRef('nightly'))?.status, { phase: 'Succeeded', jobsSucceeded: '4/4' })
  const records = (sim.get(flowRef('nightly'))?.status as { jobs: Array<{ name: string }> }).jobs
  t.equal(records.filter(r => r.name === 'step2').length, 1, 'one attempt of step2')
})

t.test('Kueue undoes a write of spec.suspend that is not its own', async t => {
  const sim = simulator(t, { kueue: { quota: 1 } })
  sim.apply(queuedJob('a'))
  sim.apply(queuedJob('b'))
  await sim.advance(1)
  sim.edit(jobRef('b'), job => { (job.spec as Record<string, unknown>).suspend = false }, 'unsuspend b')
  sim.edit(jobRef('a'), job => { (job.spec as Record<string, unknown>).suspend = true }, 'suspend a')
  await sim.advance(0)
  t.same(events(sim, 'kueue-suspended'), ['b'], 'b is not admitted')
  t.same(events(sim, 'kueue-unsuspended'), ['a'], 'a is')
  t.same(admitted(sim), ['a'])
})

/** The timeline without its times' noise: what happened to what, when. */
function story (sim: Simulator): string[] {
  return sim.timeline.map(e => `${e.seconds} ${e.type} ${e.object.kind} ${e.object.name} ${e.message ?? ''}`)
}

t.test('Jobs without a queue name are untouched: the same story with a quota or without', async t => {
  const plain = simulator(t)
  const withKueue = simulator(t, { kueue: { quota: 1 } })
  for (const sim of [plain, withKueue]) {
    sim.apply(exampleJobFlow())
    const solo = { name: 'solo', namespace: 'default' }
    sim.apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: solo, spec: busyboxJobSpec('solo') })
    await sim.runUntilQuiet()
  }
  t.same(story(withKueue), story(plain))
  t.ok(story(plain).length > 10)
  const versions = (sim: Simulator): unknown[] => sim.listJobs().map(j => j.metadata.resourceVersion)
  t.same(versions(withKueue), versions(plain),
    'not one more write')
})

t.test('without a quota there is no Kueue: queued Jobs wait suspended, Kueue\'s objects are accepted', async t => {
  const sim = simulator(t)
  for (const kind of ['ResourceFlavor', 'ClusterQueue', 'WorkloadPriorityClass']) {
    sim.apply({ apiVersion: 'kueue.x-k8s.io/v1beta1', kind, metadata: { name: 'x' } })
  }
  const queue = { name: 'team-a' }
  sim.apply({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue', metadata: queue, spec: { clusterQueue: 'x' } })
  sim.apply(queuedFlow('waits', 2))
  sim.apply(queuedJob('unsuspended'))
  await sim.advance(60)
  t.ok(sim.isQuiet())
  t.same(sim.timeline.filter(e => e.type.startsWith('kueue-')), [])
  t.same(events(sim, 'job-succeeded'), ['unsuspended'], 'no webhook suspended it: nothing models Kueue')
  t.ok(['waits-step1', 'waits-step2'].every(name => suspended(sim.get(jobRef(name)))),
    'created suspended by the JobFlow')
  t.equal(sim.list({ apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'LocalQueue' }, 'default').length, 1)
})
