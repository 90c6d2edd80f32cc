// The cluster executor's answers: how the API server's answers are classified, the time budget,
// bounded concurrency, effects it cannot express, and a network error.
import t from 'tap'
import { EFFECT_PERMISSIONS, requestFor } from '../../src/effects/executor.js'
import type { Effect, ObjectRef } from '../../src/effects/types.js'
import { type Answer, fakeApi, executorFor, inject, deleteEjob, status, PARENT, parentOf } from '../helpers/executor.js'

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
    new RegExp('^unknown kind ConfigMap: effects act on Pod, PersistentVolumeClaim, EphemeralJob, OperationJob, ' +
      'CollaSet, JobFlow, CronJobFlow$')
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

t.test('a network error fails the effect; no effects, no request', async t => {
  const api = await fakeApi(t)
  t.same(await executorFor(t, api.url).apply(parentOf([]), []), [])
  t.equal(api.requests.length, 0)
  // Nothing listens on port 1.
  const [outcome] = await executorFor(t, 'http://127.0.0.1:1').apply(parentOf([inject('web-1')]), [inject('web-1')])
  t.equal(outcome?.result, 'failed')
  t.match(outcome?.message, /^cannot confirm the parent EphemeralJob team-a\/ej: .*ECONNREFUSED/)
})
