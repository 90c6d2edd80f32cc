// The simulated Metacontroller under the update strategy InPlace, and the simulated Job
// controller's spec.suspend: a hook that returns what was last applied changes nothing; one field
// changed is one field written; an identity alone strips a child (why keepAsApplied); a Job's
// template cannot change; a suspended Job stops and picks up where it stopped.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import type { KindHooks, SyncRequest } from '../../src/protocol/hooks.js'
import { keepAsApplied, keepAsObserved, LAST_APPLIED_ANNOTATION, objectsByName } from '../../src/k8s/objects.js'
import { Simulator, type ChildType } from '../../src/simulator/simulator.js'
import { JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { objectAs, specOf, statusOf, valueAt } from '../helpers/objects.js'

type Keep = 'rebuild' | 'applied' | 'identity'

/** What the test's hook does with the children that exist, and what it changes in its Job. */
interface Plan {
  keep: Keep
  suspend?: boolean
  image?: string
}

const PARENT: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'p' }
const JOB: ObjectRef = { apiVersion: 'batch/v1', kind: 'Job', namespace: 'default', name: 'p-job' }
const CONFIGMAP: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'p-config' }

function desiredJob (plan: Plan): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: JOB.name, labels: { app: 'test' } },
    spec: {
      ...(plan.suspend !== undefined ? { suspend: plan.suspend } : {}),
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: plan.image ?? 'busybox:1.36' }] }
      }
    }
  }
}

const desiredConfigMap = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: CONFIGMAP.name, labels: { app: 'test' } },
  data: { a: '1' }
})

/** A kind whose hook answers as `plan` says: its children built afresh, kept as last applied, or kept by identity. */
function testHooks (plan: () => Plan): KindHooks {
  return {
    kind: 'inplace',
    phaseField: 'phase',
    statusFields: ['phase'],
    sync: (request: SyncRequest) => {
      const now = plan()
      const jobs = objectsByName(request.children, 'Job', 'batch/v1')
      const configMaps = objectsByName(request.children, 'ConfigMap', 'v1')
      const keep = (observed: KubeObject | undefined, fresh: KubeObject): KubeObject => {
        if (observed === undefined || now.keep === 'rebuild') return fresh
        return now.keep === 'applied' ? keepAsApplied(observed) : keepAsObserved(observed)
      }
      const kept = keep(jobs.get(JOB.name), desiredJob(now))
      // What keepAsApplied gives is frozen: a changed field goes on a copy.
      const job = now.keep === 'applied' && now.suspend !== undefined
        ? { ...kept, spec: { ...kept.spec as Record<string, unknown>, suspend: now.suspend } }
        : kept
      return {
        response: {
          status: { phase: 'Running' },
          children: [job, keep(configMaps.get(CONFIGMAP.name), desiredConfigMap())]
        },
        effects: []
      }
    },
    childUpdates: {
      'Job.batch/v1': { resource: 'jobs', methods: ['OnDelete', 'InPlace'] },
      'ConfigMap.v1': { resource: 'configmaps', methods: ['OnDelete', 'InPlace'] }
    }
  }
}

function simulator (
  t: { teardown: (fn: () => unknown) => void },
  plan: () => Plan,
  method: 'InPlace' | 'OnDelete' = 'InPlace',
  durationSeconds = 10
): Simulator {
  const children: ChildType[] = [
    { apiVersion: 'batch/v1', resource: 'jobs', updateStrategy: method },
    { apiVersion: 'v1', resource: 'configmaps', updateStrategy: method }
  ]
  const sim = new Simulator({
    controllers: [
      {
        name: 'inplace-controller',
        hooks: testHooks(plan),
        parent: { apiVersion: JOBHOOKS_API_VERSION, resource: 'jobflows' },
        children
      }
    ],
    jobs: { durationSeconds }
  })
  t.teardown(async () => await sim.close())
  sim.apply({
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: PARENT.name, namespace: 'default' },
    spec: {}
  })
  return sim
}

