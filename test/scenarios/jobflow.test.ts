// JobFlow scenarios on the in-process Metacontroller: the hooks run through the real HTTP app,
// Jobs run on a simulated clock, and every run must go quiet (a status that changes on every
// sync would make runUntilQuiet throw).
import t from 'tap'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { jobflowHooks } from '../../src/controllers/jobflow/index.js'
import type { KindHooks } from '../../src/protocol/hooks.js'
import { Simulator, type HookVersion, type SimulatorOptions } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import { exampleJobFlow, busyboxJobSpec, jobTemplate } from '../helpers/examples.js'
import { loadManifest } from '../../src/simulator/manifest.js'
import { condition } from '../helpers/conditions.js'
import { specOf, valueAt } from '../helpers/objects.js'
import type { ObjectRef } from '../../src/simulator/objects.js'

const EXAMPLE_MANIFEST = fileURLToPath(new URL('../../manifests/examples/jobflow.yaml', import.meta.url))
const FLOW = 'jobflow-example'
const flowRef = (name = FLOW): ObjectRef => ({
  apiVersion: JOBHOOKS_API_VERSION,
  kind: 'JobFlow',
  namespace: 'default',
  name
})
const jobName = (flow: string, name = FLOW): string => `${name}-${flow}`

/** The example JobFlow (and any JobTemplates) from the manifest when it exists, else built in code. */
function exampleObjects (): KubeObject[] {
  if (!existsSync(EXAMPLE_MANIFEST)) return [exampleJobFlow()]
  const objects = loadManifest(EXAMPLE_MANIFEST).filter(
    o => o.apiVersion === JOBHOOKS_API_VERSION && (o.kind === 'JobFlow' || o.kind === 'JobTemplate')
  )
  const flow = objects.find(o => o.kind === 'JobFlow' && o.metadata.name === FLOW)
  if (flow === undefined) throw new Error(`${EXAMPLE_MANIFEST} has no JobFlow ${FLOW}`)
  return objects.filter(o => o.kind === 'JobTemplate' || o === flow)
}

interface Tap {
  teardown: (fn: () => unknown) => void
}

function simulator (t: Tap, version: HookVersion = 'v2', options: Partial<SimulatorOptions> = {}): Simulator {
  const sim = new Simulator({ controllers: [jobflowController(version)], ...options })
  t.teardown(async () => await sim.close())
  return sim
}

function status (sim: Simulator, ref = flowRef()): Record<string, unknown> {
  const object = sim.get(ref)
  return isRecord(object?.status) ? object.status : {}
}

function jobRecords (sim: Simulator, ref = flowRef()): Map<string, Record<string, unknown>> {
  const jobs = status(sim, ref).jobs
  return new Map((Array.isArray(jobs) ? jobs.filter(isRecord) : []).map(j => [j.name as string, j]))
}

/** Job creations by simulated second: `{0: [job1, job4], 10: [job2], …}` with names sorted. */
function creationsBySecond (sim: Simulator): Record<number, string[]> {
  const out: Record<number, string[]> = {}
  for (const event of sim.timeline) {
    if (event.type === 'created' && event.object.kind === 'Job') (out[event.seconds] ??= []).push(event.object.name)
  }
  for (const names of Object.values(out)) names.sort()
  return out
}

function createdJobs (sim: Simulator): string[] {
  return sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name)
}

function jobStarted (name: string) {
  return (sim: Simulator): boolean => {
    const job = sim.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name })
    return isRecord(job?.status) && typeof job.status.startTime === 'string'
  }
}

function applyAll (sim: Simulator, objects: KubeObject[]): void {
  for (const object of objects) sim.apply(object)
}

for (const version of ['v2', 'v1'] as const) {
  t.test(`the example flow runs in dependency order and succeeds (hook ${version})`, async t => {
    const sim = simulator(t, version)
    const objects = exampleObjects()
    applyAll(sim, objects)
    const globals = (
      (objects.find(o => o.kind === 'JobFlow') as KubeObject).spec as { globalParams: Record<string, unknown> }
    ).globalParams

    const first = await sim.reconcile(flowRef())
    t.ok(first.ok, first.error ?? 'the first reconcile succeeds')
    t.same(
      first.created.map(r => r.name).sort(),
      [jobName('job1'), jobName('job4')],
      'the first reconcile creates job1 and job4 and nothing else'
    )
    t.same(first.deleted, [])
    t.equal(status(sim).phase, 'Pending')

    // The request is keyed the way Metacontroller keys it for this hook version.
    const key = version === 'v2' ? `default/${jobName('job1')}` : jobName('job1')
    await sim.reconcile(flowRef())
    const children = sim.lastReconcile(flowRef())?.request?.children ?? {}
    t.same(Object.keys(children).sort(), ['ConfigMap.v1', 'Job.batch/v1'], 'one group per child type, even when empty')
    t.ok(isRecord(children['Job.batch/v1']?.[key]), `Jobs keyed ${key}`)
    t.same(children['ConfigMap.v1'], {})

    await sim.runUntilQuiet()
    if (
      !t.same(
        creationsBySecond(sim),
        {
          0: [jobName('job1'), jobName('job4')],
          10: [jobName('job2')],
          20: [jobName('job3'), jobName('job5')]
        },
        'job1 and job4 first, then job2, then job3 and job5'
      )
    ) { t.comment(sim.timelineText()) }
    t.equal(createdJobs(sim).length, 5, 'every Job created once')
    t.same(
      sim.timeline.filter(e => e.type === 'deleted'),
      [],
      'nothing deleted'
    )

    const final = status(sim)
    t.equal(final.phase, 'Succeeded')
    t.equal(final.observedGeneration, 1)
    t.equal(final.startTime, '2026-01-01T00:00:00Z')
    t.equal(sim.secondsAt(final.completionTime as string), 30)
    const records = jobRecords(sim)
    t.same([...records.keys()].sort(), ['job1', 'job2', 'job3', 'job4', 'job5'])
    for (const [name, record] of records) {
      t.equal(record.phase, 'Succeeded', `${name} Succeeded`)
      t.equal(record.jobName, jobName(name))
      t.type(record.startTime, 'string', `${name} has a startTime`)
      t.type(record.completionTime, 'string', `${name} has a completionTime`)
    }
    t.equal(sim.secondsAt(records.get('job3')?.startTime as string), 20)
    t.equal(sim.secondsAt(records.get('job3')?.completionTime as string), 30)
    t.match(condition(status(sim), 'Valid'), { status: 'True' })
    t.match(condition(status(sim), 'Complete'), { status: 'True' })
    t.same(
      sim.timeline.filter(e => e.type === 'phase').map(e => e.phase),
      ['Pending', 'Running', 'Succeeded']
    )
    t.same(
      sim.timeline.filter(e => e.type === 'sync-error'),
      [],
      'no sync errors'
    )

    // The Jobs carry the flow's identity and the global params.
    const job = sim.get({
      apiVersion: 'batch/v1',
      kind: 'Job',
      namespace: 'default',
      name: jobName('job3')
    }) as KubeObject
    t.match(job.metadata.labels, {
      ...(globals.labels as object),
      'jobhooks.io/jobflow': FLOW,
      'jobhooks.io/flow': 'job3'
    })
    t.match(job.metadata.annotations, globals.annotations as object)
    t.match(job.metadata.ownerReferences, [{ kind: 'JobFlow', name: FLOW, controller: true }])
    t.match(job.spec, {
      template: {
        spec: {
          nodeName: globals.nodeName,
          restartPolicy: 'Never',
          containers: [
            {
              env: [
                { name: 'FOO', value: 'bar' },
                { name: 'QUE', value: 'pasa' }
              ]
            }
          ]
        }
      }
    })
  })
}

