// The Replace and Recreate fixtures through the HTTP app, as a person would curl them:
//   curl -s localhost:8080/hooks/operationjob/sync -H 'content-type: application/json' \
//     -d @test/fixtures/operationjob/sync-replace-origin-gone.v2.json | jq .status
import t from 'tap'
import { fixture } from '../../helpers/fixtures.js'
import { testApp } from '../../helpers/app.js'

t.test('Replace: the origin gone and its replacement Ready → the walkthrough\'s first target Succeeded, the second ' +
  'Pending', async t => {
  const app = await testApp(t)
  const reply = await app.inject({
    method: 'POST',
    url: '/hooks/operationjob/sync',
    payload: fixture('operationjob/sync-replace-origin-gone.v2.json')
  })
  t.equal(reply.statusCode, 200)
  const { status, children } = reply.json()
  t.same(children, [])
  t.match(status, { progress: 'Processing', totalPodCount: 2, succeededPodCount: 1, failedPodCount: 0 })
  t.same(
    status.targetDetails.map((d: any) => [d.name, d.progress, d.extraInfo?.NewPod]),
    [['foo-jttd5', 'Succeeded', 'foo-mpl7n'], ['foo-752sz', 'Pending', undefined]]
  )
  t.equal(status.targetDetails[0].endTime, '2026-01-02T03:04:05Z')
  t.notOk(status.conditions.some((c: any) => c.type === 'EffectsApplied'), 'nothing owed, nothing applied')
})

t.test('Recreate: out of traffic and the delay over → the eviction is owed (dry-run records it), the controller ' +
  'remembered', async t => {
  const app = await testApp(t)
  const reply = await app.inject(
    { method: 'POST', url: '/hooks/operationjob/sync', payload: fixture('operationjob/sync-recreate-evict.v2.json') }
  )
  t.equal(reply.statusCode, 200)
  const { status } = reply.json()
  t.match(status.targetDetails[0], {
    progress: 'Processing',
    extraInfo: {
      Lifecycle: 'Operating',
      Controller: 'ReplicaSet/web-5d4f8b9c7',
      ControllerUID: 'rs-uid-web',
      PodUID: 'pod-uid-abcde',
      TrafficOffTime: '2026-01-02T03:00:05Z'
    }
  })
  t.match(
    status.conditions.find((c: any) => c.type === 'EffectsApplied'),
    { status: 'False', reason: 'DryRun', message: /^1 effect was recorded and not applied/ },
    'the dry-run executor recorded the Evict effect, and the status says it was not applied'
  )
})
