// The cluster executor against a fake API server that records every request: what goes over the
// wire for each effect type (path, content type, body with its UID precondition, the kubeconfig's
// token), the parent confirmed before anything is written and effects kept within its reach, how
// answers are classified, the time budget, bounded concurrency, and the choice of executor at
// start-up.
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import {
  ClusterExecutor,
  EFFECT_PERMISSIONS,
  SERVICE_ACCOUNT_DIR,
  loadCredentials,
  requestFor,
  selectExecutor,
  type ClusterExecutorOptions
} from '../../src/effects/executor.js'
import type { Effect, ObjectRef } from '../../src/effects/types.js'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'
import { FAKE_TOKEN, kubeconfigFor, listenUntilTeardown } from '../helpers/fake-apiserver.js'
import type { KindHooks } from '../../src/protocol/hooks.js'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** What the fake answers: a status and a body, or `hang` to never answer. */
type Answer = { status: number; body?: unknown; delayMs?: number } | 'hang'

interface FakeApi {
  url: string
  /** Every write (the effects). */
  requests: Seen[]
  /** Every read (the parents confirmed). */
  reads: Seen[]
  /** Most requests the fake had in flight at once. */
  maxInFlight: number
}

const TOKEN = FAKE_TOKEN

/** The API server's copy of a parent: the one named, with the UID `uid-<name>`, as the effects here make them. */
const knownParent = (request: Seen): Answer => ({
  status: 200,
  body: {
    kind: 'EphemeralJob',
    metadata: { name: request.url.split('/').pop(), uid: `uid-${request.url.split('/').pop() ?? ''}` }
  }
})

async function fakeApi (
  t: Test,
  answer: (request: Seen) => Answer = () => ({ status: 200, body: {} }),
  read: (request: Seen) => Answer = knownParent
): Promise<FakeApi> {
  const fake: FakeApi = { url: '', requests: [], reads: [], maxInFlight: 0 }
  let inFlight = 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight++
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight)
    let body = ''
    req.on('data', chunk => {
      body += String(chunk)
    })
    req.on('end', () => {
      const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      const reply = seen.method === 'GET' ? read(seen) : answer(seen)
      ;(seen.method === 'GET' ? fake.reads : fake.requests).push(seen)
      if (reply === 'hang') {
        res.on('close', () => {
          inFlight--
        })
        return
      }
      setTimeout(() => {
        inFlight--
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {})
        res.writeHead(reply.status, {
          'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json'
        })
        res.end(text)
      }, reply.delayMs ?? 0)
    })
  })
  fake.url = await listenUntilTeardown(t, server)
  return fake
}

function executorFor (t: Test, server: string, options: Partial<ClusterExecutorOptions> = {}): ClusterExecutor {
  const kubeConfig = new KubeConfig()
  kubeConfig.loadFromFile(kubeconfigFor(t.testdir({}), server))
  return new ClusterExecutor(kubeConfig, { concurrency: 8, budgetMs: 5000, ...options })
}

const pod = (name: string, uid = `uid-${name}`): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: 'team-a',
  name,
  uid
})
const inject = (name: string, uid?: string): Effect => ({
  type: 'InjectEphemeralContainers',
  target: pod(name, uid),
  containers: [
    { name: 'debug', image: 'busybox:1.36', targetContainerName: 'app', env: [{ name: 'ephemeraljob', value: 'ej' }] }
  ]
})
const deleteEjob = (name: string): Effect => ({
  type: 'Delete',
  target: { apiVersion: 'jobhooks.io/v1alpha1', kind: 'EphemeralJob', namespace: 'team-a', name, uid: `uid-${name}` }
})
const status = (code: number, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message,
  code
})
/** The parent of the syncs here: an EphemeralJob in team-a. */
const PARENT: ObjectRef = {
  apiVersion: 'jobhooks.io/v1alpha1',
  kind: 'EphemeralJob',
  namespace: 'team-a',
  name: 'ej',
  uid: 'uid-ej'
}
/** The parent whose sync asks for `effects`: the EphemeralJob a Delete removes (its TTL), else PARENT. */
const parentOf = (effects: Effect[]): ObjectRef => effects.find(e => e.type === 'Delete')?.target ?? PARENT

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

