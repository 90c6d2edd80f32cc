// OperationJob sync, its clocks: each target's deadline, the TTL after which the job deletes
// itself, resyncAfterSeconds at the earliest deadline, the CRD's defaults, and finalize.
import t, { type Test } from 'tap'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { timestamp } from '../../../src/k8s/time.js'
import { requestFor } from '../../../src/effects/executor.js'
import { fixture } from '../../helpers/fixtures.js'
import { testApp } from '../../helpers/app.js'
import { T0, at, detailOf, finalize, job, next, pod, progresses, sync } from '../../helpers/operationjob.js'

/** Where the deadline story stands: the job, its last answer, and the seconds since T0. */
interface DeadlineRun {
  parent: KubeObject
  answer: SyncAnswer
  clock: number
}

/** Raises partition one target at a time; each started target fails at its 3 s deadline, released. */
function failEachTargetAtItsDeadline (t: Test, pods: KubeObject[], start: DeadlineRun): DeadlineRun {
  let { parent, answer, clock } = start
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
  return { parent, answer, clock }
}

/** The failed job waits out its TTL from endTime, then asks for its own deletion, guarded by its UID. */
function deletesItselfAfterTtl (t: Test, pods: KubeObject[], failed: DeadlineRun): DeadlineRun {
  const { answer, clock } = failed
  t.equal(answer.response.status.progress, 'Failed')
  const endTime = answer.response.status.endTime
  t.equal(endTime, timestamp(at(clock)))
  t.equal(answer.response.resyncAfterSeconds, 5, 'TTL from endTime')
  const parent = next(failed.parent, answer)
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
  return { parent, answer: due, clock }
}

/** No delete without a UID to guard it, and none for a job already being deleted. */
function neverDeletesUnguardedOrTwice (t: Test, pods: KubeObject[], { parent, clock }: DeadlineRun): void {
  const noUid = sync({ ...parent, metadata: { ...parent.metadata, uid: undefined } }, pods, at(clock + 5))
  t.same(noUid.effects, [], 'without a UID there is nothing to guard the delete with')
  const deleting = sync(
    { ...parent, metadata: { ...parent.metadata, deletionTimestamp: timestamp(at(clock + 5)) } },
    pods,
    at(clock + 6)
  )
  t.same(deleting.effects, [], 'a job already being deleted is not deleted again')
}

t.test('deadline per target: raising partition step by step fails exactly the started targets, then TTL deletes the ' +
  'job', async t => {
  const targets = [{ name: 'a' }, { name: 'b' }, { name: 'c' }]
  const pods = targets.map(x => pod(x.name))
  const spec = { targets, activeDeadlineSeconds: 3, TTLSecondsAfterFinished: 5 }
  const parent = job({ ...spec, partition: 0 })
  const answer = sync(parent, pods, T0)
  t.equal(answer.response.status.progress, 'Pending')
  t.notOk('resyncAfterSeconds' in answer.response, 'nothing started, no deadline to wait for')
  const failed = failEachTargetAtItsDeadline(t, pods, { parent, answer, clock: 0 })
  const deleted = deletesItselfAfterTtl(t, pods, failed)
  neverDeletesUnguardedOrTwice(t, pods, deleted)
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
