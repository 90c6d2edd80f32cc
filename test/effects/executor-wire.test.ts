// The cluster executor against a fake API server that records every request: what goes over the
// wire for each effect type (path, content type, body with its UID precondition, the kubeconfig's
// token).
import t from 'tap'
import { EFFECT_PERMISSIONS } from '../../src/effects/executor.js'
import type { Effect } from '../../src/effects/types.js'
import { TOKEN, fakeApi, executorFor, pod, inject, deleteEjob, parentOf } from '../helpers/executor.js'

t.test(
  'InjectEphemeralContainers patches the ephemeralcontainers subresource with the Pod UID as precondition',
  async t => {
    const api = await fakeApi(t)
    const executor = executorFor(t, api.url)
    t.equal(executor.mode, 'cluster')
    const effect = inject('web-1', 'uid-1234')
    const outcomes = await executor.apply(parentOf([effect]), [effect])
    t.same(outcomes, [{ effect, result: 'applied' }])
    t.equal(api.requests.length, 1)
    const [request] = api.requests
    t.equal(request?.method, 'PATCH')
    t.equal(request?.url, '/api/v1/namespaces/team-a/pods/web-1/ephemeralcontainers')
    t.equal(request?.headers['content-type'], 'application/strategic-merge-patch+json')
    t.equal(request?.headers.authorization, `Bearer ${TOKEN}`, 'the token of the kubeconfig')
    t.same(JSON.parse(request?.body ?? 'null'), {
      metadata: { uid: 'uid-1234' },
      spec: {
        ephemeralContainers: [
          {
            name: 'debug',
            image: 'busybox:1.36',
            targetContainerName: 'app',
            env: [{ name: 'ephemeraljob', value: 'ej' }]
          }
        ]
      }
    })
  }
)

t.test(
  'SetPodCondition patches pods/status with the condition (merged on type) and the Pod UID as precondition',
  async t => {
    const api = await fakeApi(t)
    const executor = executorFor(t, api.url)
    const effect: Effect = {
      type: 'SetPodCondition',
      target: pod('foo-752sz', 'uid-77'),
      condition: {
        type: 'jobhooks.io/service-ready',
        status: 'True',
        reason: 'ContainersReady',
        message: 'the containers are ready'
      }
    }
    t.same(await executor.apply(parentOf([effect]), [effect]), [{ effect, result: 'applied' }])
    const [request] = api.requests
    t.equal(request?.method, 'PATCH')
    t.equal(request?.url, '/api/v1/namespaces/team-a/pods/foo-752sz/status')
    t.equal(request?.headers['content-type'], 'application/strategic-merge-patch+json')
    t.equal(request?.headers.authorization, `Bearer ${TOKEN}`)
    t.same(JSON.parse(request?.body ?? 'null'), {
      metadata: { uid: 'uid-77' },
      status: {
        conditions: [
          {
            type: 'jobhooks.io/service-ready',
            status: 'True',
            reason: 'ContainersReady',
            message: 'the containers are ready'
          }
        ]
      }
    })
    t.same(
      EFFECT_PERMISSIONS.SetPodCondition,
      [{ apiGroup: '', resource: 'pods/status', verbs: ['patch'] }],
      'patch on pods/status, nothing more'
    )
    const notPod: Effect = {
      ...effect,
      target: { ...effect.target, kind: 'EphemeralJob', apiVersion: 'jobhooks.io/v1alpha1' }
    }
    const [refused] = await executor.apply(parentOf([notPod]), [notPod])
    t.equal(refused?.result, 'failed', 'a condition for something else than a Pod is refused')
    t.equal(api.requests.length, 1, 'without a request')
  }
)

t.test("SetPodLabels patches the Pod's labels (null removes one) with the Pod UID as precondition", async t => {
  const api = await fakeApi(t)
  const executor = executorFor(t, api.url)
  const effect: Effect = {
    type: 'SetPodLabels',
    target: pod('foo-752sz', 'uid-77'),
    labels: { 'jobhooks.io/to-replace': 'true', 'jobhooks.io/ops-lifecycle': null }
  }
  t.same(await executor.apply(parentOf([effect]), [effect]), [{ effect, result: 'applied' }])
  const [request] = api.requests
  t.equal(request?.method, 'PATCH')
  t.equal(request?.url, '/api/v1/namespaces/team-a/pods/foo-752sz')
  t.equal(request?.headers['content-type'], 'application/strategic-merge-patch+json')
  t.same(JSON.parse(request?.body ?? 'null'), {
    metadata: { uid: 'uid-77', labels: { 'jobhooks.io/to-replace': 'true', 'jobhooks.io/ops-lifecycle': null } }
  })
  t.same(EFFECT_PERMISSIONS.SetPodLabels, [{ apiGroup: '', resource: 'pods', verbs: ['patch'] }])
})