t.test('the http app and the direct call give the same run', async t => {
  const runs: unknown[] = []
  for (const transport of ['http', 'direct'] as const) {
    const sim = simulator(t, 'v2', { transport })
    applyAll(sim, exampleObjects())
    await sim.runUntilQuiet()
    runs.push({ status: status(sim), timeline: sim.timeline })
  }
  t.same(runs[0], runs[1])
})

t.test('a failing job2: job3 and job5 never start, job4 finishes, the flow fails', async t => {
  const sim = simulator(t, 'v2', {
    jobs: { outcomes: { job2: 'fail', job4: { result: 'succeed', afterSeconds: 30 } } }
  })
  applyAll(sim, exampleObjects())

  await sim.runUntil(s => s.timeline.some(e => e.type === 'job-failed'))
  t.equal(sim.seconds(), 20, 'job2 fails at t=20s')
  await sim.advance(5)
  t.equal(status(sim).phase, 'Running', 'still Running at t=25s while job4 runs')
  t.equal(jobRecords(sim).get('job2')?.phase, 'Failed')

  await sim.runUntilQuiet()
  if (
    !t.same(createdJobs(sim).sort(), [jobName('job1'), jobName('job2'), jobName('job4')], 'no Job after the failure')
  ) {
    t.comment(sim.timelineText())
  }
  const records = jobRecords(sim)
  t.equal(records.get('job4')?.phase, 'Succeeded', 'job4 still finishes')
  t.equal(sim.secondsAt(records.get('job4')?.completionTime as string), 30)
  t.equal(records.get('job2')?.phase, 'Failed')
  t.match(records.get('job2')?.message, /BackoffLimitExceeded/)
  t.equal(records.get('job3')?.phase, 'Skipped')
  t.equal(records.get('job5')?.phase, 'Skipped')
  t.equal(status(sim).phase, 'Failed')
  t.equal(sim.secondsAt(status(sim).completionTime as string), 30, 'finished when the last running Job did')
  t.match(condition(status(sim), 'Failed'), { status: 'True' })
  t.equal(condition(status(sim), 'Complete'), undefined)
  t.same(
    sim.timeline.filter(e => e.type === 'deleted'),
    [],
    'the failed Job is kept'
  )
})

t.test('a finished Job deleted by hand is not run again', async t => {
  const sim = simulator(t)
  applyAll(sim, exampleObjects())
  await sim.runUntil(jobStarted(jobName('job2')))
  const before = jobRecords(sim).get('job1')
  t.equal(before?.phase, 'Succeeded')

  t.ok(sim.deleteJob(jobName('job1')), 'job1 deleted while job2 runs')
  await sim.runUntilQuiet()

  if (!t.equal(createdJobs(sim).filter(n => n === jobName('job1')).length, 1, 'job1 created once')) {
    t.comment(sim.timelineText())
  }
  t.equal(
    sim.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: jobName('job1') }),
    undefined,
    'job1 stays gone'
  )
  t.same(jobRecords(sim).get('job1'), before, 'its record stays as it was')
  t.equal(status(sim).phase, 'Succeeded')
  t.same(
    [...jobRecords(sim).values()].map(r => r.phase),
    ['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']
  )
})

/** The example with `ttlSecondsAfterFinished` set on every flow's Job template. */
function exampleWithTtl (seconds: number): KubeObject[] {
  return exampleObjects().map(object => {
    if (object.kind !== 'JobFlow') return object
    const copy = structuredClone(object)
    for (const flow of (copy.spec as { flows: Array<{ jobTemplate?: Record<string, unknown> }> }).flows) {
      if (flow.jobTemplate !== undefined) flow.jobTemplate.ttlSecondsAfterFinished = seconds
    }
    return copy
  })
}

const jobRef = (name: string): ObjectRef => ({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name })

