// The simulator's dynamic apply (src/simulator/apply.ts), case by case as Metacontroller v4.17.2
// behaves: what a three-way merge against the last-applied annotation keeps, sets and removes.
import t from 'tap'
import type { KubeObject } from '../../src/k8s/types.js'
import { LAST_APPLIED_ANNOTATION } from '../../src/k8s/objects.js'
import { applyUpdate, goJson, mergeValue } from '../../src/simulator/apply.js'
import { deepEqual, wire } from '../../src/simulator/objects.js'
import { objectAs, specOf, valueAt } from '../helpers/objects.js'

/** What a hook answered for a Job when it was created (namespace and controller-uid label as Metacontroller
 * adds them). */
const APPLIED: KubeObject = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'flow-a', namespace: 'ns', labels: { flow: 'a', 'controller-uid': 'p1' } },
  spec: {
    template: {
      metadata: { labels: { flow: 'a' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'main', image: 'busybox:1.36', args: ['sh', '-c', 'true'], ports: [{ containerPort: 80 }] }
        ],
        volumes: [{ name: 'scripts', configMap: { name: 'cm' } }]
      }
    }
  }
}

/** The fields of the applied Job that observedJob fills in (the test's Job has each of them). */
interface ObservedJob extends KubeObject {
  spec: Record<string, unknown> & {
    template: {
      metadata: { labels: Record<string, string> }
      spec: {
        containers: [Record<string, unknown> & { ports: [Record<string, unknown>] }]
        volumes: [{ configMap: Record<string, unknown> }]
      }
    }
  }
}

/** The Job as the API server returns it: defaults, system fields, status, someone else's label. */
function observedJob (applied: KubeObject = APPLIED): KubeObject {
  const job = objectAs<ObservedJob>(wire(applied))
  job.metadata = {
    ...job.metadata,
    labels: { ...job.metadata.labels, team: 'x' },
    annotations: { [LAST_APPLIED_ANNOTATION]: goJson(applied), 'someone/else': 'kept' },
    uid: 'u1',
    resourceVersion: '42',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    ownerReferences: [
      { apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', name: 'flow', uid: 'p1', controller: true }
    ],
    managedFields: [{ manager: 'metacontroller' }]
  }
  job.spec = {
    ...job.spec,
    suspend: false,
    backoffLimit: 6,
    completions: 1,
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'u1' } }
  }
  job.spec.template.metadata.labels['job-name'] = 'flow-a'
  const container = job.spec.template.spec.containers[0]
  Object.assign(container, { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log' })
  container.ports[0].protocol = 'TCP'
  job.spec.template.spec.volumes[0].configMap.defaultMode = 420
  job.status = { active: 1, startTime: '2026-01-01T00:00:01Z' }
  return job
}

const annotationOf = (object: KubeObject): unknown =>
  JSON.parse(object.metadata.annotations?.[LAST_APPLIED_ANNOTATION] as string)

t.test('the last-applied copy merged back changes nothing: no write', async (t) => {
  const observed = observedJob()
  const merged = applyUpdate(observed, wire(APPLIED))
  t.ok(deepEqual(merged, observed), 'equal to the observed Job, defaults and all')
  t.equal(
    merged.metadata.annotations?.[LAST_APPLIED_ANNOTATION],
    observed.metadata.annotations?.[LAST_APPLIED_ANNOTATION],
    'the same annotation text'
  )
  // The answer's own key order does not matter: Go writes the annotation with sorted keys.
  const reordered = JSON.parse(
    JSON.stringify({ spec: APPLIED.spec, metadata: APPLIED.metadata, kind: 'Job', apiVersion: 'batch/v1' })
  )
  t.ok(deepEqual(applyUpdate(observed, reordered), observed), 'keys in another order')
})

t.test('one field changed: that field and the annotation change, nothing else', async (t) => {
  const observed = observedJob()
  const desired = wire(APPLIED)
  specOf(desired).suspend = true
  const merged = applyUpdate(observed, desired)
  const expected = observedJob()
  specOf(expected).suspend = true
  expected.metadata.annotations = { ...expected.metadata.annotations, [LAST_APPLIED_ANNOTATION]: goJson(desired) }
  t.same(merged, expected)
  t.same(annotationOf(merged), desired, 'the annotation now holds what was applied last')
  // And back: suspend leaves the answer, so it leaves the Job (the API server defaults it again).
  const back = applyUpdate(merged, wire(APPLIED))
  t.notOk('suspend' in specOf(back), 'a field applied before and no longer is removed')
  t.equal(specOf(back).backoffLimit, 6, 'a field never applied stays')
})

t.test('an identity alone removes everything the last-applied copy has', async (t) => {
  const observed = observedJob()
  const stub = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'flow-a', namespace: 'ns', labels: { 'controller-uid': 'p1' } }
  }
  const merged = applyUpdate(observed, stub)
  t.notOk('spec' in merged, 'the whole spec is gone (the API server refuses such a Job)')
  t.same(
    merged.metadata.labels,
    { 'controller-uid': 'p1', team: 'x' },
    "the labels applied are gone, someone else's stay"
  )
  t.same(merged.status, observed.status, 'the status is put back')
  t.same(
    [
      merged.metadata.uid,
      merged.metadata.resourceVersion,
      merged.metadata.generation,
      valueAt(merged, 'metadata', 'managedFields')
    ],
    ['u1', '42', 1, [{ manager: 'metacontroller' }]],
    'system fields put back'
  )
  t.same(merged.metadata.ownerReferences, observed.metadata.ownerReferences, 'what was never applied stays')
  t.equal(merged.metadata.annotations?.['someone/else'], 'kept')
})

