// What is read of a frozen object is read once and given again; an object that may still change
// is read every time.
import t from 'tap'
import { rememberedFor } from '../../src/k8s/derived.js'
import { deepFreeze } from '../../src/protocol/object-memo.js'
import type { KubeObject } from '../../src/k8s/types.js'

function job (name: string, node?: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(node !== undefined ? { labels: { node } } : {}) }
  }
}

t.test('a frozen object is read once; one that is not, every time', async t => {
  let reads = 0
  const nodeOf = rememberedFor(o => { reads++; return o.metadata.labels?.node })
  const frozen = deepFreeze(job('a', 'n1'))
  t.equal(nodeOf(frozen), 'n1')
  t.equal(nodeOf(frozen), 'n1')
  t.equal(reads, 1)
  const open = job('b', 'n2')
  t.equal(nodeOf(open), 'n2')
  ;(open.metadata.labels as Record<string, string>).node = 'n3'
  t.equal(nodeOf(open), 'n3', 'changed since: read again')
  t.equal(reads, 3)
  const without = deepFreeze(job('c'))
  t.equal(nodeOf(without), undefined)
  t.equal(nodeOf(without), undefined)
  t.equal(reads, 4, 'undefined is remembered too')
  t.equal(nodeOf(deepFreeze(job('a', 'n1'))), 'n1')
  t.equal(reads, 5, 'another object of the same content is its own')
})