const conditionOf = (job: KubeObject | undefined, type: string): Record<string, unknown> | undefined =>
  (isRecord(job?.status) && Array.isArray(job.status.conditions) ? job.status.conditions : []).find(
    (c: unknown) => isRecord(c) && c.type === type
  ) as Record<string, unknown> | undefined

t.test('the controller sent to the hook says InPlace, and the kind is safe under it', async (t) => {
  const plan: Plan = { keep: 'applied' }
  const sim = simulator(t, () => plan)
  let result = await sim.reconcile(PARENT)
  t.ok(result.ok, result.error ?? 'ok')
  t.same(result.created, [JOB, CONFIGMAP])
  result = await sim.reconcile(PARENT)
  t.ok(result.ok, result.error ?? 'ok')
  t.match(valueAt(result.request?.controller, 'spec', 'childResources'), [
    { resource: 'jobs', updateStrategy: { method: 'InPlace' } },
    { resource: 'configmaps', updateStrategy: { method: 'InPlace' } }
  ])
  t.same(result.updated, [], 'kept as last applied: nothing to write')
})

t.test('the simulator plays OnDelete and InPlace only', async (t) => {
  const hooks = testHooks(() => ({ keep: 'applied' }))
  t.throws(
    () =>
      new Simulator({
        controllers: [
          {
            hooks,
            parent: { apiVersion: JOBHOOKS_API_VERSION, resource: 'jobflows' },
            children: [{ apiVersion: 'batch/v1', resource: 'jobs', updateStrategy: 'Recreate' }]
          }
        ]
      }),
    { message: 'Job.batch/v1: the simulator plays the update strategies OnDelete and InPlace, not Recreate' }
  )
})

t.test('answering what was last applied changes nothing: no write, the same resourceVersion', async (t) => {
  const plan: Plan = { keep: 'applied' }
  const sim = simulator(t, () => plan)
  await sim.advance(3)
  const job = sim.get(JOB) as KubeObject
  const configMap = sim.get(CONFIGMAP) as KubeObject
  t.equal(
    JSON.parse(job.metadata.annotations?.[LAST_APPLIED_ANNOTATION] as string).spec.template.spec.containers[0].image,
    'busybox:1.36'
  )
  for (const keep of ['applied', 'rebuild'] as const) {
    plan.keep = keep
    const again = await sim.reconcile(PARENT)
    t.ok(again.ok, again.error ?? 'ok')
    t.same([again.updated, again.created, again.deleted, again.drift], [[], [], [], []], `${keep}: nothing written`)
  }
  t.same(sim.get(JOB), job, 'the Job byte for byte')
  t.same(sim.get(CONFIGMAP), configMap, 'the ConfigMap byte for byte')
})

t.test('one field changed in the answer: that field is written, and nothing else', async (t) => {
  const plan: Plan = { keep: 'applied' }
  const sim = simulator(t, () => plan)
  await sim.advance(3)
  // Someone else's label: InPlace leaves what the answers never applied.
  sim.edit(JOB, (job) => {
    job.metadata.labels = { ...job.metadata.labels, team: 'x' }
  })
  await sim.runUntilQuiet({ untilSeconds: 4 })
  const before = sim.get(JOB) as KubeObject
  plan.suspend = true
  const result = await sim.reconcile(PARENT)
  t.ok(result.ok, result.error ?? 'ok')
  t.same(result.updated, [JOB], 'the Job, not the ConfigMap')
  const after = objectAs<KubeObject>(sim.get(JOB))
  t.equal(specOf(after).suspend, true)
  t.equal(after.metadata.generation, (before.metadata.generation ?? 0) + 1, 'a new generation: the spec changed')
  t.not(after.metadata.resourceVersion, before.metadata.resourceVersion)
  const { suspend: _a, ...specAfter } = specOf(after)
  const { suspend: _b, ...specBefore } = before.spec as Record<string, unknown>
  t.same(specAfter, specBefore, 'the rest of the spec as it was, defaults too')
  t.same(after.metadata.labels, before.metadata.labels, "labels as they were, someone else's too")
  t.same(after.metadata.ownerReferences, before.metadata.ownerReferences)
  t.equal(
    JSON.parse(after.metadata.annotations?.[LAST_APPLIED_ANNOTATION] ?? '').spec.suspend,
    true,
    'the annotation holds what was applied'
  )
  t.match(
    sim.timeline.find((e) => e.type === 'updated'),
    { object: JOB, message: 'spec.suspend' }
  )
  // The next sync answers the same: nothing more is written.
  const again = await sim.reconcile(PARENT)
  t.same(again.updated, [])
})