/** The Job's success is decided: SuccessCriteriaMet (Kubernetes ≥ 1.31 writes it before Complete) or Complete. */
function jobFinished (name: string, types = ['SuccessCriteriaMet', 'Complete']) {
  return (sim: Simulator): boolean => {
    const job = sim.get(jobRef(name))
    const conditions = isRecord(job?.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []
    return conditions.some(c => isRecord(c) && types.includes(c.type as string) && c.status === 'True')
  }
}

for (const seconds of [0, 30]) {
  t.test(
    `ttlSecondsAfterFinished: ${seconds} on every Job: each runs once, ` +
      'and the service deletes it once its outcome is in the status',
    async t => {
      const sim = simulator(t)
      applyAll(sim, exampleWithTtl(seconds))
      await sim.runUntilQuiet()
      const created = createdJobs(sim)
      t.same(
        [...created].sort(),
        ['job1', 'job2', 'job3', 'job4', 'job5'].map(f => jobName(f)),
        'every Job created exactly once'
      )
      t.equal(status(sim).phase, 'Succeeded')
      t.same(
        [...jobRecords(sim).values()].map(r => r.phase),
        ['Succeeded', 'Succeeded', 'Succeeded', 'Succeeded', 'Succeeded']
      )
      const deletions = sim.timeline.filter(e => e.type === 'deleted' && e.object.kind === 'Job')
      t.same(
        deletions.map(e => e.cause),
        created.map(() => 'controller'),
        "each deleted by Metacontroller, as a child the hook left out; none by Kubernetes' TTL controller"
      )
      for (const name of created) {
        const finished = sim.timeline.find(e => e.type === 'job-succeeded' && e.object.name === name)?.seconds ?? NaN
        const deleted = deletions.find(e => e.object.name === name)?.seconds ?? NaN
        t.equal(deleted - finished, seconds, `${name} deleted ${seconds} s after it finished`)
      }
      t.same(sim.listJobs(), [], 'no Job left')
    }
  )
}

t.test(
  'the Jobs the hook creates carry the TTL as a label, never in their spec (so the Job controller cannot delete ' +
    'them first)',
  async t => {
    const sim = simulator(t)
    applyAll(sim, exampleWithTtl(0))
    await sim.reconcile(flowRef())
    const job = sim.get(jobRef(jobName('job1')))
    t.equal(isRecord(job?.spec) ? job.spec.ttlSecondsAfterFinished : 'no spec', undefined)
    t.equal(job?.metadata.labels?.['jobhooks.io/ttl-seconds-after-finished'], '0')
  }
)

t.test(
  'a sync handed an older JobFlow (before the write that recorded job1) keeps job1, regresses nothing, and the Job ' +
    'is deleted once, later',
  async t => {
    // Complete is the first condition the hook sees here, as before Kubernetes 1.31: the TTL counts
    // from Complete, so the race is that of a Job deletable as soon as its outcome is recorded.
    const sim = simulator(t, 'v2', { jobs: { interimConditions: false } })
    applyAll(sim, exampleWithTtl(0))
    await sim.runUntil(jobFinished(jobName('job1'), ['Complete']))
    // job1 just finished; the JobFlow as it is now does not hold its outcome yet.
    const older = sim.get(flowRef()) as KubeObject
    t.equal(jobRecords(sim).get('job1')?.phase, 'Running', 'not recorded yet')
    const recording = await sim.reconcile(flowRef())
    t.same(recording.deleted, [], 'the sync that records the outcome keeps the Job')
    t.equal(jobRecords(sim).get('job1')?.phase, 'Succeeded')
    const recorded = jobRecords(sim).get('job1')

    sim.handOlderParent(flowRef(), older)
    const stale = await sim.reconcile(flowRef())
    t.same(stale.deleted, [], 'handed the older copy, the hook does not see the outcome there: job1 stays')
    t.same(stale.created, [], 'and nothing is created twice')
    t.same(jobRecords(sim).get('job1'), recorded, 'the record is derived again from the Job: no regression')

    const next = await sim.reconcile(flowRef())
    t.same(
      next.deleted.map(r => r.name),
      [jobName('job1')],
      'the next sync sees the record and deletes job1'
    )
    sim.handOlderParent(flowRef(), sim.get(flowRef()) as KubeObject)
    await sim.runUntilQuiet()
    t.same(
      [...createdJobs(sim)].sort(),
      ['job1', 'job2', 'job3', 'job4', 'job5'].map(f => jobName(f)),
      'every Job created exactly once'
    )
    t.equal(status(sim).phase, 'Succeeded')
  }
)

t.test(
  'why the service applies the TTL: with the TTL left to Kubernetes and a sync handed the JobFlow from before the ' +
    'record, job1 would run twice',
  async t => {
    // The same moment as above, with the Job deleted by Kubernetes' TTL controller right after it
    // finished (before any sync saw the record) — what a Job deleted by hand at that moment is too:
    // treated as never finished, and created again (docs/jobflow.md, "What a JobFlow remembers").
    const sim = simulator(t)
    applyAll(sim, exampleObjects())
    await sim.runUntil(jobFinished(jobName('job1')))
    const older = sim.get(flowRef()) as KubeObject
    await sim.reconcile(flowRef())
    t.ok(sim.deleteJob(jobName('job1')), 'job1 deleted right after it finished')
    sim.handOlderParent(flowRef(), older)
    const stale = await sim.reconcile(flowRef())
    t.same(
      stale.created.map(r => r.name),
      [jobName('job1')],
      'the older copy holds no outcome and the Job is gone: created again'
    )
  }
)

t.test('an edit that adds a cycle keeps every child; fixing it resumes', async t => {
  const sim = simulator(t)
  applyAll(sim, exampleObjects())
  await sim.runUntil(jobStarted(jobName('job2')))
  const setJob1Dependencies = (dependencies: string[] | undefined) => (object: KubeObject) => {
    const flows = (object.spec as { flows: Array<Record<string, unknown>> }).flows
    const job1 = flows.find(f => f.name === 'job1') as Record<string, unknown>
    if (dependencies === undefined) delete job1.dependencies
    else job1.dependencies = dependencies
  }

  sim.edit(flowRef(), setJob1Dependencies(['job3']))
  await sim.runUntilQuiet()
  t.same(
    sim.timeline.filter(e => e.type === 'deleted'),
    [],
    'no child deleted'
  )
  t.same(
    sim.listJobs('default').map(j => j.metadata.name),
    [jobName('job1'), jobName('job2'), jobName('job4')],
    'every Job kept, none created'
  )
  t.equal(status(sim).phase, 'Invalid')
  t.equal(status(sim).observedGeneration, 2)
  const valid = condition(status(sim), 'Valid')
  t.match(valid, { status: 'False', message: /cycle/ })
  t.match(valid?.message, /job1/)
  t.match(valid?.message, /job3/)
  t.equal(jobRecords(sim).get('job2')?.phase, 'Succeeded', 'a Job that finishes meanwhile is remembered')
  t.equal(sim.seconds(), 20)

  await sim.advance(60)
  sim.edit(flowRef(), setJob1Dependencies(undefined))
  await sim.runUntilQuiet()
  if (
    !t.same(
      creationsBySecond(sim)[80],
      [jobName('job3'), jobName('job5')],
      'job3 and job5 start once the spec is fixed'
    )
  ) {
    t.comment(sim.timelineText())
  }
  t.equal(status(sim).phase, 'Succeeded')
  t.equal(status(sim).observedGeneration, 3)
  t.match(condition(status(sim), 'Valid'), { status: 'True' })
  t.same(
    sim.timeline.filter(e => e.type === 'phase').map(e => e.phase),
    ['Pending', 'Running', 'Invalid', 'Running', 'Succeeded']
  )
})

for (const version of ['v2', 'v1'] as const) {
  t.test(`a flow with jobTemplateRef waits for its JobTemplate (hook ${version})`, async t => {
    const sim = simulator(t, version)
    const name = 'jobflow-ref'
    sim.apply({
      apiVersion: JOBHOOKS_API_VERSION,
      kind: 'JobFlow',
      metadata: { name, namespace: 'default' },
      spec: {
        flows: [
          { name: 'prepare', jobTemplate: busyboxJobSpec('prepare') },
          { name: 'main', dependencies: ['prepare'], jobTemplateRef: 'shared-step' }
        ]
      }
    })
    // A JobTemplate of the same name elsewhere does not count.
    sim.apply(jobTemplate('shared-step', 'other'))
    // While it waits, the hook asks for a resync every 5 minutes, so the system is never quiet.
    await sim.advance(60)
    t.equal(status(sim, flowRef(name)).phase, 'Invalid')
    t.match(condition(status(sim, flowRef(name)), 'Valid'), {
      status: 'False',
      message: /JobTemplate "shared-step" not found/
    })
    t.equal(sim.lastReconcile(flowRef(name))?.resyncAfterSeconds, 300)
    t.same(sim.listJobs(), [], 'nothing runs while the spec is invalid')

    sim.apply(jobTemplate('shared-step'))
    await sim.runUntilQuiet()
    const related = sim.lastReconcile(flowRef(name))?.request?.related ?? {}
    t.ok(
      isRecord(related['JobTemplate.jobhooks.io/v1alpha1']?.[version === 'v2' ? 'default/shared-step' : 'shared-step']),
      'the JobTemplate is related, keyed by hook version'
    )
    if (
      !t.same(
        creationsBySecond(sim),
        { 60: [`${name}-prepare`], 70: [`${name}-main`] },
        'prepare once the JobTemplate exists, then main'
      )
    ) {
      t.comment(sim.timelineText())
    }
    const job = sim.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: `${name}-main` })
    t.match(job?.metadata.labels, { 'jobhooks.io/job-template': 'shared-step' })
    t.equal(status(sim, flowRef(name)).phase, 'Succeeded')
    t.match(condition(status(sim, flowRef(name)), 'Valid'), { status: 'True' })
  })
}

