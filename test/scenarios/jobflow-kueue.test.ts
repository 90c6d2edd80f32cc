// manifests/examples/jobflow-kueue.yaml on the simulator's Kueue (`--kueue-quota 2`): its header's
// promise holds, two steps at most run at once, each Job is created once and only Kueue writes
// its spec.suspend; `--apply … --at` previews a preemption; without the quota the CLI says why
// the steps wait.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { main } from '../../src/cli/simulate.js'
import { parseSimulateArguments } from '../../src/cli/arguments.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { brokenPromises, examplePromises, exampleObjects, EXAMPLES_DIR } from '../helpers/example-promises.js'

const FILE = 'jobflow-kueue.yaml'
const MANIFEST = join(EXAMPLES_DIR, FILE)
const FLOW = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'jobflow-kueue' }

async function run (argv: string[]): Promise<{ code: number, out: string[], err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, line => out.push(line), line => err.push(line))
  return { code, out, err }
}

function suspended (job: KubeObject): boolean {
  return isRecord(job.spec) && job.spec.suspend === true
}

function complete (job: KubeObject): boolean {
  const conditions = isRecord(job.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []
  return conditions.some(c => isRecord(c) && c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'))
}

t.test('the example, as its header says to simulate it, ends as its kubectl get table promises', async t => {
  const promise = examplePromises().find(p => p.file === FILE)
  t.ok(promise, 'the example has a promise')
  if (promise === undefined) return
  t.same(promise.simulate, ['-f', `manifests/examples/${FILE}`, '--kueue-quota', '2'])
  const { code, out, err } = await run([MANIFEST, ...promise.simulate.slice(2), '--output', 'json'])
  t.equal(code, 0)
  t.same(err, [], 'no note: every object has its part, every queued Job was admitted')
  const object = JSON.parse(out.join('\n')).objects.find((o: { name: string }) => o.name === 'jobflow-kueue')
  t.same(brokenPromises(promise, object), [])
})

t.test('on the simulator: two steps at most at once, in the order created, each Job created once, ' +
  'spec.suspend written by Kueue only', async t => {
  const sim = new Simulator({
    controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 }, kueue: { quota: 2 }
  })
  t.teardown(async () => await sim.close())
  for (const object of exampleObjects(FILE)) sim.apply(object)
  let most = 0
  await sim.runUntil(s => {
    const running = s.listJobs().filter(j => !suspended(j) && !complete(j))
    most = Math.max(most, running.length)
    return (s.get(FLOW)?.status as { phase?: string } | undefined)?.phase === 'Succeeded'
  }, { maxSteps: 5000 })
  t.equal(most, 2)
  const created = sim.timeline.filter(e => e.type === 'created').map(e => e.object.name)
  t.same(created, [1, 2, 3, 4, 5, 6].map(i => `jobflow-kueue-shard-${i}`).concat('jobflow-kueue-merge'))
  t.same(sim.timeline.filter(e => e.type === 'kueue-admitted').map(e => e.object.name), created)
  t.same(sim.timeline.filter(e => e.type === 'updated').map(e => e.message), created.map(() => ''),
    'Metacontroller rewrote its annotation after each admission, and no field')
  t.equal(sim.seconds(), 40)
})

t.test('while it runs, as the header says: QUEUED counts 4, then 2, then none; a waiting step\'s record says why',
  async t => {
    const sim = new Simulator({
      controllers: [jobflowController('v2')], jobs: { durationSeconds: 10 }, kueue: { quota: 2 }
    })
    t.teardown(async () => await sim.close())
    for (const object of exampleObjects(FILE)) sim.apply(object)
    const status = (): { jobsQueued?: number, jobs: Array<{ phase: string, message?: string }> } =>
      sim.get(FLOW)?.status as { jobsQueued?: number, jobs: Array<{ phase: string, message?: string }> }
    await sim.advance(5)
    t.equal(status().jobsQueued, 4)
    t.match(status().jobs[2], { phase: 'Queued', message: 'waiting in queue jobflow-kueue for Kueue to admit it' })
    await sim.advance(10)
    t.equal(status().jobsQueued, 2)
    await sim.advance(10)
    t.equal(status().jobsQueued, undefined, 'none: the field is left out')
  })

t.test('--apply with --at previews a preemption: the step goes back to the queue and finishes, no retry', async t => {
  const dir = t.testdir({
    'hotfix.yaml': [
      { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'WorkloadPriorityClass', metadata: { name: 'urgent' }, value: 100 },
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: 'hotfix',
          labels: { 'kueue.x-k8s.io/queue-name': 'jobflow-kueue', 'kueue.x-k8s.io/priority-class': 'urgent' }
        },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] } } }
      }
    ].map(o => stringify(o)).join('---\n')
  })
  const hotfix = join(dir, 'hotfix.yaml')
  const { code, out, err } = await run([MANIFEST, '--kueue-quota', '2', '--apply', hotfix, '--at', '4'])
  t.equal(code, 0)
  t.same(err, [])
  t.match(out[0], /Kueue admits 2 Jobs at once, .*hotfix\.yaml applied at t=4s/)
  t.match(out.find(l => l.startsWith('t=4s ') && l.includes('jobflow-kueue ')),
    /kueue preempted jobflow-kueue-shard-2 for hotfix; .*suspended jobflow-kueue-shard-2/)
  t.match(out.find(l => l.startsWith('t=4s ') && l.includes('Job hotfix')),
    /applied; kueue admitted hotfix; started hotfix/)
  t.match(out.find(l => l.startsWith('t=10s ') && l.includes('jobflow-kueue ')),
    /kueue admitted jobflow-kueue-shard-2.*resumed jobflow-kueue-shard-2/)
  t.ok(out.some(l => l.startsWith('default/jobflow-kueue  Succeeded') && l.includes('(7/7 jobs succeeded)')))
  t.notOk(out.some(l => /created Jobs? [^;]*shard-2-2/.test(l)), 'no retry of shard-2')
  const early = await run([MANIFEST, '--kueue-quota', '2', '--apply', hotfix, '--at', '4', '--until', '7'])
  t.match(early.out.find(l => l.startsWith('  shard-2 ')), new RegExp('Queued .* preempted by Kueue: back in ' +
    'queue jobflow-kueue, waiting to be admitted again \\(no retry used\\)$'), 'the record says so while it waits')
})