t.test(
  'an identity alone under InPlace strips what was applied: a ConfigMap loses its data, a Job is refused',
  async (t) => {
    const plan: Plan = { keep: 'applied' }
    const sim = simulator(t, () => plan)
    await sim.advance(3)
    const job = sim.get(JOB)
    plan.keep = 'identity'
    const result = await sim.reconcile(PARENT)
    t.notOk(result.ok, 'the sync fails')
    t.match(
      result.error,
      /can't update Job default\/p-job: Job "p-job" is invalid: spec\.template: Invalid value: field is immutable/
    )
    t.same(result.updated, [CONFIGMAP])
    const configMap = objectAs<KubeObject>(sim.get(CONFIGMAP))
    t.notOk('data' in configMap, 'the data applied is gone')
    t.same(
      configMap.metadata.labels,
      { 'controller-uid': (sim.get(PARENT) as KubeObject).metadata.uid },
      "the label applied is gone; Metacontroller's own is set again"
    )
    t.same(sim.get(JOB), job, 'the Job as it was: the API server refused it')
    t.equal(statusOf<{ phase?: string }>(sim.get(PARENT)).phase, 'Running', 'the status is written all the same')
    // Under OnDelete the same answer changes nothing.
    const quiet = simulator(t, () => plan, 'OnDelete')
    plan.keep = 'applied'
    await quiet.advance(3)
    plan.keep = 'identity'
    const kept = await quiet.reconcile(PARENT)
    t.ok(kept.ok, kept.error ?? 'ok')
    t.same(kept.updated, [])
    t.same(valueAt(quiet.get(CONFIGMAP), 'data'), { a: '1' })
  }
)

t.test("a hook that rebuilds a Job with another template fails the sync: a Job's template is immutable", async (t) => {
  const plan: Plan = { keep: 'rebuild' }
  const sim = simulator(t, () => plan)
  await sim.advance(3)
  plan.image = 'busybox:1.37'
  const result = await sim.reconcile(PARENT)
  t.notOk(result.ok)
  t.match(result.error, /Job "p-job" is invalid: spec\.template: Invalid value: field is immutable/)
  t.equal(valueAt(sim.get(JOB), 'spec', 'template', 'spec', 'containers', 0, 'image'), 'busybox:1.36')
  t.match(
    sim.timeline.filter((e) => e.type === 'sync-error'),
    [{ object: PARENT }]
  )
  t.throws(
    () =>
      sim.edit(JOB, (job) => {
        ;(valueAt(job, 'spec', 'template', 'spec', 'containers', 0) as Record<string, unknown>).image = 'x'
      }),
    { message: /field is immutable/ },
    'kubectl edit is refused too'
  )
})