t.test('a JobTemplate created after Metacontroller forgot what we asked for is still found', async t => {
  const sim = simulator(t)
  const name = 'jobflow-late'
  sim.apply({
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name, namespace: 'default' },
    spec: { flows: [{ name: 'main', jobTemplateRef: 'late-step' }] }
  })
  // Past the 20-minute customize cache: the JobTemplate's informer no longer wakes the JobFlow.
  await sim.advance(45 * 60)
  t.equal(status(sim, flowRef(name)).phase, 'Invalid')
  sim.apply(jobTemplate('late-step'))
  await sim.runUntil(s => status(s, flowRef(name)).phase === 'Succeeded')
  const created = Object.keys(creationsBySecond(sim)).map(Number)
  t.equal(created.length, 1)
  t.ok(
    (created[0] as number) - 45 * 60 <= 300,
    `created ${(created[0] as number) - 45 * 60}s after the JobTemplate, within one resync`
  )
})

t.test('a quiet system stays quiet: a further reconcile writes no status', async t => {
  const sim = simulator(t)
  applyAll(sim, exampleObjects())
  await sim.runUntilQuiet()
  t.ok(sim.isQuiet())
  const writes = sim.statusWrites.get(`default/${FLOW}`)
  const before = sim.get(flowRef())

  const again = await sim.reconcile(flowRef())
  t.ok(again.ok)
  t.notOk(again.statusChanged, `no status change: ${again.statusDiff.join(', ')}`)
  t.same(
    [again.created, again.deleted, again.drift, again.updated, again.conflicts],
    [[], [], [], [], []],
    'children untouched and as desired, none written'
  )

  // An hour later, still nothing to write (no time is recomputed), and the answer is identical.
  await sim.advance(3600)
  const later = await sim.reconcile(flowRef())
  t.notOk(later.statusChanged, `no status change an hour later: ${later.statusDiff.join(', ')}`)
  t.same(later.response, again.response, 'the same answer')
  t.equal(sim.statusWrites.get(`default/${FLOW}`), writes)
  t.same(sim.get(flowRef()), before, 'the JobFlow is byte for byte the same')
  t.ok(sim.isQuiet())
})

t.test('runUntilQuiet names a status that changes on every sync', async t => {
  const restless: KindHooks = {
    ...jobflowHooks,
    sync: (request, context) => {
      const { response } = jobflowHooks.sync(request, context)
      const previous = isRecord(request.parent.status) ? request.parent.status.syncs : undefined
      return {
        response: {
          ...response,
          status: { ...response.status, syncs: (typeof previous === 'number' ? previous : 0) + 1 }
        },
        effects: []
      }
    }
  }
  const sim = new Simulator({ controllers: [{ ...jobflowController(), hooks: restless }], transport: 'direct' })
  t.teardown(async () => await sim.close())
  applyAll(sim, exampleObjects())
  await t.rejects(
    sim.runUntilQuiet({ maxSteps: 50 }),
    /not quiet after 50 steps[\s\S]*JobFlow default\/jobflow-example[\s\S]*status\.syncs/
  )
})

t.test('deleting the JobFlow deletes its Jobs', async t => {
  const sim = simulator(t)
  applyAll(sim, exampleObjects())
  await sim.runUntil(jobStarted(jobName('job2')))
  t.ok(sim.delete(flowRef()))
  await sim.runUntilQuiet()
  t.same(sim.listJobs(), [])
  t.same(
    sim.timeline
      .filter(e => e.type === 'deleted' && e.cause === 'garbage-collector' && e.object.kind === 'Job')
      .map(e => e.object.name)
      .sort(),
    [jobName('job1'), jobName('job2'), jobName('job4')]
  )
})

t.test(
  'spec.ttlSecondsAfterFinished: the finished JobFlow deletes itself that long after it finished, and its Jobs go ' +
    'with it',
  async t => {
    for (const ttl of [0, 60]) {
      const sim = simulator(t)
      const [flow, ...rest] = exampleObjects().sort((a, b) =>
        a.kind === 'JobFlow' ? -1 : b.kind === 'JobFlow' ? 1 : 0
      )
      applyAll(sim, [{ ...(flow as KubeObject), spec: { ...specOf(flow), ttlSecondsAfterFinished: ttl } }, ...rest])
      await sim.runUntilQuiet()
      const self = sim.timeline.find(e => e.type === 'deleted' && e.object.kind === 'JobFlow')
      t.equal(self?.cause, 'effect', `TTL ${ttl}: deleted by the service's effect`)
      t.equal(self?.seconds, 30 + ttl, `TTL ${ttl}: ${ttl} s after it finished at t=30s`)
      t.same(
        sim.effects.log.filter(e => e.effect.type === 'Delete').map(e => [e.effect.target.kind, e.result]),
        [['JobFlow', 'applied']],
        'one Delete, of itself'
      )
      t.same(sim.listJobs(), [], 'its Jobs garbage-collected')
      t.equal(createdJobs(sim).length, 5, 'every Job ran once')
    }
  }
)

