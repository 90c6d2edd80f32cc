import t from 'tap'
import type { CustomizeRequest, SyncRequest } from '../../../src/protocol/hooks.js'
import type { InjectEphemeralContainers } from '../../../src/effects/types.js'
import { customizeOperationJob } from '../../../src/controllers/operationjob/customize.js'
import { operationjobHooks } from '../../../src/controllers/operationjob/index.js'
import { ALL_KINDS } from '../../../src/controllers/kinds.js'
import { timestamp } from '../../../src/k8s/time.js'
import { requestFor } from '../../../src/effects/executor.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { defaultActions } from '../../../src/actions/index.js'
import { FIXED_NOW, testApp } from '../../helpers/app.js'
import {
  REGISTRY, TEST_HOOKS, T0, at, detailOf, finalize, job, next, pod, progresses, sync
} from '../../helpers/operationjob.js'
import { condition } from '../../helpers/conditions.js'

const NOW = timestamp(FIXED_NOW)
const injections = (effects: unknown[]): InjectEphemeralContainers[] => effects.filter(
  (e: any) => e.type === 'InjectEphemeralContainers'
) as InjectEphemeralContainers[]

t.test('the kind is registered with sync, finalize and customize hooks', async t => {
  t.ok(ALL_KINDS.includes(operationjobHooks))
  t.equal(operationjobHooks.kind, 'operationjob')
  t.type(operationjobHooks.finalize, 'function')
  t.type(operationjobHooks.customize, 'function')
})

t.test('customize asks for the target Pods by name in the job\'s namespace, plus what the action declares', async t => {
  const request = fixture<CustomizeRequest>('operationjob/customize.json')
  t.same(
    customizeOperationJob(request, REGISTRY),
    {
      relatedResources: [
        { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['web-0', 'web-1', 'web-2'] }
      ]
    }
  )
  const probe = job({ targets: [{ name: 'a' }] })
  t.same(customizeOperationJob({ parent: probe }, REGISTRY).relatedResources, [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] },
    { apiVersion: 'v1', resource: 'configmaps', namespace: 'default', names: ['ops-probe'] }
  ])
  t.same(
    customizeOperationJob({ parent: job({ action: 'Exec', targets: 'nope' }) }, REGISTRY),
    { relatedResources: [] },
    'unreadable targets ask for no Pods'
  )
  t.same(customizeOperationJob(
    { parent: job({ action: 'Reboot', targets: [{ name: 'a' }] }) },
    REGISTRY
  ).relatedResources,
  [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] }
  ], 'an unknown action still gets its Pods (the sync hook reports it)')
  // Recreate asks for the workload's Pods by label: kept to the job's namespace, since under v2
  // Metacontroller would list a label rule without one in every namespace.
  t.same(customizeOperationJob(
    { parent: job({ action: 'Recreate', targets: [{ name: 'a' }] }) },
    defaultActions
  ).relatedResources, [
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', names: ['a'] },
    { apiVersion: 'v1', resource: 'pods', namespace: 'default', labelSelector: {} }
  ], 'an action\'s label rule gets the job\'s namespace')
})

t.test('a new Exec job starts partition targets in spec order, injects one container each, and waits for the ' +
  'earliest deadline', async t => {
  const answer = TEST_HOOKS.sync(fixture('operationjob/sync-new.v2.json'), context())
  const { status } = answer.response
  t.same(answer.response.children, [])
  t.match(
    status,
    {
      progress: 'Processing',
      startTime: NOW,
      totalPodCount: 3,
      succeededPodCount: 0,
      failedPodCount: 0,
      observedGeneration: 1
    }
  )
  t.notOk('endTime' in status)
  t.same(status.targetDetails, [
    {
      name: 'web-0',
      progress: 'Processing',
      startTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-0' }
    },
    {
      name: 'web-1',
      progress: 'Processing',
      startTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-1' }
    },
    { name: 'web-2', progress: 'Pending' }
  ])
  t.equal(condition(status, 'Valid')?.status, 'True')
  t.same(answer.effects, ['web-0', 'web-1'].map((name, i) => ({
    type: 'InjectEphemeralContainers',
    target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name, uid: `pod-uid-${i}` },
    containers: [{
      name: 'opj-check',
      image: 'busybox:1.36',
      command: ['sh', '-c', 'pidof app'],
      env: [{ name: 'OPERATIONJOB', value: 'check' }, { name: 'OPERATIONJOB_UID', value: 'opj-uid-1' }],
      targetContainerName: 'app',
      terminationMessagePolicy: 'FallbackToLogsOnError'
    }]
  })))
  t.equal(answer.response.resyncAfterSeconds, 600, 'the deadline of the started targets')
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call', async t => {
  for (const name of ['sync-new', 'sync-exited']) {
    const v1 = JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v1.json`), context()))
    const v2 = JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v2.json`), context()))
    t.equal(v1, v2, `${name}: v1 = v2`)
    t.equal(
      JSON.stringify(TEST_HOOKS.sync(fixture(`operationjob/${name}.v2.json`), context())),
      v2,
      `${name}: deterministic`
    )
  }
})