t.test('answers: 2xx applied; 404, 409 and a refused UID gone; 422 and others failed with the API message', async t => {
  const answers: Record<string, Answer> = {
    accepted: { status: 202, body: {} },
    missing: { status: 404, body: status(404, 'pods "missing" not found') },
    replaced: {
      status: 409,
      body: status(409, 'Precondition failed: UID in precondition: uid-replaced, UID in object meta: other')
    },
    // What kube-apiserver 1.36 answers to a patch whose metadata.uid is not the Pod's.
    recreated: {
      status: 422,
      body: {
        ...status(422, 'Pod "recreated" is invalid: metadata.uid: Invalid value: "uid-recreated": field is immutable'),
        reason: 'Invalid',
        details: {
          name: 'recreated',
          kind: 'Pod',
          causes: [
            {
              reason: 'FieldValueInvalid',
              message: 'Invalid value: "uid-recreated": field is immutable',
              field: 'metadata.uid'
            }
          ]
        }
      }
    },
    invalid: {
      status: 422,
      body: {
        ...status(
          422,
          'Pod "invalid" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debug" ' +
            'may not be changed'
        ),
        details: { causes: [{ reason: 'FieldValueForbidden', field: 'spec.ephemeralContainers' }] }
      }
    },
    forbidden: {
      status: 403,
      body: status(403, 'pods "forbidden" is forbidden: User cannot patch resource "pods/ephemeralcontainers"')
    },
    proxy: { status: 502, body: '<html>bad gateway</html>' },
    empty: { status: 503, body: '' }
  }
  const api = await fakeApi(t, request => answers[request.url.split('/')[6] ?? ''] ?? { status: 500 })
  const executor = executorFor(t, api.url)
  const outcomes = await executor.apply(
    PARENT,
    Object.keys(answers).map(name => inject(name))
  )
  t.same(
    outcomes.map(o => [o.effect.target.name, o.result, o.message]),
    [
      ['accepted', 'applied', undefined],
      ['missing', 'gone', undefined],
      ['replaced', 'gone', undefined],
      ['recreated', 'gone', undefined],
      [
        'invalid',
        'failed',
        'HTTP 422: Pod "invalid" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers ' +
          '"debug" may not be changed'
      ],
      [
        'forbidden',
        'failed',
        'HTTP 403: pods "forbidden" is forbidden: User cannot patch resource "pods/ephemeralcontainers"'
      ],
      ['proxy', 'failed', 'HTTP 502: <html>bad gateway</html>'],
      ['empty', 'failed', 'HTTP 503: Service Unavailable']
    ]
  )
  t.equal(api.requests.length, 8)

  const deletes = await fakeApi(t, () => ({ status: 404, body: status(404, 'not found') }))
  const effect = deleteEjob('already-gone')
  t.same(
    await executorFor(t, deletes.url).apply(parentOf([effect]), [effect]),
    [{ effect, result: 'gone' }],
    'a Delete of what is gone is done'
  )
})

t.test('a request still running at the budget is aborted and fails; apply returns', async t => {
  const api = await fakeApi(t, request => (request.url.includes('/slow/') ? 'hang' : { status: 200, body: {} }))
  const executor = executorFor(t, api.url, { budgetMs: 1000 })
  const effects = [inject('fast'), inject('slow'), deleteEjob('ttl')]
  const outcomes = await executor.apply(parentOf(effects), effects)
  t.same(
    outcomes.map(o => [o.effect.target.name, o.result, o.message]),
    [
      ['fast', 'applied', undefined],
      ['slow', 'failed', 'not applied within 1000 ms'],
      ['ttl', 'applied', undefined]
    ]
  )
})

t.test('effects not started within the budget fail without a request', async t => {
  const api = await fakeApi(t, () => 'hang')
  const executor = executorFor(t, api.url, { concurrency: 1, budgetMs: 1000 })
  const effects = [inject('first'), inject('second'), inject('third')]
  const outcomes = await executor.apply(PARENT, effects)
  t.same(
    outcomes.map(o => [o.effect.target.name, o.result, o.message]),
    [
      ['first', 'failed', 'not applied within 1000 ms'],
      ['second', 'failed', 'not applied within 1000 ms'],
      ['third', 'failed', 'not applied within 1000 ms']
    ]
  )
  t.equal(api.requests.length, 1, 'only the first was sent')
})