t.test('a JobFlow without a TTL, or with an invalid spec, never deletes itself', async t => {
  const sim = simulator(t)
  applyAll(sim, exampleObjects())
  await sim.runUntilQuiet()
  sim.edit(flowRef(), object => {
    specOf(object).ttlSecondsAfterFinished = 0
    specOf<{ flows: Array<Record<string, unknown>> }>(object).flows[0]!.dependencies = ['job5']
  })
  await sim.runUntilQuiet()
  t.equal(
    condition(status(sim), 'Valid')?.status,
    'False',
    'a cycle makes the spec invalid (a finished flow keeps its phase)'
  )
  t.ok(sim.get(flowRef()), 'the JobFlow is still there')
  t.same(sim.effects.log, [], 'no effect at all')
})

t.test(
  'failurePolicy Continue: a failure skips only its dependants; the rest runs; the flow ends Failed naming both',
  async t => {
    const run = async (policy?: string): Promise<Simulator> => {
      const sim = simulator(t, 'v2', {
        jobs: { durationSeconds: 10, outcomes: { [jobName('job4')]: { result: 'fail', afterSeconds: 5 } } }
      })
      const [flow, ...rest] = exampleObjects().sort((a, b) =>
        a.kind === 'JobFlow' ? -1 : b.kind === 'JobFlow' ? 1 : 0
      )
      applyAll(sim, [
        {
          ...(flow as KubeObject),
          spec: { ...specOf(flow), ...(policy !== undefined ? { failurePolicy: policy } : {}) }
        },
        ...rest
      ])
      await sim.runUntilQuiet()
      return sim
    }
    const phases = (sim: Simulator): Record<string, unknown> =>
      Object.fromEntries([...jobRecords(sim)].map(([name, r]) => [name, r.phase]))

    const failFast = await run()
    t.same(
      phases(failFast),
      { job1: 'Succeeded', job2: 'Skipped', job3: 'Skipped', job4: 'Failed', job5: 'Skipped' },
      'FailFast (the default): job4 fails at 5 s, job1 succeeds at 10 s, nothing starts after'
    )

    const sim = await run('Continue')
    t.same(
      phases(sim),
      { job1: 'Succeeded', job2: 'Succeeded', job3: 'Succeeded', job4: 'Failed', job5: 'Skipped' },
      'Continue: job2 and job3 do not depend on job4 and run'
    )
    t.equal(status(sim).phase, 'Failed', 'Failed once nothing more can run')
    t.equal(
      creationsBySecond(sim)[20]?.join(','),
      jobName('job3'),
      'job3 starts after job2, as in a flow without failure'
    )
    t.match(jobRecords(sim).get('job5')?.message, 'not started: depends on job4 (failed)')
    t.match(condition(status(sim), 'Failed')?.message, /^job4: .*; skipped because of them: job5$/)
    t.equal(
      status(sim).completionTime,
      sim
        .now()
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
      'finished when job3 did, not when job4 failed'
    )
  }
)

t.test('failurePolicy Continue: a skip passes down the graph', async t => {
  const sim = simulator(t, 'v2', { jobs: { durationSeconds: 10, outcomes: { [jobName('job1')]: 'fail' } } })
  const [flow] = exampleObjects().filter(o => o.kind === 'JobFlow')
  applyAll(sim, [{ ...(flow as KubeObject), spec: { ...specOf(flow), failurePolicy: 'Continue' } }])
  await sim.runUntilQuiet()
  t.same(Object.fromEntries([...jobRecords(sim)].map(([name, r]) => [name, [r.phase, r.message ?? '']])), {
    job1: ['Failed', 'BackoffLimitExceeded: Job has reached the specified backoff limit'],
    job2: ['Skipped', 'not started: depends on job1 (failed)'],
    job3: ['Skipped', 'not started: depends on job1 (failed), job2 (skipped)'],
    job4: ['Succeeded', ''],
    job5: ['Skipped', 'not started: depends on job2 (skipped)']
  })
})

/** A build, a publish that runs when it succeeded, a notify that runs when it failed, and a flow after publish. */
function branchingFlow (): KubeObject {
  const job = (name: string): Record<string, unknown> => ({
    template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['echo', name] }] } }
  })
  return {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: 'branches' },
    spec: {
      flows: [
        { name: 'build', jobTemplate: job('build') },
        {
          name: 'publish',
          dependencies: ['build'],
          when: "flows.build.phase == 'Succeeded'",
          jobTemplate: job('publish')
        },
        { name: 'notify', dependencies: ['build'], when: "flows.build.phase == 'Failed'", jobTemplate: job('notify') },
        { name: 'announce', dependencies: ['publish'], jobTemplate: job('announce') }
      ]
    }
  }
}

t.test(
  'flows[].when: the branch that holds runs, the other is Skipped with its reason; a flow skipped by its when does ' +
    'not fail the JobFlow',
  async t => {
    const ref = flowRef('branches')
    const ok = simulator(t)
    ok.apply(branchingFlow())
    await ok.runUntilQuiet()
    t.same(Object.fromEntries([...jobRecords(ok, ref)].map(([n, r]) => [n, r.phase])), {
      build: 'Succeeded',
      publish: 'Succeeded',
      notify: 'Skipped',
      announce: 'Succeeded'
    })
    t.equal(jobRecords(ok, ref).get('notify')?.message, "skipped: its when is false: flows.build.phase == 'Failed'")
    t.equal(status(ok, ref).phase, 'Succeeded', 'Succeeded: the skipped branch was not needed')
    t.equal(condition(status(ok, ref), 'Complete')?.message, '3 of 4 jobs succeeded, 1 skipped by their when')

    const failing = simulator(t, 'v2', { jobs: { durationSeconds: 10, outcomes: { 'branches-build': 'fail' } } })
    failing.apply(branchingFlow())
    await failing.runUntilQuiet()
    t.same(
      Object.fromEntries([...jobRecords(failing, ref)].map(([n, r]) => [n, r.phase])),
      { build: 'Failed', publish: 'Skipped', notify: 'Succeeded', announce: 'Succeeded' },
      "Argo's rule: announce follows publish, which its own when skipped: it runs; notify handles the failure"
    )
    t.equal(status(failing, ref).phase, 'Succeeded', 'every leaf ran and succeeded: the failure was handled')
    t.equal(
      condition(status(failing, ref), 'Complete')?.message,
      '2 of 4 jobs succeeded, 1 skipped, 1 failed and handled by the steps after them'
    )

    const strict = branchingFlow()
    const announce = specOf<{ flows: Array<Record<string, unknown>> }>(strict).flows[3] as Record<string, unknown>
    delete announce.dependencies
    announce.depends = 'publish.Succeeded'
    const omitted = simulator(t, 'v2', { jobs: { durationSeconds: 10, outcomes: { 'branches-build': 'fail' } } })
    omitted.apply(strict)
    await omitted.runUntilQuiet()
    t.same(
      Object.fromEntries([...jobRecords(omitted, ref)].map(([n, r]) => [n, r.phase])),
      { build: 'Failed', publish: 'Skipped', notify: 'Succeeded', announce: 'Skipped' },
      'depends: publish.Succeeded does not hold'
    )
    t.equal(jobRecords(omitted, ref).get('announce')?.message, 'not started: its depends is false: publish.Succeeded')
    t.equal(status(omitted, ref).phase, 'Failed', 'the leaf announce did not run, below the failed build')
    t.match(
      condition(status(omitted, ref), 'Failed')?.message,
      /^build: .*; skipped because of them: announce$/,
      'publish is not counted: its own when skipped it'
    )
  }
)

