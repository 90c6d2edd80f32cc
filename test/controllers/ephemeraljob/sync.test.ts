import t from 'tap'
import { syncEphemeralJob } from '../../../src/controllers/ephemeraljob/sync.js'
import { customizeEphemeralJob } from '../../../src/controllers/ephemeraljob/customize.js'
import type { CustomizeRequest, SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { InjectEphemeralContainers } from '../../../src/effects/types.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { FIXED_NOW, testApp } from '../../helpers/app.js'
import { timestamp } from '../../../src/k8s/time.js'
import { condition } from '../../helpers/conditions.js'
import { specOf, statusOf } from '../../helpers/objects.js'
import { listOf } from '../../helpers/records.js'
import type { PodRecord } from '../../../src/controllers/ephemeraljob/records.js'

const NOW = timestamp(FIXED_NOW)
const JOB_UID = '5d1c9a4e-7b3f-4c2a-9e61-2f8d0b7a4c11'
const POD = [
  'helloworld-865cd8865b-nl8lq',
  'helloworld-865cd8865b-xmtrv',
  'helloworld-no-work-6cc445bc7-d967c',
  'helloworld-no-work-6cc445bc7-t286v'
] as const

function sync (request: SyncRequest, now: Date = FIXED_NOW): SyncAnswer {
  return syncEphemeralJob(request, context(now))
}
function injections (answer: SyncAnswer): InjectEphemeralContainers[] {
  return answer.effects.filter((e): e is InjectEphemeralContainers => e.type === 'InjectEphemeralContainers')
}
function pods (request: SyncRequest): any[] {
  return Object.values(request.related['Pod.v1'] ?? {})
}
/** The Pods a request relates, by namespace/name, to add one to. */
function relatedPods (request: SyncRequest): Record<string, KubeObject> {
  const byName = request.related['Pod.v1']
  if (byName === undefined) throw new Error('the fixture relates no Pods')
  return byName
}
function podNamed (request: SyncRequest, name: string): any {
  return pods(request).find(p => p.metadata.name === name)
}

t.test('customize asks for the Pods the selector matches in the job\'s namespace (under v2 a label rule without one ' +
  'lists every namespace)', async t => {
  const request = fixture<CustomizeRequest>('ephemeraljob/customize.json')
  t.same(
    customizeEphemeralJob(request),
    {
      relatedResources: [{
        apiVersion: 'v1',
        resource: 'pods',
        namespace: request.parent.metadata.namespace,
        labelSelector: { matchLabels: { app: 'helloworld' } }
      }]
    }
  )
  t.ok(request.parent.metadata.namespace, 'the fixture\'s job has a namespace')
  const expressions = fixture<CustomizeRequest>('ephemeraljob/customize.json')
  specOf(expressions.parent).selector = {
    matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }, { key: 'x', operator: 'Exists' }]
  }
  t.same(
    customizeEphemeralJob(expressions).relatedResources[0]?.labelSelector,
    { matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'b'] }, { key: 'x', operator: 'Exists' }] }
  )
  const bad = fixture<CustomizeRequest>('ephemeraljob/customize.json')
  specOf(bad.parent).selector = {}
  t.same(customizeEphemeralJob(bad), { relatedResources: [] }, 'an empty selector asks for nothing')
})

t.test('a new job injects into the oldest running Pod only (parallelism 1)', async t => {
  const answer = sync(fixture('ephemeraljob/sync-new.v2.json'))
  const { status } = answer.response
  t.same(answer.response.children, [], 'no children')
  t.match(status, { phase: 'Waiting', match: 4, succeeded: 0, failed: 0, running: 0, waiting: 1, startTime: NOW })
  t.notOk('completionTime' in status)
  t.same(status.pods, [{ name: POD[0], uid: 'a1b2c3d4-0000-4000-8000-000000000001', phase: 'Waiting' }])
  t.match(condition(answer.response.status, 'Valid'), { status: 'True', lastTransitionTime: NOW })
  t.same(answer.effects, [{
    type: 'InjectEphemeralContainers',
    target: {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'default',
      name: POD[0],
      uid: 'a1b2c3d4-0000-4000-8000-000000000001'
    },
    containers: [{
      name: 'helloworld-ec',
      image: 'busybox:1.36',
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePolicy: 'File',
      targetContainerName: 'helloworld',
      command: ['pidof', 'helloworld'],
      tty: true,
      stdin: true,
      env: [{ name: 'ephemeraljob', value: 'hello-world-ephemeral-job' }, { name: 'EPHEMERALJOB_UID', value: JOB_UID }]
    }]
  }])
  // ttlSecondsAfterCreated 1800 from 03:00:00: due at 03:30:00, 1555 s after 03:04:05.
  t.equal(answer.response.resyncAfterSeconds, 1555, 'resync when the TTL is due')
})

