// Recreate and the PodOpsLifecycle around it, one sync at a time: what each observed state asks
// for (effects) and what the status says. The job is synced with the service's own registry.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { defaultActions } from '../../src/actions/index.js'
import { syncOperationJob } from '../../src/controllers/operationjob/sync.js'
import { OPS_LIFECYCLE_LABEL } from '../../src/k8s/labels.js'
import type { SyncAnswer } from '../../src/protocol/hooks.js'
import { at, detailOf, job, next, request, workloadPod, type WorkloadPodOptions } from '../helpers/operationjob.js'
import { context } from '../helpers/fixtures.js'

const RS = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d4f', uid: 'rs-uid', controller: true }

function pod (
  name: string,
  options: Omit<WorkloadPodOptions, 'owner'> & { lock?: string; owner?: false } = {}
): KubeObject {
  const { lock, owner, ...rest } = options
  return workloadPod(name, {
    ...rest,
    labels: { app: 'web', ...(lock !== undefined ? { [OPS_LIFECYCLE_LABEL]: lock } : {}) },
    ...(owner === false ? {} : { owner: RS })
  })
}

const recreate = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject =>
  job({ action: 'Recreate', targets: [{ name: 'web-a' }], operationDelaySeconds: 10, ...spec }, status)
const sync = (parent: KubeObject, pods: KubeObject[], seconds: number): SyncAnswer =>
  syncOperationJob(request(parent, pods), context(at(seconds)))
const types = (answer: SyncAnswer): string[] =>
  answer.effects.map(e =>
    e.type === 'SetPodLabels'
      ? `SetPodLabels ${JSON.stringify(e.labels)}`
      : e.type === 'SetPodCondition'
        ? `SetPodCondition ${e.condition.status}`
        : e.type
  )

t.test('the lifecycle, sync by sync: lock, traffic off, not Ready, delay, evict, back, give back', async t => {
  let parent = recreate()
  // 1. Lock first, nothing else.
  let answer = sync(parent, [pod('web-a', { gated: true, serviceReady: 'True' }), pod('web-b')], 0)
  t.same(types(answer), [`SetPodLabels {"${OPS_LIFECYCLE_LABEL}":"ops"}`])
  t.match(detailOf(answer), { progress: 'Processing', extraInfo: { Lifecycle: 'Preparing' } })
  t.ok(answer.response.resyncAfterSeconds !== undefined && answer.response.resyncAfterSeconds <= 2, 'looks again soon')
  // 2. Locked: the gate goes False.
  parent = next(parent, answer)
  answer = sync(parent, [pod('web-a', { gated: true, serviceReady: 'True', lock: 'ops' }), pod('web-b')], 1)
  t.same(types(answer), ['SetPodCondition False'])
  // 3. Gate False but still Ready (the kubelet has not caught up): wait.
  parent = next(parent, answer)
  answer = sync(parent, [pod('web-a', { gated: true, serviceReady: 'False', lock: 'ops' }), pod('web-b')], 2)
  t.same(types(answer), [])
  t.equal(detailOf(answer).extraInfo?.TrafficOffTime, undefined, 'the delay has not started')
  // 4. Not Ready: the delay starts; resync when it ends.
  parent = next(parent, answer)
  const off = [pod('web-a', { gated: true, serviceReady: 'False', lock: 'ops', ready: false }), pod('web-b')]
  answer = sync(parent, off, 3)
  t.same(types(answer), [])
  t.equal(detailOf(answer).extraInfo?.TrafficOffTime, '2026-01-02T03:00:03Z')
  t.equal(answer.response.resyncAfterSeconds, 10, 'resync when operationDelaySeconds is over')
  parent = next(parent, answer)
  answer = sync(parent, off, 8)
  t.same(types(answer), [], 'still in the delay')
  t.equal(answer.response.resyncAfterSeconds, 5)
  // 5. Delay over: evict, and remember the controller.
  parent = next(parent, answer)
  answer = sync(parent, off, 13)
  t.same(types(answer), ['Evict'])
  t.match(detailOf(answer).extraInfo, {
    Lifecycle: 'Operating',
    Controller: 'ReplicaSet/web-5d4f',
    ControllerUID: 'rs-uid',
    PodUID: 'uid-web-a',
    LatestCreation: '2026-01-02T00:00:00Z',
    LatestCreationPods: 'uid-web-b'
  })
  t.same(answer.effects[0]?.target, {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: 'default',
    name: 'web-a',
    uid: 'uid-web-a'
  })
  // 6. A refused eviction is owed again while the Pod is there; a scale-up Pod moves LatestCreation.
  parent = next(parent, answer)
  answer = sync(parent, [...off, pod('web-c', { created: '2026-01-02T03:00:20Z' })], 20)
  t.same(types(answer), ['Evict'])
  t.equal(detailOf(answer).extraInfo?.LatestCreation, '2026-01-02T03:00:20Z')
  t.equal(detailOf(answer).extraInfo?.LatestCreationPods, 'uid-web-c', 'the Pods of the newer second only')
  // 7. Evicted; only the scale-up Pod and the old sibling are Ready: not back yet.
  parent = next(parent, answer)
  answer = sync(parent, [pod('web-b'), pod('web-c', { created: '2026-01-02T03:00:20Z' })], 30)
  t.equal(detailOf(answer).progress, 'Processing')
  t.same(types(answer), [])
  // 8. The ReplicaSet's new Pod, not Ready: still not back. Ready: back, the job succeeds.
  parent = next(parent, answer)
  answer = sync(
    parent,
    [
      pod('web-b'),
      pod('web-c', { created: '2026-01-02T03:00:20Z' }),
      pod('web-d', { created: '2026-01-02T03:00:31Z', ready: false })
    ],
    32
  )
  t.equal(detailOf(answer).progress, 'Processing')
  parent = next(parent, answer)
  answer = sync(
    parent,
    [
      pod('web-b'),
      pod('web-c', { created: '2026-01-02T03:00:20Z' }),
      pod('web-d', { created: '2026-01-02T03:00:31Z' })
    ],
    40
  )
  t.match(detailOf(answer), { progress: 'Succeeded', extraInfo: { NewPod: 'web-d', Lifecycle: 'Completing' } })
  t.equal(answer.response.status.progress, 'Succeeded')
})