t.test(
  'flows[].when under Continue: a flow without a when after a when-skipped one runs; a bad when makes the ' +
    'spec Invalid and deletes nothing',
  async t => {
    const ref = flowRef('branches')
    const sim = simulator(t)
    const flow = branchingFlow()
    specOf(flow).failurePolicy = 'Continue'
    specOf<{ flows: Array<Record<string, unknown>> }>(flow).flows[1]!.when = "flows.build.phase == 'Failed'"
    sim.apply(flow)
    await sim.runUntilQuiet()
    t.same(Object.fromEntries([...jobRecords(sim, ref)].map(([n, r]) => [n, [r.phase, r.message ?? '']])), {
      build: ['Succeeded', ''],
      publish: ['Skipped', "skipped: its when is false: flows.build.phase == 'Failed'"],
      notify: ['Skipped', "skipped: its when is false: flows.build.phase == 'Failed'"],
      announce: ['Succeeded', '']
    }, "Argo's rule: a dependency its own when skipped lets its dependants run")
    t.equal(status(sim, ref).phase, 'Succeeded')

    const bad = simulator(t)
    const running = branchingFlow()
    bad.apply(running)
    await bad.runUntil(jobStarted('branches-build'))
    bad.edit(ref, object => {
      specOf<{ flows: Array<Record<string, unknown>> }>(object).flows[2]!.when = "flows.deploy.phase == 'Failed'"
    })
    await bad.runUntilQuiet()
    t.equal(status(bad, ref).phase, 'Invalid')
    t.match(
      condition(status(bad, ref), 'Valid')?.message,
      /flow "notify": when reads flows.deploy, which is not a dependency/
    )
    t.ok(
      bad.listJobs().some(j => j.metadata.name === 'branches-build'),
      'the running Job is kept'
    )
  }
)

/** The example with `edit` applied to flow `name` of the JobFlow's spec, and to the spec itself. */
function exampleWith (
  flowEdits: Record<string, Record<string, unknown>>,
  specEdit: Record<string, unknown> = {}
): KubeObject[] {
  return exampleObjects().map(object => {
    if (object.kind !== 'JobFlow') return object
    const copy = structuredClone(object)
    const spec = copy.spec as { flows: Array<Record<string, unknown>> }
    spec.flows = spec.flows.map(f => ({ ...f, ...flowEdits[f.name as string] }))
    Object.assign(spec, specEdit)
    return copy
  })
}

/** Every record of `flow` in status.jobs, attempt by attempt. */
function attempts (sim: Simulator, flow: string): Array<Record<string, unknown>> {
  const jobs = status(sim).jobs
  return (Array.isArray(jobs) ? jobs.filter(isRecord) : []).filter(j => j.name === flow)
}

t.test(
  'flows[].retry: a failed Job is tried again as a new Job after the backoff; the status keeps both attempts and ' +
    'the flow follows the last',
  async t => {
    const sim = simulator(t, 'v2', { jobs: { outcomes: { [jobName('job2')]: 'fail' } } })
    applyAll(sim, exampleWith({ job2: { retry: { limit: 2, backoffSeconds: 15 } } }))
    await sim.runUntilQuiet()

    if (
      !t.same(
        creationsBySecond(sim),
        {
          0: [jobName('job1'), jobName('job4')],
          10: [jobName('job2')],
          35: [jobName('job2-2')],
          45: [jobName('job3'), jobName('job5')]
        },
        'job2 fails at 20 s; its second attempt starts 15 s later; job3 and job5 wait for it'
      )
    ) {
      t.comment(sim.timelineText())
    }
    const job2 = attempts(sim, 'job2')
    t.match(
      job2,
      [
        { jobName: jobName('job2'), phase: 'Failed', message: /BackoffLimitExceeded/ },
        { jobName: jobName('job2-2'), phase: 'Succeeded', attempt: 2 }
      ],
      "both attempts, with the first one's failure reason"
    )
    t.equal(sim.secondsAt(job2[0]?.completionTime as string), 20)
    t.equal(sim.secondsAt(job2[1]?.startTime as string), 35)
    t.notOk('attempt' in (job2[0] as object), 'the first attempt reads as every record did before retries')
    t.equal(status(sim).phase, 'Succeeded')
    t.equal(status(sim).jobsSucceeded, '5/5', 'JOBS counts flows, not attempts')
    t.equal(
      sim.get({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: jobName('job2') })?.metadata.name,
      jobName('job2'),
      "the failed attempt's Job is kept, to read its logs"
    )
  }
)