t.test('at most EFFECTS_CONCURRENCY requests are in flight', async t => {
  const api = await fakeApi(t, () => ({ status: 200, body: {}, delayMs: 50 }))
  const executor = executorFor(t, api.url, { concurrency: 2 })
  const effects = ['a', 'b', 'c', 'd', 'e', 'f'].map(name => inject(name))
  const outcomes = await executor.apply(PARENT, effects)
  t.same(
    outcomes.map(o => o.result),
    Array(6).fill('applied')
  )
  t.same(
    outcomes.map(o => o.effect),
    effects,
    'outcomes in the order of the effects'
  )
  t.equal(api.requests.length, 6)
  t.ok(api.maxInFlight <= 2, `never more than 2 in flight (saw ${api.maxInFlight})`)
})

t.test('effects the executor cannot express fail without a request', async t => {
  const api = await fakeApi(t)
  const executor = executorFor(t, api.url)
  const notAPod: Effect = {
    type: 'InjectEphemeralContainers',
    target: { apiVersion: 'jobhooks.io/v1alpha1', kind: 'EphemeralJob', namespace: 'team-a', name: 'x', uid: 'u' },
    containers: []
  }
  const [outcome] = await executor.apply(PARENT, [notAPod])
  t.equal(outcome?.result, 'failed')
  t.match(outcome?.message, /ephemeral containers go into Pods/)
  t.equal(api.requests.length, 0, 'nothing was written')
  // What a Delete may name at all, whatever its parent.
  const target = (apiVersion: string, kind: string, namespace?: string): ObjectRef => ({
    apiVersion,
    kind,
    name: 'x',
    uid: 'u',
    ...(namespace !== undefined ? { namespace } : {})
  })
  t.throws(
    () => requestFor({ type: 'Delete', target: target('v1', 'ConfigMap', 'team-a') }),
    /^unknown kind ConfigMap: effects act on Pod, EphemeralJob, OperationJob, CollaSet, JobFlow$/
  )
  t.throws(
    () => requestFor({ type: 'Delete', target: target('v1', 'Pod', 'team-a') }),
    /deleting a Pod is not an effect this service may apply/,
    'only what EFFECT_PERMISSIONS grants'
  )
  t.throws(
    () => requestFor({ type: 'Delete', target: target('example.com/v1', 'EphemeralJob', 'team-a') }),
    /EphemeralJob is in API group "jobhooks.io", not in example.com\/v1/
  )
  t.throws(
    () => requestFor({ type: 'Delete', target: target('jobhooks.io/v1alpha1', 'EphemeralJob') }),
    /has no namespace/
  )
  t.same(
    EFFECT_PERMISSIONS.Delete.map(p => p.resource),
    ['ephemeraljobs', 'operationjobs', 'jobflows']
  )
})

t.test(
  'the parent is confirmed first, with one GET: unknown, or another object of its name, gets nothing written',
  async t => {
    const parentPath = '/apis/jobhooks.io/v1alpha1/namespaces/team-a/ephemeraljobs/ej'
    const known = await fakeApi(t)
    const effects = [inject('web-0'), inject('web-1')]
    t.same(
      (await executorFor(t, known.url).apply(PARENT, effects)).map(o => o.result),
      ['applied', 'applied']
    )
    t.same(
      known.reads.map(r => `${r.method} ${r.url}`),
      [`GET ${parentPath}`],
      'one read of the parent per sync'
    )
    t.equal(known.reads[0]?.headers.authorization, `Bearer ${TOKEN}`)

    const unknown = await fakeApi(t, undefined, () => ({
      status: 404,
      body: status(404, 'ephemeraljobs.jobhooks.io "ej" not found')
    }))
    const outcomes = await executorFor(t, unknown.url).apply(PARENT, effects)
    t.same(
      outcomes.map(o => [o.result, o.message]),
      Array(2).fill(['refused', 'the API server has no EphemeralJob team-a/ej: the parent is unknown'])
    )
    t.equal(unknown.requests.length, 0, 'nothing written for a parent the API server does not have')

    const recreated = await fakeApi(t, undefined, () => ({
      status: 200,
      body: { metadata: { name: 'ej', uid: 'uid-new' } }
    }))
    const [other] = await executorFor(t, recreated.url).apply(PARENT, effects)
    t.same(
      [other?.result, other?.message],
      ['refused', "the API server's EphemeralJob team-a/ej has UID uid-new, not uid-ej: the parent is unknown"]
    )
    t.equal(recreated.requests.length, 0)

    const failing = await fakeApi(t, undefined, () => ({ status: 503, body: status(503, 'etcd is slow') }))
    const [doubt] = await executorFor(t, failing.url).apply(PARENT, effects)
    t.same(
      [doubt?.result, doubt?.message],
      ['failed', 'cannot confirm the parent EphemeralJob team-a/ej: HTTP 503: etcd is slow'],
      'an API error is a failure to retry'
    )
    t.equal(failing.requests.length, 0)
  }
)

