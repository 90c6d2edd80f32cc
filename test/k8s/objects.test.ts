// Reading groups of objects and returning observed children: the order must stay what it was
// when every comparison built `<namespace>/<name>` strings (the answers of every kind depend on
// it), and a kept child is its identity, or what Metacontroller last applied of it.
import t from 'tap'
import {
  keepAllObserved,
  keepAsApplied,
  keepAsObserved,
  LAST_APPLIED_ANNOTATION,
  lastApplied,
  objectsOf
} from '../../src/k8s/objects.js'
import { freezeForGood } from '../../src/k8s/derived.js'
import type { KubeObject, ObjectMap } from '../../src/k8s/types.js'

/** The order objectsOf gave before: by the `<namespace>/<name>` strings. */
function referenceOrder (objects: KubeObject[]): string[] {
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).map(key)
}

function object (name: string, namespace?: string, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
    ...extra
  }
}

t.test('objects sort as their "<namespace>/<name>" keys did, namespaces or not', async t => {
  // '-' and '.' sort before '/', digits and letters after it: "a-b/x" < "a/x" < "ab/x".
  const names = ['x', 'a', 'a-b', 'a.b', 'ab', 'a/b', 'A', 'é', '', 'node-10', 'node-9', 'node-1']
  const namespaces = [undefined, '', 'a', 'a-b', 'ab', 'a0', 'default', 'kube-system', 'z']
  const objects: KubeObject[] = []
  for (const ns of namespaces) for (const name of names) objects.push(object(name, ns))
  // A deterministic shuffle, so the sort has work to do.
  const shuffled = objects
    .map((o, i) => ({ o, k: (i * 7919) % objects.length }))
    .sort((a, b) => a.k - b.k)
    .map(x => x.o)
  const group: Record<string, KubeObject> = {}
  shuffled.forEach((o, i) => {
    group[`key-${i}`] = o
  })
  const map: ObjectMap = { 'ConfigMap.v1': group }
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  t.same(objectsOf(map, 'ConfigMap', 'v1').map(key), referenceOrder(shuffled))
  // One namespace (every child of a parent, every Node): the names alone decide.
  const nodes = ['w-10', 'w-2', 'w-1', 'w.1', 'w/1', 'w1'].map(n => object(n))
  t.same(
    objectsOf({ 'Node.v1': Object.fromEntries(nodes.map(n => [n.metadata.name, n])) }, 'Node', 'v1').map(key),
    referenceOrder(nodes)
  )
})

t.test('a namespace that is not a string sorts as its text did', async t => {
  const odd = [object('b', 5 as unknown as string), object('a', '5'), object('c'), object('a', 'x')]
  const key = (o: KubeObject): string => `${String(o.metadata.namespace ?? '')}/${o.metadata.name}`
  t.same(
    objectsOf({ 'ConfigMap.v1': Object.fromEntries(odd.map((o, i) => [String(i), o])) }, 'ConfigMap', 'v1').map(key),
    referenceOrder(odd).map(k => k)
  )
})

t.test('what is not an object with a name is left out, as before', async t => {
  const group = { a: object('a'), b: null, c: { metadata: {} }, d: 'x', e: object('e') } as unknown as Record<
    string,
    KubeObject
  >
  t.same(
    objectsOf({ 'ConfigMap.v1': group }, 'ConfigMap', 'v1').map(o => o.metadata.name),
    ['a', 'e']
  )
  t.same(objectsOf(undefined, 'ConfigMap', 'v1'), [])
})

t.test('an observed child is kept by its identity: apiVersion, kind, name and namespace', async t => {
  const observed = object('annotated', 'ns', { spec: { x: 1 }, status: { y: 2 }, z: [1] })
  observed.metadata.annotations = { a: '1' }
  observed.metadata.labels = { l: 'v' }
  observed.metadata.uid = 'u'
  t.equal(
    JSON.stringify(keepAsObserved(observed)),
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"annotated","namespace":"ns"}}'
  )
  t.equal(
    JSON.stringify(keepAsObserved(object('cluster-scoped'))),
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cluster-scoped"}}'
  )
})

t.test('keepAllObserved: groups by key, objects by namespace and name', async t => {
  const children: ObjectMap = {
    'Job.batch/v1': { 'ns/b': object('b', 'ns'), 'ns/a': object('a', 'ns') },
    'ConfigMap.v1': { 'ns/c': object('c', 'ns') }
  }
  t.same(
    keepAllObserved(children).map(o => o.metadata.name),
    ['c', 'a', 'b']
  )
})

