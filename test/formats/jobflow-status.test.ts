// The one codec of a JobFlow's status: item names and index ranges both ways, groups read back as
// the records they stand for with their Jobs' names, and the one rule a step's items make.
import t from 'tap'
import {
  attemptJobName, formatIndexRanges, groupPhase, itemFlowName, itemOfFlowName, namesWithRanges, readRecords,
  recordEnd, stepOfFlowName, ungroupRecords
} from '../../src/formats/jobflow-status.js'

t.test('an item name, and only an item name, has a step and an index', async t => {
  t.same(itemOfFlowName(itemFlowName('process', 12)), { step: 'process', index: 12 })
  t.equal(itemOfFlowName('process'), undefined)
  t.equal(itemOfFlowName('process[0-3]'), undefined, 'a group of items is no item')
  t.equal(itemOfFlowName('Bad[1]'), undefined, 'a step is a lowercase label')
  t.equal(stepOfFlowName('process[3]'), 'process')
  t.equal(stepOfFlowName('build'), 'build')
})

t.test('index ranges: written once per run, read back bounded by what a step can have', async t => {
  t.equal(formatIndexRanges([0, 1, 2, 4, 6, 7]), '0-2,4,6-7')
  t.same(namesWithRanges(['a', 's[0]', 's[1]', 's[3]', 'b', 't[5]']), ['a', 's[0-1,3]', 'b', 't[5]'])
  const status = {
    jobGroups: [
      { names: ['s[0-1,3]', 'b'], phase: 'Succeeded' },
      { names: ['s[9998-20000]'], phase: 'Succeeded', attempt: 2 },
      { names: ['s[x]', 7], phase: 'Succeeded' }
    ]
  }
  const read = ungroupRecords(status, 'jf')
  t.same(read.slice(0, 4).map(r => [r.name, r.jobName]), [
    ['s[0]', 'jf-s-item-0'], ['s[1]', 'jf-s-item-1'], ['s[3]', 'jf-s-item-3'], ['b', 'jf-b']
  ])
  t.same(read.slice(4).map(r => [r.name, r.jobName]),
    [['s[9998]', 'jf-s-item-9998-2'], ['s[9999]', 'jf-s-item-9999-2']],
    'no index past 9,999; the attempt names the Jobs; malformed names are left out')
  t.equal(attemptJobName('jf', 's-item-1', 3), 'jf-s-item-1-3')
})

t.test('records: each flow\'s attempts in order, malformed entries left out', async t => {
  const records = readRecords({
    jobs: [
      { name: 'a', jobName: 'f-a-2', phase: 'Failed', attempt: 2 },
      { name: 'a', jobName: 'f-a', phase: 'Failed' },
      { name: 'b', jobName: 'f-b', phase: 'Waiting' },
      { name: 'c', phase: 'Running' }
    ]
  }, 'f')
  t.same([...records.keys()], ['a'])
  t.same(records.get('a')?.map(r => r.jobName), ['f-a', 'f-a-2'])
})

t.test('how a record ended, and the one rule for a step of items', async t => {
  t.equal(recordEnd({ phase: 'Skipped', message: 'skipped: its when is false: x' }), 'Skipped')
  t.equal(recordEnd({ phase: 'Skipped', message: 'not started: a failed' }), 'Omitted')
  t.equal(recordEnd({ phase: 'Queued' }), undefined)
  t.equal(groupPhase([{ phase: 'Succeeded' }, { phase: 'Failed' }]), 'Failed')
})
