// Reading groups of objects and returning observed children: the order and the bytes must stay
// what they were when every comparison built `<namespace>/<name>` strings and every copy went
// through Object.entries (the answers of every kind depend on them).
import t from 'tap'
import { keepAllObserved, keepAsObserved, objectsOf } from '../../src/k8s/objects.js'
import type { KubeObject, ObjectMap } from '../../src/k8s/types.js'

/** The order objectsOf gave before: by the `<namespace>/<name>` strings. */
function referenceOrder (objects: KubeObject[]): string[] {
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).map(key)
}

/** keepAsObserved as it was before. */
function referenceKeep (observed: KubeObject): KubeObject {
  const meta = observed.metadata
  const kept: KubeObject = { apiVersion: observed.apiVersion, kind: observed.kind, metadata: { name: meta.name } }
  if (meta.namespace !== undefined) kept.metadata.namespace = meta.namespace
  if (meta.labels !== undefined) kept.metadata.labels = meta.labels
  if (meta.annotations !== undefined) {
    const bookkeeping = ['metacontroller.k8s.io/last-applied-configuration', 'kubectl.kubernetes.io/last-applied-configuration']
    const annotations = Object.fromEntries(Object.entries(meta.annotations).filter(([k]) => !bookkeeping.includes(k)))
    if (Object.keys(annotations).length > 0) kept.metadata.annotations = annotations
  }
  for (const [key, value] of Object.entries(observed)) {
    if (key !== 'apiVersion' && key !== 'kind' && key !== 'metadata' && key !== 'status') kept[key] = value
  }
  return kept
}

function object (name: string, namespace?: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(namespace !== undefined ? { namespace } : {}) }, ...extra }
}

t.test('objects sort as their "<namespace>/<name>" keys did, namespaces or not', async t => {
  // '-' and '.' sort before '/', digits and letters after it: "a-b/x" < "a/x" < "ab/x".
  const names = ['x', 'a', 'a-b', 'a.b', 'ab', 'a/b', 'A', 'é', '', 'node-10', 'node-9', 'node-1']
  const namespaces = [undefined, '', 'a', 'a-b', 'ab', 'a0', 'default', 'kube-system', 'z']
  const objects: KubeObject[] = []
  for (const ns of namespaces) for (const name of names) objects.push(object(name, ns))
  // A deterministic shuffle, so the sort has work to do.
  const shuffled = objects.map((o, i) => ({ o, k: (i * 7919) % objects.length })).sort((a, b) => a.k - b.k).map(x => x.o)
  const group: Record<string, KubeObject> = {}
  shuffled.forEach((o, i) => { group[`key-${i}`] = o })
  const map: ObjectMap = { 'ConfigMap.v1': group }
  const key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`
  t.same(objectsOf(map, 'ConfigMap', 'v1').map(key), referenceOrder(shuffled))
  // One namespace (every child of a parent, every Node): the names alone decide.
  const nodes = ['w-10', 'w-2', 'w-1', 'w.1', 'w/1', 'w1'].map(n => object(n))
  t.same(objectsOf({ 'Node.v1': Object.fromEntries(nodes.map(n => [n.metadata.name, n])) }, 'Node', 'v1').map(key), referenceOrder(nodes))
})

t.test('a namespace that is not a string sorts as its text did', async t => {
  const odd = [object('b', 5 as unknown as string), object('a', '5'), object('c'), object('a', 'x')]
  const key = (o: KubeObject): string => `${String(o.metadata.namespace ?? '')}/${o.metadata.name}`
  t.same(objectsOf({ 'ConfigMap.v1': Object.fromEntries(odd.map((o, i) => [String(i), o])) }, 'ConfigMap', 'v1').map(key), referenceOrder(odd).map(k => k))
})

t.test('what is not an object with a name is left out, as before', async t => {
  const group = { a: object('a'), b: null, c: { metadata: {} }, d: 'x', e: object('e') } as unknown as Record<string, KubeObject>
  t.same(objectsOf({ 'ConfigMap.v1': group }, 'ConfigMap', 'v1').map(o => o.metadata.name), ['a', 'e'])
  t.same(objectsOf(undefined, 'ConfigMap', 'v1'), [])
})

t.test('an observed child is kept byte for byte as before', async t => {
  const cases: KubeObject[] = [
    object('plain', 'ns', { data: { a: '1' } }),
    object('annotated', 'ns', { spec: { x: 1 }, status: { y: 2 }, z: [1] }),
    object('no-namespace', undefined, { data: {} })
  ]
  cases[1]!.metadata.annotations = { b: '2', 'metacontroller.k8s.io/last-applied-configuration': '{}', a: '1', 'kubectl.kubernetes.io/last-applied-configuration': '{}', 10: 'ten', 2: 'two' } as Record<string, string>
  cases[1]!.metadata.labels = { l: 'v' }
  const onlyBookkeeping = object('only-bookkeeping', 'ns')
  onlyBookkeeping.metadata.annotations = { 'metacontroller.k8s.io/last-applied-configuration': '{}' }
  cases.push(onlyBookkeeping)
  const empty = object('empty-annotations', 'ns')
  empty.metadata.annotations = {}
  cases.push(empty)
  const proto = JSON.parse('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p","annotations":{"__proto__":"x","y":"z"}},"data":{}}') as KubeObject
  cases.push(proto)
  const weird = object('weird', 'ns', { data: 1 })
  weird.metadata.annotations = 'ab' as unknown as Record<string, string>
  cases.push(weird)
  for (const c of cases) t.equal(JSON.stringify(keepAsObserved(c)), JSON.stringify(referenceKeep(c)), c.metadata.name)
  const nullAnnotations = object('null', 'ns')
  nullAnnotations.metadata.annotations = null as unknown as Record<string, string>
  t.throws(() => keepAsObserved(nullAnnotations), TypeError, 'annotations: null still throws as before (the hook answers with an internal error)')
  t.throws(() => referenceKeep(nullAnnotations), TypeError)
})

t.test('keepAllObserved: groups by key, objects by namespace and name', async t => {
  const children: ObjectMap = {
    'Job.batch/v1': { 'ns/b': object('b', 'ns'), 'ns/a': object('a', 'ns') },
    'ConfigMap.v1': { 'ns/c': object('c', 'ns') }
  }
  t.same(keepAllObserved(children).map(o => o.metadata.name), ['c', 'a', 'b'])
})