t.test('Exec with mixed exit codes: 0 succeeds, 1 fails with the code in error.message and is released; partition ' +
  'holds the third', async t => {
  const request = fixture<SyncRequest>('operationjob/sync-exited.v2.json')
  const answer = TEST_HOOKS.sync(request, context())
  const { status } = answer.response
  t.match(
    status,
    {
      progress: 'Processing',
      succeededPodCount: 1,
      failedPodCount: 1,
      totalPodCount: 3,
      startTime: '2026-01-02T03:00:30Z'
    }
  )
  t.same(status.targetDetails, [
    {
      name: 'web-0',
      progress: 'Succeeded',
      startTime: '2026-01-02T03:00:30Z',
      endTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-0' }
    },
    {
      name: 'web-1',
      progress: 'Failed',
      startTime: '2026-01-02T03:00:30Z',
      endTime: NOW,
      extraInfo: { ContainerName: 'opj-check', PodUID: 'pod-uid-1', Released: 'true' },
      error: { reason: 'ExitCode', message: 'opj-check exited with code 1 (Error)' }
    },
    { name: 'web-2', progress: 'Pending' }
  ])
  t.same(answer.effects, [], 'nothing to inject, nothing to undo')
  t.notOk(
    'resyncAfterSeconds' in answer.response,
    'no started target is unfinished, the job is not finished: nothing happens by the clock'
  )

  // Partition 3: the third starts; the job then ends Failed once it exits 0.
  const raised = next(request.parent, answer, { partition: 3 })
  const third = TEST_HOOKS.sync({ ...request, parent: raised }, context())
  t.same(injections(third.effects).map(e => e.target.name), ['web-2'])
  t.equal(third.response.status.progress, 'Processing')
  const pods = request.related['Pod.v1'] as Record<string, any>
  const done = structuredClone(pods['default/web-0'])
  done.metadata = { ...done.metadata, name: 'web-2', uid: 'pod-uid-2' }
  const later = new Date(FIXED_NOW.getTime() + 30_000)
  const end = TEST_HOOKS.sync(
    { ...request, parent: next(raised, third), related: { 'Pod.v1': { ...pods, 'default/web-2': done } } },
    context(later)
  )
  t.match(
    end.response.status,
    { progress: 'Failed', succeededPodCount: 2, failedPodCount: 1, endTime: timestamp(later) }
  )
  t.equal(end.response.resyncAfterSeconds, 300, 'TTLSecondsAfterFinished from endTime')
})

t.test('a missing target Pod fails that target with PodNotFound; the others start', async t => {
  const answer = TEST_HOOKS.sync(fixture('operationjob/sync-missing-pod.v2.json'), context())
  t.same(progresses(answer), ['web-0=Processing', 'web-1=Failed', 'web-2=Processing'])
  const detail = detailOf(answer, 1)
  t.same(
    detail,
    {
      name: 'web-1',
      progress: 'Failed',
      startTime: NOW,
      endTime: NOW,
      extraInfo: { Released: 'true' },
      error: { reason: 'PodNotFound', message: 'Pod web-1 does not exist' }
    }
  )
  t.same(injections(answer.effects).map(e => e.target.name), ['web-0', 'web-2'])
  t.equal(answer.response.status.failedPodCount, 1)

  // A Pod that disappears while its target is processing fails it too.
  const parent = job({ targets: [{ name: 'a' }] })
  const first = sync(parent, [pod('a')], T0)
  const gone = sync(next(parent, first), [], at(10))
  t.match(detailOf(gone, 0), { progress: 'Failed', error: { reason: 'PodNotFound' } })
  t.equal(gone.response.status.progress, 'Failed')
})

