import t from 'tap'
import { childName, fitName, isDnsLabel, shortHash, isLabelKey } from '../../src/k8s/names.js'

t.test('names that fit are kept; longer ones end in a hash of the whole', async t => {
  t.equal(fitName('short'), 'short')
  t.equal(fitName('x'.repeat(63)), 'x'.repeat(63))
  const long = fitName('x'.repeat(64))
  t.equal(long.length, 63)
  t.equal(long, `${'x'.repeat(52)}-${shortHash('x'.repeat(64))}`)
  t.not(fitName('a'.repeat(70) + '1'), fitName('a'.repeat(70) + '2'), 'a shared prefix still gives distinct names')
  t.equal(fitName(`${'a'.repeat(51)}-.b${'c'.repeat(20)}`).includes('-.'), false, 'no "-." left before the hash')
  t.equal(fitName('y'.repeat(300), 253).length, 253)
  t.equal(childName('flow', 'job1'), 'flow-job1')
})

t.test('flow names must be RFC 1123 labels', async t => {
  for (const ok of ['a', 'job-1', '0x', 'a'.repeat(63)]) t.ok(isDnsLabel(ok), ok)
  for (const bad of ['', 'A', 'a_b', '-a', 'a-', 'a.b', 'a'.repeat(64)]) t.notOk(isDnsLabel(bad), bad)
})

t.test('isLabelKey: [prefix/]name, as the API server reads a label key', async t => {
  for (const key of ['app', 'track', 'app.kubernetes.io/name', 'example.com/a_b-c.d', 'A9', 'x'.repeat(63)]) {
    t.ok(isLabelKey(key), key)
  }
  for (const key of [
    '',
    '/name',
    'a/b/c',
    'Example.com/name',
    '-app',
    'app-',
    'x'.repeat(64),
    'example.com/',
    'a b',
    `${'a'.repeat(254)}/n`
  ]) {
    t.notOk(isLabelKey(key), JSON.stringify(key))
  }
})