t.test(
  "effects act only within the parent's namespace, a Delete only on the parent itself; no parent UID, no effect",
  async t => {
    const api = await fakeApi(t)
    const executor = executorFor(t, api.url)
    const elsewhere: Effect = { ...inject('web-0'), target: { ...pod('web-0'), namespace: 'kube-system' } }
    const deleteOther = deleteEjob('someone-else')
    const outcomes = await executor.apply(PARENT, [inject('web-1'), elsewhere, deleteOther, deleteEjob('ej')])
    t.same(
      outcomes.map(o => [o.effect.target.name, o.result, o.message]),
      [
        ['web-1', 'applied', undefined],
        ['web-0', 'refused', "outside the parent's namespace team-a"],
        ['someone-else', 'refused', 'a Delete acts only on the parent itself'],
        ['ej', 'applied', undefined]
      ]
    )
    t.same(
      api.requests.map(r => `${r.method} ${r.url}`),
      [
        'PATCH /api/v1/namespaces/team-a/pods/web-1/ephemeralcontainers',
        'DELETE /apis/jobhooks.io/v1alpha1/namespaces/team-a/ephemeraljobs/ej'
      ]
    )

    const none = await fakeApi(t)
    // eslint-disable-next-line no-useless-call -- the executor's own apply, not Function.prototype.apply
    const [noUid] = await executorFor(t, none.url).apply(undefined, [inject('web-1')])
    t.same([noUid?.result, noUid?.message], ['refused', 'the parent in the request has no UID'])
    t.same([none.reads.length, none.requests.length], [0, 0], 'nothing read, nothing written')
  }
)

t.test('a network error fails the effect; no effects, no request', async t => {
  const api = await fakeApi(t)
  t.same(await executorFor(t, api.url).apply(parentOf([]), []), [])
  t.equal(api.requests.length, 0)
  // Nothing listens on port 1.
  const [outcome] = await executorFor(t, 'http://127.0.0.1:1').apply(parentOf([inject('web-1')]), [inject('web-1')])
  t.equal(outcome?.result, 'failed')
  t.match(outcome?.message, /^cannot confirm the parent EphemeralJob team-a\/ej: .*ECONNREFUSED/)
})

/** An EphemeralJob sync whose hook asks for two injections and its own deletion; its parent is team-a/c. */
async function injectingApp (t: Test, api: FakeApi) {
  const injecting: KindHooks = {
    kind: 'ephemeraljob',
    phaseField: 'phase',
    sync: () => ({
      response: { status: { phase: 'Running', conditions: [] }, children: [] },
      effects: [inject('a'), inject('b'), deleteEjob('c')]
    })
  }
  const request = fixture('ephemeraljob/sync-new.v2.json')
  request.parent.metadata = { ...request.parent.metadata, namespace: 'team-a', name: 'c', uid: 'uid-c' }
  const app = await testApp(t, { kinds: [injecting], effects: executorFor(t, api.url) })
  return { app, request }
}