t.test('an unknown action is an invalid spec: Valid False, progress Invalid, nothing done, no crash', async t => {
  const answer = TEST_HOOKS.sync(fixture('operationjob/sync-unknown-action.v2.json'), context())
  t.equal(answer.response.status.progress, 'Invalid')
  t.match(
    condition(answer.response.status, 'Valid'),
    { status: 'False', reason: 'InvalidSpec', message: /unknown action "Reboot": registered actions are Exec, Probe/ }
  )
  t.same(answer.effects, [])
  t.same(answer.response.children, [])
  t.notOk('targetDetails' in answer.response.status)

  const previous = {
    progress: 'Processing',
    startTime: '2026-01-02T03:00:00Z',
    targetDetails: [{ name: 'a', progress: 'Processing', startTime: '2026-01-02T03:00:00Z' }]
  }
  const kept = sync(job({ action: 'Reboot', targets: [{ name: 'a' }] }, previous), [pod('a')], T0)
  t.equal(kept.response.status.progress, 'Invalid', 'a started job says Invalid too')
  t.same(kept.response.status.targetDetails, previous.targetDetails, 'and keeps its memory')
  t.equal(kept.response.status.startTime, previous.startTime)
  const fixed = sync(job({ targets: [{ name: 'a' }] }, kept.response.status), [pod('a')], at(1))
  t.equal(fixed.response.status.progress, 'Processing', 'the spec fixed: progress from the targets again')
  const done = { ...previous, progress: 'Succeeded', targetDetails: [{ name: 'a', progress: 'Succeeded' }] }
  t.equal(
    sync(job({ action: 'Reboot', targets: [{ name: 'a' }] }, done), [pod('a')], T0).response.status.progress,
    'Succeeded',
    'a finished job stays finished'
  )
  const finalized = finalize(job({ action: 'Reboot', targets: [{ name: 'a' }] }, previous), [pod('a')], T0)
  t.equal(finalized.response.finalized, true, 'finalize lets it go: no action could release anything')

  const app = await testApp(t)
  const reply = await app.inject(
    { method: 'POST', url: '/hooks/operationjob/sync', payload: fixture('operationjob/sync-unknown-action.v2.json') }
  )
  t.equal(reply.statusCode, 200, 'the route answers 200')
  t.equal(reply.json().status.progress, 'Invalid')
})

t.test('other invalid specs are refused with every problem named', async t => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['duplicate targets', { targets: [{ name: 'a' }, { name: 'a' }] }, /Pod a is named twice/],
    ['no targets', { targets: [] }, /non-empty list/],
    ['a negative partition', { targets: [{ name: 'a' }], partition: -1 }, /spec.partition/],
    ['a zero deadline', { targets: [{ name: 'a' }], activeDeadlineSeconds: 0 }, /activeDeadlineSeconds/],
    ['a zero TTL', { targets: [{ name: 'a' }], TTLSecondsAfterFinished: 0 }, /TTLSecondsAfterFinished/],
    ['Exec without exec', { action: 'Exec', targets: [{ name: 'a' }] }, /spec.exec is required/],
    [
      'Exec with an unknown script',
      { action: 'Exec', targets: [{ name: 'a' }], exec: { image: 'busybox', script: { name: 'nope.sh' } } },
      /unknown script "nope.sh"/
    ],
    // The action's own field against the schema it declared, as the CRD would have refused it.
    [
      'Exec with a numeric image',
      { action: 'Exec', targets: [{ name: 'a' }], exec: { image: 7, command: ['true'] } },
      /^spec.exec.image must be a string$/
    ],
    [
      'Exec with an empty command',
      { action: 'Exec', targets: [{ name: 'a' }], exec: { image: 'b', command: [] } },
      /^spec.exec.command must have at least 1 items$/
    ],
    [
      'Exec with exec a string',
      { action: 'Exec', targets: [{ name: 'a' }], exec: 'busybox' },
      /^spec.exec must be an object$/
    ]
  ]
  for (const [what, spec, message] of cases) {
    const answer = sync(job(spec), [pod('a')], T0)
    t.match(condition(answer.response.status, 'Valid'), { status: 'False', message }, what)
    t.same(answer.effects, [], `${what}: nothing done`)
  }
})