t.test('without a last-applied annotation nothing is removed', async (t) => {
  const observed = observedJob()
  delete observed.metadata.annotations?.[LAST_APPLIED_ANNOTATION]
  const stub = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'flow-a', namespace: 'ns' } }
  const merged = applyUpdate(observed, stub)
  const expected = wire(observed)
  ;(expected.metadata.annotations as Record<string, string>)[LAST_APPLIED_ANNOTATION] = goJson(stub)
  t.same(merged, expected, 'only the annotation is new')
  for (const text of ['', 'null']) {
    const again = wire(observed)
    ;(again.metadata.annotations as Record<string, string>)[LAST_APPLIED_ANNOTATION] = text
    t.same(applyUpdate(again, stub).spec, observed.spec, JSON.stringify(text))
  }
})

t.test('an annotation that is not the JSON of an object fails the child', async (t) => {
  for (const text of ['{', '[1]', '"x"', '3']) {
    const observed = observedJob()
    ;(observed.metadata.annotations as Record<string, string>)[LAST_APPLIED_ANNOTATION] = text
    t.throws(() => applyUpdate(observed, wire(APPLIED)), { name: 'LastAppliedError', message: /can't unmarshal/ }, text)
  }
})

t.test('a last-applied annotation in the answer is dropped before anything', async (t) => {
  const observed = observedJob()
  const desired = wire(APPLIED)
  desired.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{"junk":1}' }
  const merged = applyUpdate(observed, desired)
  t.same(
    annotationOf(merged),
    { ...wire(APPLIED), metadata: { ...wire(APPLIED).metadata, annotations: {} } },
    'the annotation of what was applied, which it does not contain'
  )
})

t.test('lists of objects with a conventional key merge as maps; other lists are replaced', async (t) => {
  // Containers by name: the observed order and defaults kept, a removed one gone, a new one last.
  const observed = [
    { name: 'a', image: 'x', pull: 'IfNotPresent' },
    { name: 'b', image: 'y' },
    { name: 'c', image: 'z' }
  ]
  const last = [
    { name: 'a', image: 'x' },
    { name: 'b', image: 'y' }
  ]
  const desired = [
    { name: 'd', image: 'w' },
    { name: 'a', image: 'x2' }
  ]
  t.same(mergeValue(wire(observed), last, desired), [
    { name: 'a', image: 'x2', pull: 'IfNotPresent' },
    { name: 'c', image: 'z' },
    { name: 'd', image: 'w' }
  ])
  // The key preferred: containerPort before name; numbers keyed as their text.
  t.same(
    mergeValue(
      [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
      [{ containerPort: 80, name: 'http' }],
      [{ containerPort: 80, name: 'web' }]
    ),
    [{ containerPort: 80, name: 'web', protocol: 'TCP' }]
  )
  // Strings, or objects without a common key: the desired list as it is.
  t.same(mergeValue(['a', 'b'], ['a'], ['c']), ['c'])
  t.same(mergeValue([{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }], [], [{ key: 'k', operator: 'Exists' }]), [
    { key: 'k', operator: 'Exists' }
  ])
  // A listed item repeated in the observed list stays repeated.
  t.same(
    mergeValue(
      [
        { name: 'a', n: 1 },
        { name: 'a', n: 2 }
      ],
      [],
      [{ name: 'a', m: 3 }]
    ),
    [
      { name: 'a', n: 2, m: 3 },
      { name: 'a', n: 2, m: 3 }
    ]
  )
})

t.test('a desired value of another type than the observed one counts as absent', async (t) => {
  t.same(mergeValue({ a: 1, b: 2 }, { a: 1 }, 'text'), { b: 2 }, 'an object keeps what was never applied')
  t.same(mergeValue({ a: 1 }, undefined, null), { a: 1 })
  t.equal(mergeValue([1, 2], [1], { x: 1 }), null, 'a list without a key becomes nothing')
  t.same(mergeValue('scalar', 'old', { x: 1 }), { x: 1 }, 'a scalar takes the desired value whatever it is')
  t.same(mergeValue(undefined, undefined, [1]), [1])
})

t.test('goJson writes as Go does: keys sorted at every level, HTML characters escaped', async (t) => {
  t.equal(
    goJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: '<&>' }, e: '\u2028' }),
    '{"a":{"c":"\\u003c\\u0026\\u003e","d":[{"y":2,"z":1}]},"b":1,"e":"\\u2028"}'
  )
  t.same(JSON.parse(goJson({ b: '<x>' })), { b: '<x>' })
})
