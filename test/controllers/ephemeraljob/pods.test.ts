import t from 'tap'
import { syncEphemeralJob } from '../../../src/controllers/ephemeraljob/sync.js'
import { selectorMatches, selectorProblems } from '../../../src/k8s/selectors.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { InjectEphemeralContainers } from '../../../src/effects/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { specOf } from '../../helpers/objects.js'
import { listOf } from '../../helpers/records.js'
import type { PodRecord } from '../../../src/controllers/ephemeraljob/records.js'
import type { EphemeralContainer } from 'kubernetes-types/core/v1.js'

/** The part of an EphemeralJob's spec these tests edit: its template's containers (one at least). */
interface TemplateSpec {
  parallelism?: number
  template: { ephemeralContainers: [EphemeralContainer, ...EphemeralContainer[]] }
}

const FIRST = 'helloworld-865cd8865b-nl8lq'
const SECOND = 'helloworld-865cd8865b-xmtrv'

function sync (request: SyncRequest): SyncAnswer {
  return syncEphemeralJob(request, context())
}
function pod (request: SyncRequest, name: string): any {
  return Object.values(request.related['Pod.v1'] ?? {}).find(p => p.metadata.name === name)
}
function record (answer: SyncAnswer, name: string): PodRecord | undefined {
  return listOf<PodRecord>(answer.response.status, 'pods').find(p => p.name === name)
}
function injections (answer: SyncAnswer): InjectEphemeralContainers[] {
  return answer.effects.filter((e): e is InjectEphemeralContainers => e.type === 'InjectEphemeralContainers')
}

t.test('container states: fatal waiting reasons fail, pulling waits, a missing exit code fails', async t => {
  const cases: Array<[Record<string, unknown>, string, RegExp | undefined]> = [
    [
      { waiting: { reason: 'RunContainerError', message: 'exec: "pidof": not found' } },
      'Failed',
      /helloworld-ec could not start: RunContainerError: exec/
    ],
    [{ waiting: { reason: 'CreateContainerConfigError' } }, 'Failed', /could not start: CreateContainerConfigError$/],
    [{ waiting: { reason: 'ImagePullBackOff' } }, 'Waiting', undefined],
    [{ waiting: {} }, 'Waiting', undefined],
    [{}, 'Waiting', undefined],
    [{ terminated: { reason: 'OOMKilled' } }, 'Failed', /exited with code unknown \(OOMKilled\)/],
    [{ terminated: { exitCode: 137, reason: '' } }, 'Failed', /exited with code 137$/]
  ]
  for (const [state, phase, message] of cases) {
    const request = fixture('ephemeraljob/sync-running.v2.json')
    pod(request, FIRST).status.ephemeralContainerStatuses[0].state = state
    const answer = sync(request)
    t.equal(record(answer, FIRST)?.phase, phase, JSON.stringify(state))
    if (message !== undefined) t.match(record(answer, FIRST)?.message, message)
  }
})

t.test('a chosen Pod that stops before its container is injected fails; so does one another job took ' +
  'first', async t => {
  const stopped = fixture('ephemeraljob/sync-running.v2.json')
  const first = pod(stopped, FIRST)
  delete first.spec.ephemeralContainers
  delete first.status.ephemeralContainerStatuses
  first.status.phase = 'Succeeded'
  const answer = sync(stopped)
  t.match(
    record(answer, FIRST),
    { phase: 'Failed', message: 'the Pod stopped before its ephemeral containers were injected' }
  )
  t.same(injections(answer).map(e => e.target.name), [SECOND], 'the slot goes to the next Pod')

  const taken = fixture('ephemeraljob/sync-running.v2.json')
  const env = pod(taken, FIRST).spec.ephemeralContainers[0].env
  env[1].value = 'another-uid'
  t.match(record(sync(taken), FIRST), { phase: 'Failed', message: 'helloworld-ec was injected by someone else' })
})