t.test('partition: already-started targets first, then spec order; the rest stay Pending and keep the job ' +
  'Processing', async t => {
  const targets = [{ name: 'a' }, { name: 'b' }, { name: 'c' }]
  const pods = targets.map(x => pod(x.name))
  // c was started earlier (by an earlier partition, say); a and b were not.
  const previous = {
    progress: 'Processing',
    startTime: '2026-01-02T02:59:00Z',
    targetDetails: [
      { name: 'a', progress: 'Pending' },
      { name: 'b', progress: 'Pending' },
      { name: 'c', progress: 'Processing', startTime: '2026-01-02T02:59:00Z' }
    ]
  }
  const one = sync(job({ targets, partition: 1 }, previous), pods, T0)
  t.same(progresses(one), ['a=Pending', 'b=Pending', 'c=Processing'], 'partition 1 is taken by the started target')
  t.equal(one.response.status.progress, 'Processing')
  const two = sync(job({ targets, partition: 2 }, previous), pods, T0)
  t.same(
    progresses(two),
    ['a=Processing', 'b=Pending', 'c=Processing'],
    'the next room goes to the first pending target in spec order'
  )

  const zero = sync(job({ targets, partition: 0 }), pods, T0)
  t.same(progresses(zero), ['a=Pending', 'b=Pending', 'c=Pending'])
  t.equal(zero.response.status.progress, 'Pending', 'partition 0: nothing starts, the job is Pending')
  t.equal(zero.response.status.startTime, timestamp(T0), 'startTime is set at the first computation')

  // Finished targets count against the partition: it bounds how many are ever started.
  const all = [pod('a', { outcome: 'Succeeded' }), pod('b'), pod('c')]
  const first = sync(job({ targets, partition: 1 }), all, T0)
  const again = sync(next(job({ targets, partition: 1 }), first), all, at(1))
  t.same(progresses(again), ['a=Succeeded', 'b=Pending', 'c=Pending'])
  t.equal(again.response.status.progress, 'Processing', 'targets past the partition keep the job Processing')
  const unset = sync(job({ targets }), pods, T0)
  t.same(progresses(unset), ['a=Processing', 'b=Processing', 'c=Processing'], 'no partition: all start')
})

t.test('terminal progress is sticky, whatever the Pods do later', async t => {
  const parent = job({ targets: [{ name: 'a' }] })
  const done = sync(parent, [pod('a', { outcome: 'Succeeded' })], T0)
  // First sync starts it; second reads the outcome.
  const finished = sync(next(parent, done), [pod('a', { outcome: 'Succeeded' })], at(5))
  t.equal(finished.response.status.progress, 'Succeeded')
  t.equal(finished.response.status.endTime, timestamp(at(5)))
  for (const pods of [[], [pod('a', { outcome: 'Failed' })], [pod('a', { uid: 'other' })]]) {
    const later = sync(next(parent, finished), pods, at(60))
    t.equal(later.response.status.progress, 'Succeeded')
    t.same(
      later.response.status.targetDetails,
      finished.response.status.targetDetails,
      'the targets keep their outcome'
    )
    t.equal(later.response.status.endTime, timestamp(at(5)), 'endTime is carried forward')
    t.same(later.effects, [])
  }
  const failedTarget = sync(next(parent, done), [pod('a', { outcome: 'Failed' })], at(5))
  const afterFail = sync(next(parent, failedTarget), [pod('a', { outcome: 'Succeeded' })], at(6))
  t.match(
    detailOf(afterFail, 0),
    { progress: 'Failed', error: { reason: 'ProbeFailed' } },
    'a failed target stays failed'
  )
})