t.test('parallelism picks the oldest Pods first, by creation time then name', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  specOf(request.parent).parallelism = 3
  const answer = sync(request)
  t.same(injections(answer).map(e => e.target.name), [POD[0], POD[1], POD[3]])
  t.equal(answer.response.status.waiting, 3)
  specOf(request.parent).replicas = 2
  t.same(injections(sync(request)).map(e => e.target.name), [POD[0], POD[1]], 'never more than replicas Pods')
})

t.test('v1 and v2 keying give byte-identical answers, and so does a repeated call', async t => {
  for (const name of ['sync-new', 'sync-running', 'sync-mixed-done']) {
    const v1 = JSON.stringify(sync(fixture(`ephemeraljob/${name}.v1.json`)))
    const v2 = JSON.stringify(sync(fixture(`ephemeraljob/${name}.v2.json`)))
    t.equal(v1, v2, name)
    t.equal(JSON.stringify(sync(fixture(`ephemeraljob/${name}.v2.json`))), v2, `${name} again`)
  }
})

t.test('a running container holds the only slot: nothing else is injected', async t => {
  const answer = sync(fixture('ephemeraljob/sync-running.v2.json'))
  t.match(
    answer.response.status,
    { phase: 'Running', running: 1, waiting: 0, succeeded: 0, startTime: '2026-01-02T03:00:01Z' }
  )
  t.same(answer.effects, [], 'the container is there: no effect')
  t.same(answer.response.status.pods, [{ name: POD[0], uid: 'a1b2c3d4-0000-4000-8000-000000000001', phase: 'Running' }])
})

t.test('a waiting (injected, not started) container counts against parallelism too', async t => {
  const request = fixture('ephemeraljob/sync-running.v2.json')
  podNamed(request, POD[0]).status.ephemeralContainerStatuses[0].state = { waiting: { reason: 'ContainerCreating' } }
  const answer = sync(request)
  t.match(answer.response.status, { phase: 'Waiting', running: 0, waiting: 1 })
  t.same(answer.effects, [])
})

t.test('a chosen Pod whose container is not there yet is injected again (a lost effect is recomputed)', async t => {
  const request = fixture('ephemeraljob/sync-running.v2.json')
  const pod = podNamed(request, POD[0])
  delete pod.spec.ephemeralContainers
  delete pod.status.ephemeralContainerStatuses
  const answer = sync(request)
  t.same(injections(answer).map(e => e.target.name), [POD[0]], 'the same Pod again, no other')
  t.equal(answer.response.status.waiting, 1)
})

t.test('when the last Pod finishes with mixed outcomes the job ends Failed, never stuck', async t => {
  const answer = sync(fixture('ephemeraljob/sync-mixed-done.v2.json'))
  const { status } = answer.response
  t.match(
    status,
    {
      phase: 'Failed',
      match: 4,
      succeeded: 2,
      failed: 2,
      running: 0,
      waiting: 0,
      startTime: '2026-01-02T03:00:01Z',
      completionTime: NOW
    }
  )
  t.same(
    listOf<PodRecord>(status, 'pods').map(p => `${p.name}=${p.phase}`),
    [`${POD[0]}=Succeeded`, `${POD[1]}=Succeeded`, `${POD[3]}=Failed`, `${POD[2]}=Failed`],
    'records keep the order chosen'
  )
  t.same(
    listOf<PodRecord>(status, 'pods')[3],
    {
      name: POD[2],
      uid: 'a1b2c3d4-0000-4000-8000-000000000003',
      phase: 'Failed',
      completionTime: '2026-01-02T03:00:04Z',
      message: 'helloworld-ec exited with code 1 (Error)'
    }
  )
  t.match(
    condition(answer.response.status, 'Failed'),
    { status: 'True', reason: 'PodsFailed', message: /2 of 4 Pods failed: .*t286v.*d967c/ }
  )
  t.same(answer.effects, [])
  t.equal(answer.response.resyncAfterSeconds, 1555, 'the TTL after creation still counts')
})

