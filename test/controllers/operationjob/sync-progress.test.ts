// OperationJob sync, the job's progress: invalid specs refused with every problem named, the
// partition's order, terminal progress that sticks, a status that converges, and a startTime for
// every processing target.
import t from 'tap'
import { timestamp } from '../../../src/k8s/time.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { testApp } from '../../helpers/app.js'
import { TEST_HOOKS, T0, at, detailOf, finalize, job, next, pod, progresses, sync } from '../../helpers/operationjob.js'
import { condition } from '../../helpers/conditions.js'

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