t.test(
  'a Pod of the same name and another UID is the Pod back (StatefulSet); the lifecycle gives nothing back on it',
  async t => {
    const parent = recreate(
      {},
      {
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        targetDetails: [
          {
            name: 'web-a',
            progress: 'Processing',
            startTime: '2026-01-02T03:00:00Z',
            extraInfo: {
              Lifecycle: 'Operating',
              PodUID: 'uid-old',
              Controller: 'StatefulSet/web',
              ControllerUID: 'rs-uid',
              LatestCreation: '2026-01-02T00:00:00Z'
            }
          }
        ]
      }
    )
    const answer = sync(parent, [pod('web-a', { uid: 'uid-new', created: '2026-01-02T00:00:00Z' })], 60)
    t.match(detailOf(answer), { progress: 'Succeeded', extraInfo: { NewPod: 'web-a' } })
    t.same(answer.effects, [], 'the lock was on the old Pod')
  }
)

t.test('a Pod held by another job waits with LifecycleHolder; no effect touches it', async t => {
  const answer = sync(recreate(), [pod('web-a', { lock: 'other-job' })], 0)
  t.match(detailOf(answer), {
    progress: 'Processing',
    extraInfo: { Lifecycle: 'Preparing', LifecycleHolder: 'other-job' }
  })
  t.same(answer.effects, [])
})

t.test('a Pod without the readiness gate gets the lock and the delay only', async t => {
  let parent = recreate({ operationDelaySeconds: 0 })
  let answer = sync(parent, [pod('web-a')], 0)
  t.same(types(answer), [`SetPodLabels {"${OPS_LIFECYCLE_LABEL}":"ops"}`])
  parent = next(parent, answer)
  answer = sync(parent, [pod('web-a', { lock: 'ops' })], 1)
  t.same(types(answer), ['Evict'], 'no condition to set, Ready does not matter: straight to the eviction')
})