t.test('every Pod succeeding ends Succeeded with Complete', async t => {
  const request = fixture('ephemeraljob/sync-mixed-done.v2.json')
  for (const pod of pods(request)) pod.status.ephemeralContainerStatuses[0].state.terminated.exitCode = 0
  const records = statusOf<{ pods: Array<Record<string, unknown>> }>(request.parent).pods
  const third: Record<string, unknown> = { ...records[2], phase: 'Running' }
  delete third.completionTime
  delete third.message
  records[2] = third
  const answer = sync(request)
  t.match(answer.response.status, { phase: 'Succeeded', succeeded: 4, failed: 0, completionTime: NOW })
  t.match(
    condition(answer.response.status, 'Complete'),
    { status: 'True', reason: 'AllPodsSucceeded', message: '4 of 4 Pods succeeded' }
  )
})

t.test('fewer matched Pods than replicas: finished once they are done (kruise#2514)', async t => {
  const request = fixture('ephemeraljob/sync-mixed-done.v2.json')
  specOf(request.parent).replicas = 10
  t.match(sync(request).response.status, { phase: 'Failed', succeeded: 2, failed: 2 })
  specOf(request.parent).replicas = undefined
  t.match(sync(request).response.status, { phase: 'Failed' }, 'and without replicas')
})

t.test('a Pod still starting (Pending) keeps the job open: it may still be chosen', async t => {
  const request = fixture('ephemeraljob/sync-mixed-done.v2.json')
  const extra = structuredClone(podNamed(request, POD[0]))
  extra.metadata.name = 'helloworld-865cd8865b-late1'
  extra.metadata.uid = 'a1b2c3d4-0000-4000-8000-0000000000ff'
  extra.metadata.creationTimestamp = '2026-01-02T03:04:00Z'
  delete extra.spec.ephemeralContainers
  extra.status = { phase: 'Pending' }
  relatedPods(request)['default/helloworld-865cd8865b-late1'] = extra
  specOf(request.parent).replicas = 5
  const pending = sync(request)
  t.match(pending.response.status, { phase: 'Running', match: 5, succeeded: 2, failed: 2 })
  t.same(pending.effects, [])
  extra.status = { phase: 'Running' }
  t.same(injections(sync(request)).map(e => e.target.name), ['helloworld-865cd8865b-late1'], 'injected once it runs')
  specOf(request.parent).replicas = 4
  extra.status = { phase: 'Pending' }
  t.match(sync(request).response.status, { phase: 'Failed' }, 'not when replicas is already reached')
})

t.test('law 6: a finished Pod that disappears still counts; an unfinished one that disappears fails', async t => {
  const request = fixture('ephemeraljob/sync-mixed-done.v2.json')
  const related = request.related['Pod.v1'] as Record<string, KubeObject>
  delete related[`default/${POD[0]}`]
  delete related[`default/${POD[2]}`]
  const answer = sync(request)
  const { status } = answer.response
  t.match(status, { phase: 'Failed', match: 2, succeeded: 2, failed: 2 })
  t.match(
    listOf<PodRecord>(status, 'pods')[0],
    { name: POD[0], phase: 'Succeeded', completionTime: '2026-01-02T03:00:04Z' }
  )
  t.match(
    listOf<PodRecord>(status, 'pods')[3],
    {
      name: POD[2],
      phase: 'Failed',
      message: 'the Pod disappeared, or stopped matching the selector, before its ephemeral containers finished',
      completionTime: NOW
    }
  )
})

t.test('a Pod with a same-named container not injected by this job is skipped (an earlier job of the same ' +
  'name)', async t => {
  const answer = sync(fixture('ephemeraljob/sync-foreign.v2.json'))
  t.same(injections(answer).map(e => e.target.name), [POD[1]], 'the next Pod instead')
  t.match(answer.response.status, { match: 4, succeeded: 0, waiting: 1 })
  t.same(listOf<PodRecord>(answer.response.status, 'pods').map(p => p.name), [POD[1]])
})