/** A Job as Metacontroller created it from `applied`: the annotation holds the JSON of what it applied. */
function createdJob (applied: Record<string, any>, annotation = JSON.stringify(applied)): KubeObject {
  return {
    ...applied,
    metadata: {
      ...applied.metadata,
      uid: 'u',
      resourceVersion: '7',
      annotations: { ...applied.metadata.annotations, [LAST_APPLIED_ANNOTATION]: annotation },
      ownerReferences: [{ uid: 'p' }]
    },
    spec: { ...applied.spec, suspend: false, backoffLimit: 6 },
    status: { active: 1 }
  } as KubeObject
}

const APPLIED = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'flow-a', namespace: 'ns', labels: { 'controller-uid': 'p' }, annotations: { note: 'x' } },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } }
}

t.test('keepAsApplied: the object of the last-applied annotation, exactly', async t => {
  const observed = createdJob(APPLIED)
  t.same(
    keepAsApplied(observed),
    APPLIED,
    'what was applied, not what is observed (no defaults, status, system fields)'
  )
  t.notOk('status' in keepAsApplied(observed))
  // Go writes the annotation with sorted keys and escapes: parsed, it is the same object.
  const goStyle =
    '{"apiVersion":"batch/v1","kind":"Job",' +
    '"metadata":{"annotations":{"note":"\\u003cx\\u003e"},"name":"flow-a","namespace":"ns"}}'
  t.same(keepAsApplied(createdJob(APPLIED, goStyle)), {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { annotations: { note: '<x>' }, name: 'flow-a', namespace: 'ns' }
  })
})

t.test('lastApplied: parsed once, and frozen, for an object the memo keeps', async t => {
  const open = createdJob(APPLIED)
  const first = lastApplied(open)
  t.not(lastApplied(open), first, 'an object that may change is read again')
  const kept = freezeForGood(createdJob(APPLIED))
  const once = lastApplied(kept)
  t.ok(Object.isFrozen(once) && Object.isFrozen(once?.metadata), 'shared between syncs, so frozen all the way')
  t.equal(lastApplied(kept), once, 'an object frozen for good: the same copy every time')
  t.same(once, APPLIED)
  t.throws(() => { (once?.metadata as Record<string, unknown>).name = 'x' }, TypeError, 'nobody may change it')
})

t.test('keepAsApplied: the identity when there is no annotation to trust', async t => {
  const identity = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'flow-a', namespace: 'ns' } }
  const cases: Array<[string, string | undefined]> = [
    ['no annotation', undefined],
    ['an empty one', ''],
    ['not JSON', '{"apiVersion":'],
    ['JSON of no object', '[1,2]'],
    ['null', 'null'],
    ['an object without metadata', '{"apiVersion":"batch/v1","kind":"Job"}'],
    ['another name', JSON.stringify({ ...APPLIED, metadata: { ...APPLIED.metadata, name: 'flow-b' } })],
    ['another namespace', JSON.stringify({ ...APPLIED, metadata: { ...APPLIED.metadata, namespace: 'other' } })],
    ['another kind', JSON.stringify({ ...APPLIED, kind: 'CronJob' })],
    ['another apiVersion', JSON.stringify({ ...APPLIED, apiVersion: 'batch/v2' })]
  ]
  for (const [what, annotation] of cases) {
    const observed = createdJob(APPLIED)
    if (annotation === undefined) delete observed.metadata.annotations?.[LAST_APPLIED_ANNOTATION]
    else (observed.metadata.annotations as Record<string, string>)[LAST_APPLIED_ANNOTATION] = annotation
    t.same(keepAsApplied(observed), identity, what)
  }
  // A cluster-scoped object: no namespace on either side is the same namespace.
  const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } }
  t.same(
    keepAsApplied({
      ...node,
      metadata: {
        ...node.metadata,
        annotations: { [LAST_APPLIED_ANNOTATION]: JSON.stringify({ ...node, spec: { x: 1 } }) }
      }
    }),
    { ...node, spec: { x: 1 } }
  )
})

t.test('keepAllObserved: the groups named are kept as last applied, the others by identity', async t => {
  const job = createdJob(APPLIED)
  const configMap = object('c', 'ns', { data: { a: '1' } })
  configMap.metadata.annotations = {
    [LAST_APPLIED_ANNOTATION]: JSON.stringify(object('c', 'ns', { data: { a: '1' } }))
  }
  const children: ObjectMap = { 'Job.batch/v1': { 'ns/flow-a': job }, 'ConfigMap.v1': { 'ns/c': configMap } }
  t.same(keepAllObserved(children, ['Job.batch/v1']), [keepAsObserved(configMap), APPLIED])
  t.same(
    keepAllObserved(children),
    [keepAsObserved(configMap), keepAsObserved(job)],
    'none named: every child by identity'
  )
})