t.test('the sync route applies effects through the cluster executor and counts them', async t => {
  const api = await fakeApi(t, request =>
    request.url.includes('/b/')
      ? { status: 422, body: status(422, 'ephemeral containers are disabled') }
      : { status: 200, body: {} }
  )
  const { app, request } = await injectingApp(t, api)
  const body = (await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: request })).json()
  t.equal(api.requests.length, 3)
  t.same(
    api.reads.map(r => r.url),
    ['/apis/jobhooks.io/v1alpha1/namespaces/team-a/ephemeraljobs/c']
  )
  t.match(body.status.conditions, [
    {
      type: 'EffectsApplied',
      status: 'False',
      message: 'inject debug into Pod team-a/b: HTTP 422: ephemeral containers are disabled'
    }
  ])
  t.equal(body.resyncAfterSeconds, 5)
  const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /jobhooks_effects_total\{type="InjectEphemeralContainers",result="applied"\} 1/)
  t.match(metrics, /jobhooks_effects_total\{type="InjectEphemeralContainers",result="failed"\} 1/)
  t.match(metrics, /jobhooks_effects_total\{type="Delete",result="applied"\} 1/)
})

t.test(
  'a sync naming a parent the API server does not have writes nothing, and says so in its answer and metrics',
  async t => {
    const api = await fakeApi(t, undefined, () => ({ status: 404, body: status(404, 'not found') }))
    const { app, request } = await injectingApp(t, api)
    const body = (await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: request })).json()
    t.equal(api.requests.length, 0, 'nothing written')
    t.match(body.status.conditions, [
      {
        type: 'EffectsApplied',
        status: 'False',
        reason: 'EffectRefused',
        message:
          new RegExp('^delete EphemeralJob team-a/c: the API server has no EphemeralJob team-a/c: ' +
            'the parent is unknown; inject debug into Pod team-a/a: ')
      }
    ])
    t.notOk('resyncAfterSeconds' in body, 'a refusal is not retried sooner')
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    t.match(metrics, /jobhooks_effects_total\{type="InjectEphemeralContainers",result="refused"\} 2/)
    t.match(metrics, /jobhooks_effects_total\{type="Delete",result="refused"\} 1/)
  }
)

t.test('start-up: the executor follows the credentials', async t => {
  const options = { concurrency: 8, budgetMs: 5000 }

  const none = await loadCredentials({})
  t.equal(none.source, 'none')
  const dryRun = selectExecutor(none, options)
  t.equal(dryRun.executor.mode, 'dry-run', 'no credentials: dry-run')
  t.match(dryRun.message, /^no cluster credentials: effects are recorded, not applied \(dry-run\)/)
  t.equal(dryRun.level, 'info')

  const file = kubeconfigFor(t.testdir({}), 'http://127.0.0.1:6443')
  const fromFile = await loadCredentials({ KUBECONFIG: file })
  t.equal(fromFile.source, 'kubeconfig')
  const cluster = selectExecutor(fromFile, options)
  t.equal(cluster.executor.mode, 'cluster', 'KUBECONFIG: cluster')
  t.match(cluster.message, /effects are applied to the cluster \(KUBECONFIG .*server http:\/\/127\.0\.0\.1:6443/)

  await t.rejects(
    loadCredentials({ KUBECONFIG: join(t.testdir({}), 'missing') }),
    /KUBECONFIG=.*missing cannot be read/,
    'a KUBECONFIG that cannot be read is an error, not a dry-run'
  )

  const prefix = t.testdir({})
  const noToken = await loadCredentials({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, prefix)
  t.equal(noToken.source, 'none', 'in a Pod without a mounted token: dry-run')
  t.equal(selectExecutor(noToken, options).level, 'warn', 'and says so loudly')

  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT }
  t.teardown(() => {
    for (const [name, value] of [
      ['KUBERNETES_SERVICE_HOST', saved.host],
      ['KUBERNETES_SERVICE_PORT', saved.port]
    ] as const) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  })
  process.env.KUBERNETES_SERVICE_HOST = '10.0.0.1'
  process.env.KUBERNETES_SERVICE_PORT = '443'
  mkdirSync(join(prefix, SERVICE_ACCOUNT_DIR), { recursive: true })
  writeFileSync(join(prefix, SERVICE_ACCOUNT_DIR, 'token'), 'sa-token')
  const inCluster = await loadCredentials(
    process.env.KUBECONFIG === undefined ? process.env : { ...process.env, KUBECONFIG: '' },
    prefix
  )
  t.equal(inCluster.source, 'in-cluster')
  if (inCluster.source === 'in-cluster') {
    t.equal(inCluster.kubeConfig.getCurrentCluster()?.server, 'https://10.0.0.1:443')
  }
  t.equal(selectExecutor(inCluster, options).executor.mode, 'cluster', 'service account: cluster')
})
