// CollaSet Pod names and revisions: deterministic, the reference's shape, and fitted (law 8).
import t from 'tap'
import { PodNamer, canonicalJson, nameSuffix, templateRevision } from '../../../src/controllers/collaset/pods.js'
import { selectorString } from '../../../src/k8s/selectors.js'

t.test('names are <collaset>-<5 lowercase letters or digits>, stable, and skip names in use', async t => {
  const a = new PodNamer('foo', 'foo', [])
  const first = [a.next(), a.next(), a.next()]
  for (const name of first) t.match(name, /^foo-[a-z0-9]{5}$/)
  t.equal(new Set(first).size, 3)
  const b = new PodNamer('foo', 'foo', [])
  t.same([b.next(), b.next(), b.next()], first, 'the same identity gives the same names')
  const c = new PodNamer('foo', 'foo', [first[0] as string])
  t.same(c.next(), first[1], 'a name in use is skipped')
  const other = new PodNamer('bar', 'foo', [])
  t.not(other.next(), first[0], 'another identity gets other names')
  t.equal(nameSuffix('x'), nameSuffix('x'))
  const long = new PodNamer('ns/x/uid', 'x'.repeat(300), []).next()
  t.ok(long.length <= 253, 'names fit in 253 characters')
  t.match(long, /-[a-z0-9]{5}$/)
})

t.test('the revision is a hash of the template, whatever its key order', async t => {
  const template = {
    metadata: { labels: { app: 'foo' } },
    spec: { containers: [{ name: 'foo', image: 'nginx:1.27' }] }
  }
  const reordered = {
    spec: { containers: [{ image: 'nginx:1.27', name: 'foo' }] },
    metadata: { labels: { app: 'foo' } }
  }
  t.match(templateRevision('foo', template), /^foo-[0-9a-f]{10}$/)
  t.equal(templateRevision('foo', template), templateRevision('foo', reordered))
  t.not(
    templateRevision('foo', template),
    templateRevision('foo', { ...template, spec: { containers: [{ name: 'foo', image: 'nginx:1.28' }] } })
  )
  t.ok(templateRevision('y'.repeat(100), template).length <= 63, 'a label value')
  t.equal(canonicalJson({ b: 1, a: [1, { d: null, c: 'x' }] }), '{"a":[1,{"c":"x","d":null}],"b":1}')
})

t.test('the selector string of the scale subresource', async t => {
  t.equal(selectorString({ matchLabels: { b: '2', a: '1' } }), 'a=1,b=2')
  t.equal(
    selectorString({
      matchExpressions: [
        { key: 'k', operator: 'In', values: ['y', 'x'] },
        { key: 'e', operator: 'Exists' },
        { key: 'n', operator: 'DoesNotExist' },
        { key: 'o', operator: 'NotIn', values: ['z'] }
      ]
    }),
    'k in (x,y),e,!n,o notin (z)'
  )
})