t.test(
  'flows[].retry: the backoff doubles up to maxBackoffSeconds; once the retries are spent the flow fails as before',
  async t => {
    const sim = simulator(t, 'v2', { jobs: { outcomes: { job2: 'fail' } } })
    applyAll(sim, exampleWith({ job2: { retry: { limit: 3, backoffSeconds: 10, maxBackoffSeconds: 15 } } }))

    await sim.runUntil(s => attempts(s, 'job2').length === 2)
    t.match(
      attempts(sim, 'job2')[1],
      {
        jobName: jobName('job2-2'),
        phase: 'Pending',
        attempt: 2,
        message: /^retry 1 of 3 starts at .* after the backoff$/
      },
      'waiting out the backoff, in the open'
    )
    t.equal(status(sim).phase, 'Running', 'a failure with retries left does not end the flow')
    await sim.runUntilQuiet()

    const created = creationsBySecond(sim)
    t.same(
      Object.entries(created)
        .filter(([, names]) => names.some(n => n.startsWith(jobName('job2'))))
        .map(([s, names]) => `${s}:${names.join(',')}`),
      [`10:${jobName('job2')}`, `30:${jobName('job2-2')}`, `55:${jobName('job2-3')}`, `80:${jobName('job2-4')}`],
      'waits of 10, 15 (not 20: the cap) and 15 s after failures at 20, 40 and 65 s'
    )
    t.same(
      attempts(sim, 'job2').map(r => r.phase),
      ['Failed', 'Failed', 'Failed', 'Failed']
    )
    t.equal(status(sim).phase, 'Failed')
    t.same(Object.fromEntries([...jobRecords(sim)].map(([n, r]) => [n, r.phase])), {
      job1: 'Succeeded',
      job2: 'Failed',
      job3: 'Skipped',
      job4: 'Succeeded',
      job5: 'Skipped'
    })
    t.match(
      condition(status(sim), 'Failed')?.message,
      /^job2: BackoffLimitExceeded.*; skipped because of them: job3, job5$/
    )
  }
)

t.test('flows[].retry: an attempt deleted by hand after it failed is never run again; the retry goes on', async t => {
  const sim = simulator(t, 'v2', { jobs: { outcomes: { [jobName('job2')]: 'fail' } } })
  applyAll(sim, exampleWith({ job2: { retry: { limit: 1, backoffSeconds: 30 } } }))
  await sim.runUntil(s => attempts(s, 'job2')[0]?.phase === 'Failed' && attempts(s, 'job2').length === 2)
  t.ok(sim.deleteJob(jobName('job2')), 'the failed attempt deleted during the backoff')
  await sim.runUntilQuiet()
  t.same(
    createdJobs(sim).filter(n => n.startsWith(jobName('job2'))),
    [jobName('job2'), jobName('job2-2')],
    'each attempt created once'
  )
  t.same(
    attempts(sim, 'job2').map(r => r.phase),
    ['Failed', 'Succeeded']
  )
  t.equal(status(sim).phase, 'Succeeded')
})

t.test('flows[].retry under FailFast: a final failure elsewhere stops a retry that has not started', async t => {
  const sim = simulator(t, 'v2', {
    jobs: { outcomes: { [jobName('job2')]: 'fail', [jobName('job4')]: { result: 'fail', afterSeconds: 25 } } }
  })
  applyAll(sim, exampleWith({ job2: { retry: { limit: 1, backoffSeconds: 60 } } }))
  await sim.runUntilQuiet()
  t.same(
    createdJobs(sim).sort(),
    [jobName('job1'), jobName('job2'), jobName('job4')],
    "job4 failed at 25 s, during job2's backoff: no second attempt"
  )
  t.same(
    attempts(sim, 'job2').map(r => r.phase),
    ['Failed'],
    'job2 stands failed, with one record'
  )
  t.equal(status(sim).phase, 'Failed')
})

t.test('a retry named like another flow makes the spec invalid and deletes nothing', async t => {
  const sim = simulator(t)
  const objects = exampleObjects()
  applyAll(sim, objects)
  await sim.runUntil(jobStarted(jobName('job1')))
  const flow = objects.find(o => o.kind === 'JobFlow') as KubeObject
  sim.edit(flowRef(), o => {
    const spec = o.spec as { flows: Array<Record<string, unknown>> }
    spec.flows.push({
      name: 'job1-2',
      jobTemplate: specOf<{ flows: Array<Record<string, unknown>> }>(flow).flows[0]?.jobTemplate
    })
  })
  await sim.runUntilQuiet()
  t.equal(status(sim).phase, 'Invalid')
  t.match(condition(status(sim), 'Valid')?.message, /flow "job1-2" has the Job name of attempt 2 of flow "job1"/)
  t.same(
    sim.timeline.filter(e => e.type === 'deleted'),
    [],
    'nothing deleted'
  )
})

t.test(
  'jobhooks.io/rerun on a finished JobFlow reruns its failed and skipped flows as new attempts and keeps the ' +
    'succeeded ones; each value acts once',
  async t => {
    const sim = simulator(t, 'v2', { jobs: { outcomes: { [jobName('job2')]: 'fail' } } })
    applyAll(sim, exampleObjects())
    await sim.runUntilQuiet()
    t.equal(status(sim).phase, 'Failed')
    const failedAt = status(sim).completionTime

    const annotate = (value: string): void => {
      sim.edit(flowRef(), o => {
        o.metadata.annotations = { ...o.metadata.annotations, 'jobhooks.io/rerun': value }
      })
    }
    annotate('1')
    await sim.runUntilQuiet()
    const after = createdJobs(sim).slice(3)
    if (
      !t.same(
        after,
        [jobName('job2-2'), jobName('job3-2'), jobName('job5-2')],
        'job2 again, then job3 and job5 that it skipped; job1 and job4 not again'
      )
    ) {
      t.comment(sim.timelineText())
    }
    t.equal(status(sim).phase, 'Succeeded')
    t.equal(status(sim).jobsSucceeded, '5/5')
    t.match(status(sim).rerun, { value: '1', message: 'rerunning job2, job3, job5' })
    t.match(attempts(sim, 'job2'), [{ phase: 'Failed' }, { phase: 'Succeeded', attempt: 2, rerun: '1' }])
    t.match(attempts(sim, 'job3'), [
      { phase: 'Skipped', message: 'not started: job2 failed' },
      { phase: 'Succeeded', jobName: jobName('job3-2'), attempt: 2, rerun: '1' }
    ])
    t.not(status(sim).completionTime, failedAt, 'a new completion time')
    t.match(condition(status(sim), 'Failed'), { status: 'False', reason: 'Rerun' })
    t.match(condition(status(sim), 'Complete'), { status: 'True' })

    const jobsBefore = createdJobs(sim).length
    sim.edit(flowRef(), o => {
      o.metadata.labels = { ...o.metadata.labels, touched: 'yes' }
    })
    await sim.runUntilQuiet()
    t.equal(createdJobs(sim).length, jobsBefore, 'the same value does nothing more')
    annotate('2')
    await sim.runUntilQuiet()
    t.equal(createdJobs(sim).length, jobsBefore, 'a new value with nothing failed reruns nothing')
    t.match(status(sim).rerun, { value: '2', message: 'nothing to rerun: every flow succeeded' })
  }
)