t.test('deadline per target: raising partition step by step fails exactly the started targets, then TTL deletes the ' +
  'job', async t => {
  const targets = [{ name: 'a' }, { name: 'b' }, { name: 'c' }]
  const pods = targets.map(x => pod(x.name))
  const spec = { targets, activeDeadlineSeconds: 3, TTLSecondsAfterFinished: 5 }
  let parent = job({ ...spec, partition: 0 })
  let answer = sync(parent, pods, T0)
  t.equal(answer.response.status.progress, 'Pending')
  t.notOk('resyncAfterSeconds' in answer.response, 'nothing started, no deadline to wait for')
  let clock = 0
  for (const partition of [1, 2, 3]) {
    parent = next(parent, answer, { partition })
    answer = sync(parent, pods, at(clock))
    t.equal(answer.response.resyncAfterSeconds, 3, `partition ${partition}: the new target's deadline`)
    t.equal(answer.response.status.failedPodCount, partition - 1, `partition ${partition}: nothing more failed yet`)
    clock += 2
    parent = next(parent, answer)
    answer = sync(parent, pods, at(clock))
    t.equal(answer.response.resyncAfterSeconds, 1, 'one second left')
    clock += 1
    parent = next(parent, answer)
    answer = sync(parent, pods, at(clock))
    t.equal(
      answer.response.status.failedPodCount,
      partition,
      `partition ${partition}: failedPodCount equals the partition`
    )
    const detail = detailOf(answer, partition - 1)
    t.match(
      detail,
      { progress: 'Failed', error: { reason: 'DeadlineExceeded' }, extraInfo: { Released: 'true' } },
      'failed with a reason and released'
    )
    t.equal(detail.endTime, timestamp(at(clock)))
  }
  t.equal(answer.response.status.progress, 'Failed')
  const endTime = answer.response.status.endTime
  t.equal(endTime, timestamp(at(clock)))
  t.equal(answer.response.resyncAfterSeconds, 5, 'TTL from endTime')
  parent = next(parent, answer)
  const early = sync(parent, pods, at(clock + 4))
  t.equal(early.response.resyncAfterSeconds, 1)
  t.same(early.effects, [])
  const due = sync(parent, pods, at(clock + 5))
  t.same(
    due.effects,
    [{
      type: 'Delete',
      target: {
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'OperationJob',
        namespace: 'default',
        name: 'ops',
        uid: 'opj-uid-1'
      }
    }],
    'the job deletes itself, guarded by its UID'
  )
  t.notOk('resyncAfterSeconds' in due.response)
  t.equal(
    requestFor(due.effects[0]!).path,
    '/apis/jobhooks.io/v1alpha1/namespaces/default/operationjobs/ops',
    'the executor may apply it'
  )
  const noUid = sync({ ...parent, metadata: { ...parent.metadata, uid: undefined } }, pods, at(clock + 5))
  t.same(noUid.effects, [], 'without a UID there is nothing to guard the delete with')
  const deleting = sync(
    { ...parent, metadata: { ...parent.metadata, deletionTimestamp: timestamp(at(clock + 5)) } },
    pods,
    at(clock + 6)
  )
  t.same(deleting.effects, [], 'a job already being deleted is not deleted again')
})

t.test('resyncAfterSeconds is the earliest deadline over all targets, not the first target\'s', async t => {
  const targets = [{ name: 'a' }, { name: 'b' }]
  const previous = {
    progress: 'Processing',
    startTime: '2026-01-02T02:00:00Z',
    targetDetails: [
      { name: 'a', progress: 'Processing', startTime: '2026-01-02T03:00:00Z' }, // deadline 03:10:00
      { name: 'b', progress: 'Processing', startTime: '2026-01-02T02:55:00Z' } //  deadline 03:05:00
    ]
  }
  const answer = sync(job({ targets, activeDeadlineSeconds: 600 }, previous), [pod('a'), pod('b')], at(60))
  t.equal(answer.response.resyncAfterSeconds, 240, 'b times out first, in 4 minutes')
  const expired = sync(job({ targets, activeDeadlineSeconds: 600 }, previous), [pod('a'), pod('b')], at(300))
  t.same(progresses(expired), ['a=Processing', 'b=Failed'], 'only the expired target fails')
  t.equal(expired.response.resyncAfterSeconds, 300)
})

