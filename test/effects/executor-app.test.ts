// The cluster executor in the app: the sync route applies effects through it and counts them, a
// sync whose parent the API server lacks writes nothing, and the choice of executor at start-up.
import t, { type Test } from 'tap'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SERVICE_ACCOUNT_DIR, loadCredentials, selectExecutor } from '../../src/effects/executor.js'
import { testApp } from '../helpers/app.js'
import { fixture } from '../helpers/fixtures.js'
import { kubeconfigFor } from '../helpers/fake-api-server.js'
import type { KindHooks } from '../../src/protocol/hooks.js'
import { type FakeApi, fakeApi, executorFor, inject, deleteEjob, status } from '../helpers/executor.js'

/** An EphemeralJob sync whose hook asks for two injections and its own deletion; its parent is team-a/c. */
async function injectingApp (t: Test, api: FakeApi) {
  const injecting: KindHooks = {
    kind: 'ephemeraljob',
    phaseField: 'phase',
    statusFields: ['phase', 'conditions'],
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