t.test('failure gives the Pod back: condition True and the lock removed, then Released', async t => {
  const status = {
    progress: 'Processing',
    startTime: '2026-01-02T03:00:00Z',
    targetDetails: [
      {
        name: 'web-a',
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        extraInfo: { Lifecycle: 'Preparing' }
      }
    ]
  }
  const held = pod('web-a', { gated: true, serviceReady: 'False', lock: 'ops', ready: false })
  const answer = sync(recreate({ activeDeadlineSeconds: 30 }, status), [held], 31)
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'DeadlineExceeded' } })
  t.same(types(answer), ['SetPodCondition True', `SetPodLabels {"${OPS_LIFECYCLE_LABEL}":null}`])
  t.equal(detailOf(answer).extraInfo?.Released, undefined, 'not released while effects are owed')
  const after = sync(
    next(recreate({ activeDeadlineSeconds: 30 }, status), answer),
    [pod('web-a', { gated: true, serviceReady: 'True' })],
    35
  )
  t.equal(detailOf(after).extraInfo?.Released, 'true')
  t.same(after.effects, [])
})

t.test('a Pod without a controller fails NoController and gives the lock back', async t => {
  const status = {
    progress: 'Processing',
    startTime: '2026-01-02T03:00:00Z',
    targetDetails: [
      {
        name: 'web-a',
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        extraInfo: { Lifecycle: 'Preparing', TrafficOffTime: '2026-01-02T03:00:00Z' }
      }
    ]
  }
  const answer = sync(recreate({ operationDelaySeconds: 0 }, status), [pod('web-a', { owner: false, lock: 'ops' })], 5)
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'NoController' } })
  t.same(types(answer), [`SetPodLabels {"${OPS_LIFECYCLE_LABEL}":null}`])
})

t.test("Recreate asks for the Pods of the namespace (the controller's Pods, whatever their names)", async t => {
  t.same(
    defaultActions
      .get('Recreate')
      ?.handler.relatedResources?.({ name: 'ops', namespace: 'default', spec: {}, targets: [] }),
    [{ apiVersion: 'v1', resource: 'pods', labelSelector: {} }]
  )
})

t.test(
  "LatestCreation stops moving once the target terminates: the ReplicaSet's replacement, made while the target " +
    'drains, counts as back',
  async t => {
    let parent = recreate(
      { operationDelaySeconds: 0 },
      {
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        targetDetails: [
          {
            name: 'web-a',
            progress: 'Processing',
            startTime: '2026-01-02T03:00:00Z',
            extraInfo: {
              Lifecycle: 'Operating',
              PodUID: 'uid-web-a',
              Controller: 'ReplicaSet/web-5d4f',
              ControllerUID: 'rs-uid',
              LatestCreation: '2026-01-02T00:00:00Z'
            }
          }
        ]
      }
    )
    // Evicted: the target terminates (grace period) and the ReplicaSet's new Pod is already there.
    const draining = [
      pod('web-a', { lock: 'ops', terminating: true, ready: false }),
      pod('web-b'),
      pod('web-n', { created: '2026-01-02T03:00:30Z', ready: false })
    ]
    let answer = sync(parent, draining, 31)
    t.equal(detailOf(answer).extraInfo?.LatestCreation, '2026-01-02T00:00:00Z', 'not moved by the replacement')
    t.same(types(answer), [], 'no second eviction of a terminating Pod')
    parent = next(parent, answer)
    answer = sync(parent, [pod('web-b'), pod('web-n', { created: '2026-01-02T03:00:30Z' })], 40)
    t.match(detailOf(answer), { progress: 'Succeeded', extraInfo: { NewPod: 'web-n' } })
  }
)