t.test('without activeDeadlineSeconds and TTLSecondsAfterFinished the CRD defaults apply (3 h, 30 min)', async t => {
  const parent = job({ targets: [{ name: 'a' }] })
  const started = sync(parent, [pod('a')], T0)
  t.equal(started.response.resyncAfterSeconds, 10800)
  const done = sync(next(parent, started), [pod('a', { outcome: 'Succeeded' })], at(10))
  t.equal(done.response.resyncAfterSeconds, 1800)
})

t.test('finalize releases every unfinished target before answering finalized: true', async t => {
  const targets = [{ name: 'a' }, { name: 'b' }, { name: 'c' }]
  const parent = job({ targets, partition: 2 })
  const started = sync(parent, [pod('a'), pod('b'), pod('c')], T0)
  t.same(progresses(started), ['a=Processing', 'b=Processing', 'c=Pending'])
  // b's action still holds something on its Pod: finalize waits for the release.
  const held = [pod('a'), pod('b', { held: true }), pod('c')]
  const first = finalize(next(parent, started), held, at(10))
  t.equal(first.response.finalized, false, 'a release is still owed')
  t.equal(first.response.resyncAfterSeconds, 5)
  t.same(first.effects.map((e: any) => `${e.type} ${e.target.name}`), ['Delete b'])
  t.same(progresses(first), ['a=Failed', 'b=Failed', 'c=Pending'], 'unfinished targets are cancelled; c never started')
  t.match(
    detailOf(first, 0),
    { error: { reason: 'Cancelled' }, extraInfo: { Released: 'true' } }
  )
  t.notOk(detailOf(first, 1).extraInfo?.Released, 'b is not released yet')
  const second = finalize(next(parent, first), [pod('a'), pod('b'), pod('c')], at(15))
  t.equal(second.response.finalized, true)
  t.same(second.effects, [])
  t.equal(detailOf(second, 1).extraInfo?.Released, 'true')

  // A target that finished before the delete keeps its outcome.
  const ok = finalize(next(parent, started), [pod('a', { outcome: 'Succeeded' }), pod('b'), pod('c')], at(10))
  t.same(progresses(ok), ['a=Succeeded', 'b=Failed', 'c=Pending'])
  t.equal(ok.response.finalized, true)

  const app = await testApp(t)
  const reply = await app.inject({
    method: 'POST',
    url: '/hooks/operationjob/finalize',
    payload: { ...fixture<SyncRequest>('operationjob/sync-exited.v2.json'), finalizing: true }
  })
  t.equal(reply.statusCode, 200)
  t.equal(reply.json().finalized, true, 'Exec releases nothing (ephemeral containers stay) and lets the job go')
  t.same(Object.keys(reply.json()).sort(), ['children', 'finalized', 'status'])
})

t.test('the status converges: a second sync of the written-back status changes nothing', async t => {
  const parent = job({ targets: [{ name: 'a' }, { name: 'b' }] })
  const pods = [pod('a', { outcome: 'Failed' }), pod('b')]
  const first = sync(parent, pods, T0)
  const second = sync(next(parent, first), pods, at(1))
  const third = sync(next(parent, second), pods, at(2))
  t.same(third.response.status, second.response.status)
})

t.test('a processing target without a startTime gets one, so its deadline can pass', async t => {
  const previous = {
    progress: 'Processing',
    startTime: '2026-01-02T03:00:00Z',
    targetDetails: [{ name: 'a', progress: 'Processing' }]
  }
  const answer = sync(job({ targets: [{ name: 'a' }], activeDeadlineSeconds: 60 }, previous), [pod('a')], at(10))
  t.equal(detailOf(answer, 0).startTime, timestamp(at(10)))
  t.equal(answer.response.resyncAfterSeconds, 60)
})