t.test('Pods that cannot be chosen: terminating, not running, or without the target container', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  pod(request, FIRST).metadata.deletionTimestamp = '2026-01-02T03:04:00Z'
  pod(request, SECOND).status.phase = 'Pending'
  pod(request, 'helloworld-no-work-6cc445bc7-t286v').spec.containers[0].name = 'other'
  specOf(request.parent).parallelism = 4
  const answer = sync(request)
  t.same(injections(answer).map(e => e.target.name), ['helloworld-no-work-6cc445bc7-d967c'])
  t.equal(answer.response.status.match, 4, 'match counts every Pod the selector matches')
})

t.test('a Pod\'s containers are injected together, and only the missing ones again', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  const spec = specOf<TemplateSpec>(request.parent)
  spec.parallelism = 3
  spec.template.ephemeralContainers.push({ ...spec.template.ephemeralContainers[0], name: 'second' })
  const answer = sync(request)
  t.same(
    injections(answer).map(e => [e.target.name, e.containers.map(c => c.name)]),
    [[FIRST, ['helloworld-ec', 'second']]],
    'one Pod: two containers fill 2 of 3 slots'
  )
  t.equal(answer.response.status.waiting, 1)

  const partial = fixture('ephemeraljob/sync-running.v2.json')
  specOf(partial.parent).parallelism = 2
  const containers = specOf<TemplateSpec>(partial.parent).template.ephemeralContainers
  containers.push({ ...containers[0], name: 'second' })
  const again = sync(partial)
  t.same(injections(again).map(e => [e.target.name, e.containers.map(c => c.name)]), [[FIRST, ['second']]])
  t.equal(record(again, FIRST)?.phase, 'Running')
})

t.test('an env var named like ours in the template is replaced, not duplicated', async t => {
  const request = fixture('ephemeraljob/sync-new.v2.json')
  specOf<TemplateSpec>(request.parent).template.ephemeralContainers[0].env = [
    { name: 'ephemeraljob', value: 'spoofed' },
    { name: 'MODE', value: 'x' }
  ]
  const [effect] = injections(sync(request))
  t.same(
    effect?.containers[0]?.env?.map(e => `${e.name}=${e.value ?? ''}`),
    ['MODE=x', 'ephemeraljob=hello-world-ephemeral-job', 'EPHEMERALJOB_UID=5d1c9a4e-7b3f-4c2a-9e61-2f8d0b7a4c11']
  )
})

t.test('selectors match the way the API server matches them', async t => {
  const labels = { app: 'web', tier: 'front' }
  t.ok(selectorMatches({ matchLabels: { app: 'web' } }, labels))
  t.notOk(selectorMatches({ matchLabels: { app: 'db' } }, labels))
  t.ok(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, labels))
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels))
  t.ok(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels))
  t.ok(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, labels))
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, labels))
  t.notOk(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, undefined))
  t.same(selectorProblems({ matchLabels: { 'example.com/app': 'web-1' } }, 's'), [])
  t.match(selectorProblems('app=web', 's'), [/must be a label selector/])
  t.match(selectorProblems({ matchLabels: 'app=web' }, 's'), [/matchLabels must map/])
  t.match(selectorProblems({ matchLabels: { app: 'not valid!' } }, 's'), [/not a valid label value/])
  t.match(selectorProblems({ matchExpressions: 'x' }, 's'), [/must be a list/])
  t.match(selectorProblems({ matchExpressions: ['x'] }, 's'), [/must be \{key, operator, values\}/])
  t.match(
    selectorProblems({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['b'] }] }, 's'),
    [/takes no values/]
  )
  t.match(
    selectorProblems({ matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] }, 's'),
    [/values must be a list of label values/]
  )
})

t.test('an invalid spec of a finished job keeps its phase; its memory stays', async t => {
  const request = fixture('ephemeraljob/sync-ttl-finished.v2.json')
  specOf(request.parent).parallelism = 0
  const answer = sync(request)
  t.equal(answer.response.status.phase, 'Failed')
  t.equal(listOf<PodRecord>(answer.response.status, 'pods').length, 4)
  t.same(answer.effects, [], 'not even the TTL deletion on doubt')
})
