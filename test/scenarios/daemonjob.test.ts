// DaemonJob scenarios on the in-process Metacontroller: Nodes live in the simulated API server
// and reach the hook as related objects through the customize hook; the hooks run through the
// real HTTP app, Jobs run on a simulated clock, and every run must go quiet.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { Simulator, type HookVersion, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { daemonjobController, simNode } from '../../src/simulator/daemonjob.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import type { Job } from 'kubernetes-types/batch/v1.js'
import { objectAs } from '../helpers/objects.js'

const EXAMPLE_MANIFEST = fileURLToPath(new URL('../../manifests/examples/daemonjob.yaml', import.meta.url))
const NAME = 'daemonjob-example'
const ref: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'DaemonJob', namespace: 'default', name: NAME }
const jobName = (node: string): string => `${NAME}-${node}`

interface Tap {
  teardown: (fn: () => unknown) => void
}

function simulator (t: Tap, version: HookVersion = 'v2', options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [daemonjobController(version)], jobs: { durationSeconds: 30 }, ...options })
  t.teardown(async () => await sim.close())
  return sim
}

/** The example DaemonJob of the manifests, its exclude list naming node-1 and node-2 (with blanks). */
function example (): KubeObject {
  const found = loadManifest(EXAMPLE_MANIFEST).find(o => o.kind === 'DaemonJob')
  if (found === undefined) throw new Error(`${EXAMPLE_MANIFEST} has no DaemonJob`)
  ;(found.spec as Record<string, unknown>).excludeNodeList = 'node-1 , node-2'
  return found
}

/** Five nodes: node-1 and node-2 (to be excluded), node-3, node-4 cordoned, node-5 tainted. */
function fiveNodes (sim: Simulator): void {
  sim.apply(simNode('node-1'))
  sim.apply(simNode('node-2'))
  sim.apply(simNode('node-3'))
  sim.apply(simNode('node-4', { cordoned: true }))
  sim.apply(simNode('node-5', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }))
}

function status (sim: Simulator): Record<string, any> {
  const object = sim.get(ref)
  return isRecord(object?.status) ? object.status : {}
}

function createdJobs (sim: Simulator): string[] {
  return sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name)
}

/** Until the simulated Job controller started the Job `name`. */
function jobStarted (name: string) {
  return (sim: Simulator): boolean => sim.timeline.some(e => e.type === 'job-started' && e.object.name === name)
}

t.test(
  'five nodes, two excluded, one cordoned, one tainted: one Job; a node that joins gets one; Succeeded; a later ' +
    'node gets none',
  async t => {
    const sim = simulator(t)
    fiveNodes(sim)
    sim.apply(example())

    const first = await sim.reconcile(ref)
    t.ok(first.ok, first.error ?? 'the first reconcile succeeds')
    t.same(
      first.created.map(r => r.name),
      [jobName('node-3')],
      'exactly one Job, for node-3'
    )
    t.same(
      Object.keys(first.request?.related['Node.v1'] ?? {}),
      ['node-1', 'node-2', 'node-3', 'node-4', 'node-5'],
      'Nodes reach the hook, keyed by name'
    )

    const job = objectAs<Job>(
      sim.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: jobName('node-3') })
    )
    t.same(
      job.spec?.template.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
        ?.nodeSelectorTerms,
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-3'] }] }],
      'pinned by required node affinity'
    )
    t.equal(job.spec?.template.spec?.nodeName, undefined)
    t.match(job.metadata?.labels, { 'jobhooks.io/daemonjob': NAME, 'jobhooks.io/node': 'node-3', key1: 'value1' })

    await sim.runUntil(jobStarted(jobName('node-3')))
    t.match(status(sim), { phase: 'Running', desired: 1, active: 1 })
    await sim.advance(10)
    sim.apply(simNode('node-6'))
    await sim.runUntil(jobStarted(jobName('node-6')))
    const joined = sim.timeline.find(e => e.type === 'created' && e.object.name === jobName('node-6'))
    t.equal(joined?.seconds, 10, 'the new node got its Job as soon as it joined')
    t.match(status(sim), { phase: 'Running', desired: 2, active: 2 })

    await sim.runUntilQuiet()
    t.match(status(sim), {
      phase: 'Succeeded',
      desired: 2,
      active: 0,
      succeeded: 2,
      failed: 0,
      succeededNodes: ['node-3', 'node-6'],
      failedNodes: []
    })
    t.equal(sim.secondsAt(status(sim).completionTime), 40, 'done when the last Job finished')
    t.match(status(sim).conditions, [
      { type: 'Valid', status: 'True' },
      { type: 'Complete', status: 'True' }
    ])

    const writes = sim.statusWrites.get(`default/${NAME}`)
    sim.apply(simNode('node-7'))
    await sim.runUntilQuiet()
    t.same(createdJobs(sim), [jobName('node-3'), jobName('node-6')], 'node-7 came after the end: no Job')
    t.equal(status(sim).phase, 'Succeeded')
    t.equal(sim.statusWrites.get(`default/${NAME}`), writes, 'the node woke the DaemonJob but changed nothing')
    t.same(
      sim.timeline.filter(e => e.type === 'deleted'),
      [],
      'nothing deleted'
    )
    t.notOk(
      sim.timeline.some(e => e.type === 'sync-error'),
      'no sync error'
    )
  }
)

