// What is read of an object frozen for good (as the memo hands objects over) is read once and
// given again; an object that may still change is read every time, and so is one merely frozen:
// nothing is inferred from Object.isFrozen.
import t from 'tap'
import { freezeForGood, isFrozenForGood, rememberedFor } from '../../src/k8s/derived.js'
import type { KubeObject } from '../../src/k8s/types.js'

function job (name: string, node?: string): KubeObject {
  const labels = node !== undefined ? { labels: { node } } : {}
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, ...labels } }
}

t.test('an object frozen for good is read once; one that is not, every time', async t => {
  let reads = 0
  const nodeOf = rememberedFor(o => { reads++; return o.metadata.labels?.node })
  const frozen = freezeForGood(job('a', 'n1'))
  t.equal(nodeOf(frozen), 'n1')
  t.equal(nodeOf(frozen), 'n1')
  t.equal(reads, 1)
  const open = job('b', 'n2')
  t.equal(nodeOf(open), 'n2')
  ;(open.metadata.labels as Record<string, string>).node = 'n3'
  t.equal(nodeOf(open), 'n3', 'changed since: read again')
  t.equal(reads, 3)
  const without = freezeForGood(job('c'))
  t.equal(nodeOf(without), undefined)
  t.equal(nodeOf(without), undefined)
  t.equal(reads, 4, 'undefined is remembered too')
  t.equal(nodeOf(freezeForGood(job('a', 'n1'))), 'n1')
  t.equal(reads, 5, 'another object of the same content is its own')
})

t.test('an object frozen by someone else is read every time: provenance is said, not guessed', async t => {
  let reads = 0
  const nodeOf = rememberedFor(o => { reads++; return o.metadata.labels?.node })
  const frozen = Object.freeze(job('a', 'n1'))
  t.equal(nodeOf(frozen), 'n1')
  t.equal(nodeOf(frozen), 'n1')
  t.equal(reads, 2)
  t.notOk(isFrozenForGood(frozen))
  const kept = freezeForGood(job('b', 'n2'))
  t.ok(isFrozenForGood(kept) && Object.isFrozen(kept.metadata.labels), 'frozen all the way down')
  t.same(Object.keys(kept), ['apiVersion', 'kind', 'metadata'], 'the mark is no member')
  t.equal(JSON.stringify(kept), JSON.stringify(job('b', 'n2')), 'nor serialised')
  t.notOk(isFrozenForGood({ ...kept }), 'a copy is an object of its own')
})

t.test('what is remembered is frozen for good: shared from sync to sync, nobody may change it', async t => {
  const labelsOf = rememberedFor(o => ({ ...o.metadata.labels }))
  const kept = labelsOf(freezeForGood(job('a', 'n1')))
  t.ok(isFrozenForGood(kept))
  t.throws(() => { (kept as Record<string, string>).node = 'n2' }, TypeError)
  t.notOk(Object.isFrozen(labelsOf(job('b', 'n1'))), 'what is read of an open object is the caller\'s')
})