t.test(
  'jobhooks.io/rerun on a JobFlow still running is used up, recorded, and does not act when it finishes',
  async t => {
    const sim = simulator(t, 'v2', {
      jobs: { outcomes: { [jobName('job2')]: 'fail', [jobName('job4')]: { result: 'succeed', afterSeconds: 40 } } }
    })
    applyAll(sim, exampleObjects())
    await sim.runUntil(jobStarted(jobName('job2')))
    sim.edit(flowRef(), o => {
      o.metadata.annotations = { 'jobhooks.io/rerun': 'early' }
    })
    await sim.runUntilQuiet()
    t.match(status(sim).rerun, { value: 'early', message: /^ignored: the JobFlow had not finished/ })
    t.equal(status(sim).phase, 'Failed')
    t.same(createdJobs(sim).sort(), [jobName('job1'), jobName('job2'), jobName('job4')])
  }
)

t.test(
  'spec.suspend: the running Job is suspended in place (spec.suspend and the mark, nothing else), nothing new ' +
    'starts; resumed, the same Job finishes and the flow goes on',
  async t => {
    const sim = simulator(t, 'v2', {
      jobs: { outcomes: { [jobName('job1')]: { result: 'succeed', afterSeconds: 20 } } }
    })
    applyAll(sim, exampleObjects())
    await sim.runUntil(s => s.seconds() >= 5)
    const jobRef = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: jobName('job1') }
    const before = structuredClone(sim.get(jobRef)) as KubeObject
    sim.edit(flowRef(), o => {
      specOf(o).suspend = true
    })
    await sim.runUntil(s => valueAt(s.get(jobRef), 'spec', 'suspend') === true)
    await sim.advance(60)

    const suspended = sim.get(jobRef) as KubeObject
    t.equal(suspended.metadata.uid, before.metadata.uid)
    const { suspend: _, ...rest } = specOf(suspended)
    t.same(
      rest,
      Object.fromEntries(Object.entries(specOf(before)).filter(([k]) => k !== 'suspend')),
      'only spec.suspend changed in its spec'
    )
    t.same(suspended.metadata.labels, before.metadata.labels)
    t.equal(suspended.metadata.annotations?.['jobhooks.io/suspended-by-jobflow'], 'true')
    t.match(condition(status(sim), 'Suspended'), {
      status: 'True',
      reason: 'JobFlowSuspended',
      message: 'spec.suspend is true: no new Job starts; 1 running Job suspended'
    })
    t.same(
      createdJobs(sim).sort(),
      [jobName('job1'), jobName('job4')],
      'job4 finished on its own; job2, waiting for job1, did not start'
    )
    t.match(jobRecords(sim).get('job2'), { phase: 'Pending', message: 'waiting for job1' })
    t.equal(status(sim).phase, 'Running')

    sim.edit(flowRef(), o => {
      specOf(o).suspend = false
    })
    await sim.runUntilQuiet()
    if (!t.equal(status(sim).phase, 'Succeeded')) t.comment(sim.timelineText())
    t.equal(createdJobs(sim).filter(n => n === jobName('job1')).length, 1, 'job1 resumed, never created again')
    const resumed = sim.get(jobRef) as KubeObject
    t.equal(specOf(resumed).suspend, false)
    t.notOk('jobhooks.io/suspended-by-jobflow' in (resumed.metadata.annotations ?? {}), 'the mark is gone')
    t.match(condition(status(sim), 'Suspended'), { status: 'False', reason: 'JobFlowResumed' })
    t.ok(
      sim.timeline.some(e => e.type === 'job-suspended') && sim.timeline.some(e => e.type === 'job-resumed'),
      'the Job controller saw both'
    )
  }
)

t.test(
  'spec.suspend on a JobFlow that finished changes nothing; a template that suspends its own Job is not resumed by ' +
    'the JobFlow',
  async t => {
    const sim = simulator(t)
    applyAll(sim, exampleObjects())
    await sim.runUntilQuiet()
    const writes = sim.timeline.length
    sim.edit(flowRef(), o => {
      specOf(o).suspend = true
    })
    await sim.runUntilQuiet()
    t.equal(status(sim).phase, 'Succeeded')
    t.equal(condition(status(sim), 'Suspended'), undefined, 'a finished JobFlow is not suspended')
    t.notOk(
      sim.timeline.slice(writes).some(e => e.type === 'job-suspended'),
      'no finished Job touched'
    )
  }
)

t.test(
  "jobhooks.io/rerun: a sync handed the JobFlow from before the rerun's status write (its new Job already there) " +
    'decides the same rerun, marks that Job, and keeps the flow running',
  async t => {
    const sim = simulator(t, 'v2', { jobs: { outcomes: { [jobName('job2')]: 'fail' } } })
    applyAll(sim, exampleObjects())
    await sim.runUntilQuiet()
    sim.edit(flowRef(), o => {
      o.metadata.annotations = { 'jobhooks.io/rerun': '1' }
    })
    const annotated = sim.get(flowRef()) as KubeObject
    t.equal(annotated.metadata.annotations?.['jobhooks.io/rerun'], '1')
    t.equal(status(sim).phase, 'Failed', 'not synced yet')
    const rerun = await sim.reconcile(flowRef())
    t.same(
      rerun.created.map(r => r.name),
      [jobName('job2-2')],
      "the rerun creates job2's new attempt"
    )
    const written = structuredClone(status(sim))
    await sim.advance(1)

    sim.handOlderParent(flowRef(), annotated)
    const stale = await sim.reconcile(flowRef())
    t.same(stale.created, [], 'nothing created twice')
    t.match(status(sim).rerun, { value: '1', message: 'rerunning job2, job3, job5' }, 'the same decision')
    t.equal(status(sim).completionTime, undefined, 'still running, not finished again')
    t.match(
      attempts(sim, 'job2'),
      [{ phase: 'Failed' }, { jobName: jobName('job2-2'), attempt: 2, rerun: '1' }],
      "the adopted attempt is the rerun's"
    )
    t.same((status(sim).jobs as unknown[]).length, (written.jobs as unknown[]).length)
    await sim.runUntilQuiet()
    t.equal(status(sim).phase, 'Succeeded')
    t.same(
      createdJobs(sim).slice(3),
      [jobName('job2-2'), jobName('job3-2'), jobName('job5-2')],
      'each rerun attempt once'
    )
  }
)