t.test('containers of this job found in Pods the status does not remember are adopted, not injected twice', async t => {
  const request = fixture('ephemeraljob/sync-running.v2.json')
  delete request.parent.status
  const answer = sync(request)
  t.same(answer.effects, [])
  t.same(listOf<PodRecord>(answer.response.status, 'pods').map(p => `${p.name}=${p.phase}`), [`${POD[0]}=Running`])
})

t.test('paused: no new injection, phase Paused; resuming continues', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  specOf(request.parent).paused = true
  const paused = sync(request)
  t.match(paused.response.status, { phase: 'Paused', match: 4, waiting: 0 })
  t.notOk('startTime' in paused.response.status, 'the clock of activeDeadlineSeconds does not start while paused')
  t.same(paused.effects, [])
  const running = fixture('ephemeraljob/sync-mixed-done.v2.json')
  specOf(running.parent).paused = true
  specOf(running.parent).replicas = 6
  const extra = structuredClone(podNamed(running, POD[0]))
  Object.assign(extra.metadata, { name: 'late', uid: 'late-uid', creationTimestamp: '2026-01-02T03:04:00Z' })
  delete extra.spec.ephemeralContainers
  delete extra.status.ephemeralContainerStatuses
  relatedPods(running)['default/late'] = extra
  t.match(sync(running).response.status, { phase: 'Paused', succeeded: 2, failed: 2 }, 'paused with a Pod left to do')
  specOf(running.parent).paused = false
  t.same(injections(sync(running)).map(e => e.target.name), ['late'])
})

t.test('activeDeadlineSeconds: resync at the deadline, then Failed with DeadlineExceeded and no more ' +
  'injections', async t => {
  const request = fixture('ephemeraljob/sync-running.v2.json')
  specOf(request.parent).activeDeadlineSeconds = 300
  specOf(request.parent).ttlSecondsAfterCreated = undefined
  // started 03:00:01, deadline 03:05:01: 56 s after 03:04:05.
  const before = sync(request)
  t.equal(before.response.resyncAfterSeconds, 56)
  t.equal(before.response.status.phase, 'Running')
  const at = new Date('2026-01-02T03:05:01Z')
  // The running container finished: a slot is free, but the deadline has passed.
  podNamed(request, POD[0]).status.ephemeralContainerStatuses[0].state = {
    terminated: { exitCode: 0, finishedAt: '2026-01-02T03:05:00Z' }
  }
  const after = sync(request, at)
  t.match(after.response.status, { phase: 'Failed', completionTime: '2026-01-02T03:05:01Z', succeeded: 1 })
  t.match(condition(after.response.status, 'Failed'), { status: 'True', reason: 'DeadlineExceeded' })
  t.same(after.effects, [], 'nothing more is injected')
  t.notOk('resyncAfterSeconds' in after.response)
  // The finished status carried forward stays Failed, even when everything else succeeds.
  request.parent.status = after.response.status
  const later = sync(request, new Date('2026-01-02T03:10:00Z'))
  t.match(later.response.status, { phase: 'Failed', completionTime: '2026-01-02T03:05:01Z' })
  t.same(later.effects, [])
  t.equal(JSON.stringify(sync(request, new Date('2026-01-02T03:10:00Z'))), JSON.stringify(later), 'converged')
})

t.test('ttlSecondsAfterFinished: a Delete effect on the job itself, guarded by its uid, once due', async t => {
  const request = fixture('ephemeraljob/sync-ttl-finished.v2.json')
  const due = sync(request)
  t.same(
    due.effects,
    [{
      type: 'Delete',
      target: {
        apiVersion: 'jobhooks.io/v1alpha1',
        kind: 'EphemeralJob',
        namespace: 'default',
        name: 'hello-world-ephemeral-job',
        uid: JOB_UID
      }
    }]
  )
  t.match(due.response.status, { phase: 'Failed', completionTime: '2026-01-02T02:04:10Z' })
  const early = sync(request, new Date('2026-01-02T03:03:05Z'))
  t.same(early.effects, [])
  t.equal(early.response.resyncAfterSeconds, 60, 'resync when it is due')
})

t.test('ttlSecondsAfterCreated: a Delete effect once due, whatever the phase, and no injection with it', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  const answer = sync(request, new Date('2026-01-02T03:30:00Z'))
  t.same(answer.effects.map(e => e.type), ['Delete'])
  t.notOk('resyncAfterSeconds' in answer.response)
  request.parent.metadata.deletionTimestamp = '2026-01-02T03:30:00Z'
  t.same(sync(request, new Date('2026-01-02T03:30:01Z')).effects, [], 'nothing while it is being deleted')
})