t.test(
  'a replacement made in the very second of the newest Pod (kwok, a busy ReplicaSet) is back; the Pods known from ' +
    'that second are not',
  async t => {
    const second = '2026-01-02T03:00:00Z'
    let parent = recreate(
      { operationDelaySeconds: 0 },
      {
        progress: 'Processing',
        startTime: second,
        targetDetails: [
          {
            name: 'web-a',
            progress: 'Processing',
            startTime: second,
            extraInfo: { Lifecycle: 'Preparing', TrafficOffTime: second }
          }
        ]
      }
    )
    // Everything in one second: the target, its sibling, the job; then a scale-up Pod in that second too.
    let answer = sync(parent, [pod('web-a', { lock: 'ops', created: second }), pod('web-b', { created: second })], 0)
    t.same(types(answer), ['Evict'])
    t.match(detailOf(answer).extraInfo, { LatestCreation: second, LatestCreationPods: 'uid-web-b' })
    parent = next(parent, answer)
    answer = sync(
      parent,
      [
        pod('web-a', { lock: 'ops', created: second }),
        pod('web-b', { created: second }),
        pod('web-c', { created: second })
      ],
      0
    )
    t.equal(
      detailOf(answer).extraInfo?.LatestCreationPods,
      'uid-web-b uid-web-c',
      'a Pod seen later in the same second joins them'
    )
    // Evicted; the replacement is made within the same second, under another name.
    parent = next(parent, answer)
    answer = sync(parent, [pod('web-b', { created: second }), pod('web-c', { created: second })], 0)
    t.equal(detailOf(answer).progress, 'Processing', 'the Pods known from that second are not the one back')
    parent = next(parent, answer)
    answer = sync(
      parent,
      [pod('web-b', { created: second }), pod('web-c', { created: second }), pod('web-x', { created: second })],
      1
    )
    t.match(detailOf(answer), { progress: 'Succeeded', extraInfo: { NewPod: 'web-x' } })
  }
)

t.test(
  'a status written before LatestCreationPods was kept: a Pod of the newest second is not taken for the one back',
  async t => {
    const parent = recreate(
      { operationDelaySeconds: 0 },
      {
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        targetDetails: [
          {
            name: 'web-a',
            progress: 'Processing',
            startTime: '2026-01-02T03:00:00Z',
            extraInfo: {
              Lifecycle: 'Operating',
              PodUID: 'uid-web-a',
              Controller: 'ReplicaSet/web-5d4f',
              ControllerUID: 'rs-uid',
              LatestCreation: '2026-01-02T00:00:00Z'
            }
          }
        ]
      }
    )
    const answer = sync(parent, [pod('web-b'), pod('web-x')], 10)
    t.equal(detailOf(answer).progress, 'Processing')
  }
)

t.test(
  'an older copy of the status (back at Preparing) after the eviction: the new Pod of the same name is not locked ' +
    'or evicted, the action judges',
  async t => {
    // The status Metacontroller handed over is from before the eviction; the Pod named web-a now is
    // the workload's new one.
    const stale = recreate(
      { operationDelaySeconds: 0 },
      {
        progress: 'Processing',
        startTime: '2026-01-02T03:00:00Z',
        targetDetails: [
          {
            name: 'web-a',
            progress: 'Processing',
            startTime: '2026-01-02T03:00:00Z',
            extraInfo: {
              Lifecycle: 'Preparing',
              PodUID: 'uid-old',
              Controller: 'StatefulSet/web',
              ControllerUID: 'rs-uid',
              LatestCreation: '2026-01-02T00:00:00Z'
            }
          }
        ]
      }
    )
    const notReady = sync(
      stale,
      [
        pod('web-a', {
          uid: 'uid-new',
          created: '2026-01-02T03:00:40Z',
          gated: true,
          serviceReady: 'True',
          ready: false
        }),
        pod('web-b')
      ],
      45
    )
    t.same(notReady.effects, [], 'nothing touches the new Pod')
    t.match(detailOf(notReady), { progress: 'Processing', extraInfo: { Lifecycle: 'Operating', PodUID: 'uid-old' } })
    const back = sync(
      next(stale, notReady),
      [
        pod('web-a', { uid: 'uid-new', created: '2026-01-02T03:00:40Z', gated: true, serviceReady: 'True' }),
        pod('web-b')
      ],
      50
    )
    t.match(detailOf(back), { progress: 'Succeeded', extraInfo: { NewPod: 'web-a' } })
    t.same(back.effects, [])
  }
)

t.test('a Pod that was never seen fails PodNotFound at once', async t => {
  const answer = sync(recreate(), [pod('web-b')], 0)
  t.match(detailOf(answer), { progress: 'Failed', error: { reason: 'PodNotFound' } })
})