t.test('without --kueue-quota the steps wait, and the CLI says why', async t => {
  const { code, out, err } = await run([MANIFEST, '--until', '60'])
  t.equal(code, 0)
  t.equal(out.find(l => l.startsWith('default/jobflow-kueue')),
    'default/jobflow-kueue  Pending (0/7 jobs succeeded, 6 queued, 1 pending)')
  t.same(err, [
    'simulate: note: ' + [1, 2, 3, 4, 5, 6].map(i => `jobflow-kueue-shard-${i}`).join(', ') +
      ' wait for Kueue, which is not simulated: --kueue-quota N admits N queued Jobs at once'
  ])
})

t.test('--kueue-quota and --apply on the command line', async t => {
  const args = parseSimulateArguments(['m.yaml', '--kueue-quota', '3', '--apply', 'b.yaml', '--apply', 'a.yaml',
    '--at', '20', '--set', 'spec.suspend=true', '--apply', 'c.yaml', '--at=5'])
  t.match(args, {
    kueueQuota: 3,
    applies: [{ file: 'c.yaml', at: 5 }, { file: 'b.yaml', at: 20 }, { file: 'a.yaml', at: 20 }],
    edits: [{ path: ['spec', 'suspend'], value: true, at: 5 }]
  })
  t.equal((parseSimulateArguments(['m.yaml']) as { kueueQuota?: number }).kueueQuota, undefined)
  t.throws(() => parseSimulateArguments(['m.yaml', '--kueue-quota', '0']), /--kueue-quota must be a whole number/)
  t.throws(() => parseSimulateArguments(['m.yaml', '--kueue-quota', '1.5']), /--kueue-quota must be a whole number/)
  t.throws(() => parseSimulateArguments(['m.yaml', '--apply', 'b.yaml']), /--apply b\.yaml has no --at after it/)
  t.throws(() => parseSimulateArguments(['m.yaml', '--at', '3']), /--at needs a --set or --apply before it/)
  const missing = await run([MANIFEST, '--apply', 'no-such-file.yaml', '--at', '3'])
  t.equal(missing.code, 1)
  t.match(missing.err, [/no-such-file\.yaml: no such file/])
})