t.test(
  'Evict posts an Eviction with the UID precondition; a PodDisruptionBudget refusal (429) fails with its message, ' +
    'to be retried',
  async t => {
    let refuse = true
    const api = await fakeApi(t, () =>
      refuse
        ? {
            status: 429,
            body: {
              kind: 'Status',
              status: 'Failure',
              reason: 'TooManyRequests',
              message: "Cannot evict pod as it would violate the pod's disruption budget.",
              code: 429
            }
          }
        : { status: 201, body: { kind: 'Status', status: 'Success' } }
    )
    const executor = executorFor(t, api.url)
    const effect: Effect = { type: 'Evict', target: pod('web-0', 'uid-w0') }
    t.same(
      await executor.apply(parentOf([effect]), [effect]),
      [
        {
          effect,
          result: 'failed',
          message: "HTTP 429: Cannot evict pod as it would violate the pod's disruption budget.",
          disruptionBudget: "Cannot evict pod as it would violate the pod's disruption budget."
        }
      ],
      'a refusal by the budget, said so'
    )
    const [request] = api.requests
    t.equal(request?.method, 'POST')
    t.equal(request?.url, '/api/v1/namespaces/team-a/pods/web-0/eviction')
    t.equal(request?.headers['content-type'], 'application/json')
    t.same(JSON.parse(request?.body ?? 'null'), {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-0', namespace: 'team-a' },
      deleteOptions: { preconditions: { uid: 'uid-w0' } }
    })
    refuse = false
    t.same(await executor.apply(parentOf([effect]), [effect]), [{ effect, result: 'applied' }])
    t.same(EFFECT_PERMISSIONS.Evict, [{ apiGroup: '', resource: 'pods/eviction', verbs: ['create'] }])
  }
)

t.test('Delete sends DeleteOptions with the UID precondition and background propagation', async t => {
  const api = await fakeApi(t, () => ({ status: 200, body: { kind: 'EphemeralJob' } }))
  const executor = executorFor(t, api.url)
  const effect = deleteEjob('nightly')
  t.same(await executor.apply(parentOf([effect]), [effect]), [{ effect, result: 'applied' }])
  const [request] = api.requests
  t.equal(request?.method, 'DELETE')
  t.equal(request?.url, '/apis/jobhooks.io/v1alpha1/namespaces/team-a/ephemeraljobs/nightly')
  t.equal(request?.headers['content-type'], 'application/json')
  t.equal(request?.headers.authorization, `Bearer ${TOKEN}`)
  t.same(JSON.parse(request?.body ?? 'null'), {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: { uid: 'uid-nightly' },
    propagationPolicy: 'Background'
  })
})

t.test("StopJobFlow merge-patches a run's deadline and annotation, the JobFlow's UID as precondition", async t => {
  const api = await fakeApi(t)
  const executor = executorFor(t, api.url)
  const effect: Effect = {
    type: 'StopJobFlow',
    target: { apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', namespace: 'team-a', name: 'nightly-29', uid: 'u' },
    activeDeadlineSeconds: 42,
    annotations: { 'jobhooks.io/replaced-by': 'nightly-30' }
  }
  // The fake has every parent, with the UID uid-<name>: the CronJobFlow is confirmed by one GET.
  const parent = { apiVersion: 'jobhooks.io/v1alpha1', kind: 'CronJobFlow', namespace: 'team-a', name: 'nightly' }
  t.same(await executor.apply({ ...parent, uid: 'uid-nightly' }, [effect]), [{ effect, result: 'applied' }])
  t.equal(api.reads[0]?.url, '/apis/jobhooks.io/v1alpha1/namespaces/team-a/cronjobflows/nightly')
  const [request] = api.requests
  t.equal(request?.method, 'PATCH')
  t.equal(request?.url, '/apis/jobhooks.io/v1alpha1/namespaces/team-a/jobflows/nightly-29')
  t.equal(request?.headers['content-type'], 'application/merge-patch+json', 'a custom resource: a JSON merge patch')
  t.same(JSON.parse(request?.body ?? 'null'), {
    metadata: { uid: 'u', annotations: { 'jobhooks.io/replaced-by': 'nightly-30' } },
    spec: { activeDeadlineSeconds: 42 }
  })
  t.same(EFFECT_PERMISSIONS.StopJobFlow, [{ apiGroup: 'jobhooks.io', resource: 'jobflows', verbs: ['patch'] }])
})
