// CollaSet Pod names under kuperator's namingStrategy.podNamingSuffixPolicy (test/fixtures/collaset/
// sync-sequence.v2.json, curlable at its clock in test/fixtures/clocks.json): PersistentSequence
// names Pods <collaset>-<ordinal>, the lowest free ordinal first, with the hostname set; Random
// (the default) keeps the hashed suffixes; anything else is Invalid (law 2).
import t from 'tap'
import { syncCollaSet } from '../../../src/controllers/collaset/sync.js'
import type { SyncAnswer, SyncRequest } from '../../../src/protocol/hooks.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'

function sync (request: SyncRequest): SyncAnswer {
  return syncCollaSet(request, context())
}
function names (answer: SyncAnswer): string[] {
  return answer.response.children.map(c => c.metadata.name).sort()
}
/** The request with the answer's Pods observed, as Metacontroller would send it next. */
function observe (request: SyncRequest, pods: readonly KubeObject[]): void {
  const children: Record<string, KubeObject> = {}
  for (const pod of pods) {
    children[`default/${pod.metadata.name}`] = { ...pod, metadata: { ...pod.metadata, namespace: 'default' } }
  }
  request.children['Pod.v1'] = children
}

t.test('PersistentSequence: foo-0, foo-1, foo-2, each with its name as hostname', async t => {
  const request = fixture('collaset/sync-sequence.v2.json')
  const answer = sync(request)
  t.same(names(answer), ['foo-0', 'foo-1', 'foo-2'])
  for (const pod of answer.response.children) {
    t.equal((pod.spec as { hostname?: string }).hostname, pod.metadata.name, `${pod.metadata.name}: hostname`)
  }
  t.match(condition(answer.response.status, 'Valid'), { status: 'True' })
  t.same(sync(request), answer, 'deterministic')
})

t.test('PersistentSequence: the lowest free ordinal comes back once its Pod is gone', async t => {
  const request = fixture('collaset/sync-sequence.v2.json')
  const pods = sync(request).response.children
  observe(request, pods.filter(p => p.metadata.name !== 'foo-1'))
  t.same(names(sync(request)), ['foo-0', 'foo-1', 'foo-2'], 'foo-1 gone: a new foo-1')

  observe(request, pods.map(p => p.metadata.name === 'foo-1'
    ? { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-02T03:04:00Z' } }
    : p))
  t.same(names(sync(request)), ['foo-0', 'foo-1', 'foo-2', 'foo-3'],
    'foo-1 still terminating holds its name: the next free ordinal')

  observe(request, pods)
  specOf(request.parent).replicas = 5
  specOf(request.parent).scaleStrategy = { podToDelete: ['foo-3'] }
  t.same(names(sync(request)), ['foo-0', 'foo-1', 'foo-2', 'foo-4', 'foo-5'], 'a name podToDelete lists is skipped')
})

t.test('Random, named or by default, keeps the hashed suffixes and sets no hostname', async t => {
  for (const naming of [undefined, { podNamingSuffixPolicy: 'Random' }, {}]) {
    const request = fixture('collaset/sync-sequence.v2.json')
    if (naming === undefined) delete specOf(request.parent).namingStrategy
    else specOf(request.parent).namingStrategy = naming
    const answer = sync(request)
    for (const pod of answer.response.children) {
      t.match(pod.metadata.name, /^foo-[a-z0-9]{5}$/, JSON.stringify(naming))
      t.notOk((pod.spec as { hostname?: string }).hostname)
    }
  }
})

t.test('a naming policy it cannot read is Invalid, names the field, creates nothing (law 2)', async t => {
  for (const bad of [{ podNamingSuffixPolicy: 'Sequence' }, { podNamingSuffixPolicy: 1 }, 'PersistentSequence']) {
    const request = fixture('collaset/sync-sequence.v2.json')
    specOf(request.parent).namingStrategy = bad
    const answer = sync(request)
    t.same(answer.response.children, [], JSON.stringify(bad))
    t.match(condition(answer.response.status, 'Valid'), {
      status: 'False', reason: 'InvalidSpec', message: /spec\.namingStrategy/
    })
  }
})