t.test('Continue: a failing node does not stop the others; Failed at the end; deleted Jobs are not re-run', async t => {
  const sim = simulator(t)
  fiveNodes(sim)
  sim.apply(simNode('node-6'))
  sim.setJobOutcome(jobName('node-6'), { result: 'fail', afterSeconds: 5 })
  const daemonJob = example()
  ;(daemonJob.spec as Record<string, unknown>).failurePolicy = 'Continue'
  sim.apply(daemonJob)
  await sim.runUntilQuiet()
  t.same(createdJobs(sim).sort(), [jobName('node-3'), jobName('node-6')])
  const s = status(sim)
  t.match(s, {
    phase: 'Failed',
    desired: 2,
    succeeded: 1,
    failed: 1,
    succeededNodes: ['node-3'],
    failedNodes: [{ name: 'node-6', jobName: jobName('node-6'), message: /BackoffLimitExceeded/ }]
  })
  t.equal(sim.secondsAt(s.completionTime), 30, 'it waited for node-3 to finish after node-6 failed')

  sim.deleteJob(jobName('node-3'))
  sim.deleteJob(jobName('node-6'))
  await sim.runUntilQuiet()
  t.same(
    createdJobs(sim).sort(),
    [jobName('node-3'), jobName('node-6')],
    'finished Jobs that disappear are not created again'
  )
  t.same(status(sim), s, 'the outcomes are remembered')
})

t.test('cordoning and tainting: a node that becomes eligible while it runs gets its Job', async t => {
  const sim = simulator(t)
  fiveNodes(sim)
  sim.apply(example())
  await sim.runUntil(jobStarted(jobName('node-3')))
  sim.edit({ apiVersion: 'v1', kind: 'Node', name: 'node-4' }, node => {
    node.spec = {}
  })
  await sim.runUntil(jobStarted(jobName('node-4')))
  await sim.runUntilQuiet()
  t.match(status(sim), { phase: 'Succeeded', desired: 2, succeeded: 2 })
})

t.test(
  'with v1 hooks Metacontroller sends a namespaced DaemonJob no Nodes: Pending, says why, creates nothing',
  async t => {
    const sim = simulator(t, 'v1')
    fiveNodes(sim)
    sim.apply(example())
    await sim.runUntilQuiet()
    t.same(createdJobs(sim), [])
    t.same(sim.lastReconcile(ref)?.request?.related, { 'Node.v1': {} })
    t.match(status(sim), {
      phase: 'Pending',
      desired: 0,
      message: /Metacontroller sent no Nodes \(related Node.v1 is empty/
    })
  }
)

t.test(
  "ttlSecondsAfterFinished: 0: every node's Job runs once, and the service deletes each once its outcome is in the " +
    'status, even for a sync handed an older DaemonJob',
  async t => {
    const sim = simulator(t)
    for (const node of ['node-a', 'node-b', 'node-c']) sim.apply(simNode(node))
    const daemonJob = example()
    const spec = daemonJob.spec as Record<string, unknown>
    delete spec.excludeNodeList
    spec.ttlSecondsAfterFinished = 0
    sim.apply(daemonJob)
    await sim.runUntil(s => s.timeline.some(e => e.type === 'job-succeeded' && e.object.name === jobName('node-a')))
    // node-a's Job finished; the DaemonJob does not hold its outcome yet.
    const older = sim.get(ref) as KubeObject
    t.notOk((status(sim).succeededNodes ?? []).includes('node-a'), 'not recorded yet')
    const recording = await sim.reconcile(ref)
    t.same(recording.deleted, [], 'the sync that records the outcome keeps the Job')
    t.ok(status(sim).succeededNodes.includes('node-a'))
    sim.handOlderParent(ref, older)
    const stale = await sim.reconcile(ref)
    t.same([stale.deleted, stale.created], [[], []], 'handed the older copy: nothing deleted, nothing created')
    t.ok(status(sim).succeededNodes.includes('node-a'), 'the outcome is derived again from the Job: no regression')
    await sim.runUntilQuiet()
    t.same(
      [...createdJobs(sim)].sort(),
      ['node-a', 'node-b', 'node-c'].map(jobName),
      "every node's Job created exactly once"
    )
    t.same(
      sim.timeline.filter(e => e.type === 'deleted' && e.object.kind === 'Job').map(e => e.cause),
      ['controller', 'controller', 'controller'],
      'each deleted by Metacontroller as a child the hook left out'
    )
    t.equal(status(sim).phase, 'Succeeded')
    t.same(status(sim).succeededNodes, ['node-a', 'node-b', 'node-c'])
    t.same(sim.listJobs(), [], 'no Job left')
  }
)