t.test(
  'a Job suspended while it runs stops, keeps its time left, and finishes that long after it resumes',
  async (t) => {
    const plan: Plan = { keep: 'applied' }
    const sim = simulator(t, () => plan)
    await sim.advance(4)
    const running = objectAs<KubeObject>(sim.get(JOB))
    t.match(statusOf(running), { active: 1, startTime: '2026-01-01T00:00:00Z' })

    plan.suspend = true
    sim.edit(PARENT, (parent) => {
      parent.metadata.annotations = { poke: '1' }
    })
    await sim.advance(16)
    const suspended = objectAs<KubeObject>(sim.get(JOB))
    t.equal(specOf(suspended).suspend, true)
    t.notOk('active' in statusOf(suspended), 'no pod')
    t.notOk('startTime' in statusOf(suspended), 'startTime cleared, as Kubernetes 1.36 does')
    t.match(conditionOf(suspended, 'Suspended'), {
      status: 'True',
      reason: 'JobSuspended',
      message: 'Job suspended',
      lastTransitionTime: '2026-01-01T00:00:04Z'
    })
    t.notOk(
      sim.timeline.some((e) => e.type === 'job-succeeded'),
      'no outcome while suspended (it was due at 10 s)'
    )

    plan.suspend = false
    sim.edit(PARENT, (parent) => {
      parent.metadata.annotations = { poke: '2' }
    })
    await sim.advance(1)
    const resumed = objectAs<KubeObject>(sim.get(JOB))
    t.equal(specOf(resumed).suspend, false)
    t.match(statusOf(resumed), { active: 1, startTime: '2026-01-01T00:00:20Z' })
    t.match(conditionOf(resumed, 'Suspended'), {
      status: 'False',
      reason: 'JobResumed',
      message: 'Job resumed',
      lastTransitionTime: '2026-01-01T00:00:20Z'
    })
    await sim.runUntilQuiet()
    t.match(
      sim.timeline
        .filter((e) => e.object.kind === 'Job' && e.type.startsWith('job-'))
        .map((e) => `${e.seconds} ${e.type}`),
      ['0 job-started', '4 job-suspended', '20 job-resumed', '26 job-succeeded'],
      '6 s left when it was suspended at 4 s'
    )
    t.match(conditionOf(sim.get(JOB), 'Complete'), { status: 'True' })
  }
)

t.test('a Job created suspended does not start until it is resumed, then runs its whole time', async (t) => {
  const plan: Plan = { keep: 'rebuild', suspend: true }
  const sim = simulator(t, () => plan)
  await sim.advance(30)
  const waiting = objectAs<KubeObject>(sim.get(JOB))
  t.notOk('startTime' in statusOf(waiting))
  t.match(conditionOf(waiting, 'Suspended'), { status: 'True', reason: 'JobSuspended' })
  plan.keep = 'applied'
  plan.suspend = false
  sim.edit(PARENT, (parent) => {
    parent.metadata.annotations = { poke: '1' }
  })
  await sim.runUntilQuiet()
  t.match(
    sim.timeline
      .filter((e) => e.object.kind === 'Job' && e.type.startsWith('job-'))
      .map((e) => `${e.seconds} ${e.type}`),
    ['0 job-suspended', '30 job-started', '40 job-succeeded']
  )
  t.match(conditionOf(sim.get(JOB), 'Suspended'), { status: 'False', reason: 'JobResumed' })
})

t.test(
  'a finished Job is not suspended any more, and a Job that hangs stays without outcome across a suspension',
  async (t) => {
    const plan: Plan = { keep: 'applied' }
    const sim = simulator(t, () => plan)
    await sim.runUntilQuiet()
    plan.suspend = true
    sim.edit(PARENT, (parent) => {
      parent.metadata.annotations = { poke: '1' }
    })
    await sim.runUntilQuiet()
    t.equal(specOf(sim.get(JOB)).suspend, true, 'written: Metacontroller does not know it finished')
    t.notOk(conditionOf(sim.get(JOB), 'Suspended'), 'the Job controller leaves a finished Job alone')

    const hanging = simulator(t, () => plan)
    hanging.setJobOutcome(JOB.name, 'hang')
    plan.suspend = undefined
    await hanging.advance(5)
    plan.suspend = true
    hanging.edit(PARENT, (parent) => {
      parent.metadata.annotations = { poke: '1' }
    })
    await hanging.advance(5)
    plan.suspend = false
    hanging.edit(PARENT, (parent) => {
      parent.metadata.annotations = { poke: '2' }
    })
    await hanging.runUntilQuiet()
    t.match(
      hanging.timeline
        .filter((e) => e.object.kind === 'Job' && e.type.startsWith('job-'))
        .map((e) => `${e.seconds} ${e.type}`),
      ['0 job-started', '5 job-suspended', '10 job-resumed']
    )
    t.match(valueAt(hanging.get(JOB), 'status'), { active: 1 })
  }
)
