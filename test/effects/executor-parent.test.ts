// The cluster executor confirms the parent before anything is written, and keeps effects within
// its reach: its namespace, and a Delete only on the parent itself.
import t from 'tap'
import type { Effect } from '../../src/effects/types.js'
import { TOKEN, fakeApi, executorFor, pod, inject, deleteEjob, status, PARENT } from '../helpers/executor.js'

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