t.test('an invalid spec injects nothing, says why in Valid, and reports phase Invalid, as every kind with a phase ' +
  'does', async t => {
  const answer = sync(fixture('ephemeraljob/sync-invalid.v2.json'))
  t.same(answer.effects, [])
  t.equal(answer.response.status.phase, 'Invalid')
  const valid = condition(answer.response.status, 'Valid')
  t.match(valid, { status: 'False', reason: 'InvalidSpec' })
  t.match(valid?.message, /spec.selector is empty/)
  t.match(valid?.message, /spec.parallelism must be a whole number from 1 to 10/)
  t.match(valid?.message, /container "helloworld-ec": imagePullPolicy is required/)
  t.same(answer.response.children, [])
  t.notOk('resyncAfterSeconds' in answer.response)
})

t.test('more invalid specs', async t => {
  const cases: Array<[string, (spec: any) => void, RegExp]> = [
    ['no selector', s => { delete s.selector }, /spec.selector is required/],
    ['a bad operator', s => { s.selector = { matchExpressions: [{ key: 'a', operator: 'Like' }] } }, /operator "Like"/],
    [
      'In without values',
      s => { s.selector = { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      /needs at least one value/
    ],
    ['a bad label key', s => { s.selector = { matchLabels: { 'bad key': 'x' } } }, /not a valid label key/],
    ['no containers', s => { s.template = { ephemeralContainers: [] } }, /at least one container/],
    [
      'no targetContainerName',
      s => { delete s.template.ephemeralContainers[0].targetContainerName },
      /targetContainerName is required/
    ],
    [
      'no terminationMessagePolicy',
      s => { delete s.template.ephemeralContainers[0].terminationMessagePolicy },
      /terminationMessagePolicy is required/
    ],
    ['no image', s => { delete s.template.ephemeralContainers[0].image }, /image is required/],
    ['ports', s => { s.template.ephemeralContainers[0].ports = [{ containerPort: 80 }] }, /cannot have ports/],
    ['parallelism 0', s => { s.parallelism = 0 }, /parallelism must be a whole number from 1 to 10/],
    [
      'more containers than parallelism',
      s => { s.template.ephemeralContainers.push({ ...s.template.ephemeralContainers[0], name: 'two' }) },
      /smaller than the number of ephemeral containers/
    ],
    ['a negative TTL', s => { s.ttlSecondsAfterCreated = -1 }, /ttlSecondsAfterCreated must be a whole number/]
  ]
  for (const [what, mutate, message] of cases) {
    const request = fixture('ephemeraljob/sync-new.v2.json')
    mutate(request.parent.spec)
    const answer = sync(request)
    t.same(answer.effects, [], `${what}: no effects`)
    t.match(condition(answer.response.status, 'Valid')?.message, message, what)
  }
})

t.test('through HTTP: the app hands the effects to the executor and answers only Metacontroller\'s fields', async t => {
  const recorded: any[] = []
  const app = await testApp(
    t,
    {
      effects: {
        mode: 'dry-run',
        apply: async (_parent, effects) => {
          recorded.push(...effects); return effects.map(effect => ({ effect, result: 'applied' as const }))
        }
      }
    }
  )
  const reply = await app.inject(
    { method: 'POST', url: '/hooks/ephemeraljob/sync', payload: fixture('ephemeraljob/sync-new.v1.json') }
  )
  t.equal(reply.statusCode, 200)
  const body = reply.json()
  t.same(Object.keys(body).sort(), ['children', 'resyncAfterSeconds', 'status'])
  t.same(recorded.map(e => `${e.type} ${e.target.name}`), [`InjectEphemeralContainers ${POD[0]}`])
  t.match(body.status.conditions, [{ type: 'Valid', status: 'True' }, { type: 'EffectsApplied', status: 'True' }])
  const customize = await app.inject(
    { method: 'POST', url: '/hooks/ephemeraljob/customize', payload: fixture('ephemeraljob/customize.json') }
  )
  t.equal(customize.statusCode, 200)
  t.same(customize.json().relatedResources.map((r: any) => r.resource), ['pods'])
})
