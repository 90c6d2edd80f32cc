import t from 'tap'
import { GROUP_ABOVE, groupRecords, ungroupRecords } from '../../../src/controllers/jobflow/record-groups.js'
import { readRecords, type JobRecord } from '../../../src/controllers/jobflow/records.js'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { responseOf } from '../../helpers/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'

const NOW = new Date('2026-01-02T04:00:00Z')
const DONE = { startTime: '2026-01-02T03:00:00Z', completionTime: '2026-01-02T03:00:10Z' }

function item (index: number, extra: Partial<JobRecord> = {}): JobRecord {
  return { name: `process[${index}]`, jobName: `jf-process-item-${index}`, phase: 'Succeeded', ...DONE, ...extra }
}

function roundTrip (records: JobRecord[]): Map<string, JobRecord[]> {
  const status = groupRecords(records, 'jf', NOW)
  return readRecords(JSON.parse(JSON.stringify(status)) as Record<string, unknown>, 'jf')
}

t.test('up to GROUP_ABOVE records, status.jobs holds each one whole and there are no groups', async t => {
  const records = Array.from({ length: GROUP_ABOVE }, (_, i) => item(i))
  t.same(groupRecords(records, 'jf', NOW), { jobs: records })
})

t.test('10,000 items: the succeeded in one group of index ranges, the failed and running whole', async t => {
  const records = Array.from({ length: 10_000 }, (_, i) => item(i, { output: `out-${i}` }))
  records[5000] = item(5000, { phase: 'Failed', message: 'BackoffLimitExceeded: too many failures' })
  records[9999] = item(9999, { phase: 'Running', completionTime: undefined })
  delete records[9999].completionTime
  const status = groupRecords(records, 'jf', NOW)
  t.same(status.jobs, [records[5000], records[9999]])
  t.same(status.jobGroups, [{ names: ['process[0-4999,5001-9998]'], phase: 'Succeeded' }])
  t.ok(JSON.stringify(status).length < 500, 'a few hundred bytes')
  const memory = roundTrip(records)
  t.equal(memory.size, 10_000)
  t.same(memory.get('process[42]'), [{ name: 'process[42]', jobName: 'jf-process-item-42', phase: 'Succeeded' }],
    'a grouped item keeps its outcome and its Job name, not its times and output')
  t.same(memory.get('process[5000]'), [records[5000]])
  t.same(memory.get('process[9999]'), [records[9999]])
})

t.test('records alike but for their names group, whatever their phase; attempts apart', async t => {
  const waiting = { phase: 'Pending' as const, message: 'waiting: at most 2 items of process at once' }
  const records: JobRecord[] = [
    { name: 'prepare', jobName: 'jf-prepare', phase: 'Succeeded', ...DONE },
    { name: 'lint', jobName: 'jf-lint', phase: 'Succeeded', ...DONE },
    ...Array.from({ length: 600 }, (_, i) => ({ name: `process[${i}]`, jobName: `jf-process-item-${i}`, ...waiting })),
    { name: 'process[600]', jobName: 'jf-process-item-600', phase: 'Failed', ...DONE, message: 'failed' },
    { name: 'process[600]', jobName: 'jf-process-item-600-2', phase: 'Succeeded', ...DONE, attempt: 2 },
    { name: 'merge', jobName: 'jf-merge', phase: 'Pending', message: 'waiting for process (1 of 601 items)' }
  ]
  const status = groupRecords(records, 'jf', NOW)
  t.same(status.jobGroups, [
    { names: ['prepare', 'lint'], phase: 'Succeeded' },
    { names: ['process[0-599]'], ...waiting }
  ])
  t.same(status.jobs.map(r => r.jobName), ['jf-process-item-600', 'jf-process-item-600-2', 'jf-merge'])
  const memory = roundTrip(records)
  t.same(memory.get('process[600]')?.map(r => r.jobName), ['jf-process-item-600', 'jf-process-item-600-2'])
  t.same(memory.get('process[7]'), [{ name: 'process[7]', jobName: 'jf-process-item-7', ...waiting }])
})

t.test('what stays whole: a Job named otherwise, a step\'s output, an output still awaited', async t => {
  const filler = Array.from({ length: GROUP_ABOVE }, (_, i) => item(i))
  const renamed: JobRecord = { name: 'a', jobName: 'jf-old-a', phase: 'Succeeded', ...DONE }
  const withOutput: JobRecord = { name: 'b', jobName: 'jf-b', phase: 'Succeeded', ...DONE, output: 'v1.2.3' }
  const justDone: JobRecord = {
    name: 'c', jobName: 'jf-c', phase: 'Succeeded', startTime: DONE.startTime, completionTime: '2026-01-02T03:59:50Z'
  }
  const emptyOutput: JobRecord = { name: 'd', jobName: 'jf-d', phase: 'Succeeded', ...DONE, output: '' }
  const status = groupRecords([renamed, withOutput, justDone, emptyOutput, ...filler], 'jf', NOW)
  t.same(status.jobs, [renamed, withOutput, justDone])
  t.same(status.jobGroups, [{ names: ['d', `process[0-${GROUP_ABOVE - 1}]`], phase: 'Succeeded' }],
    'an empty output reads as none: dependants get \'\' either way')
})

t.test('a status written as groups reads back the same, and groups again the same (law 5)', async t => {
  const records = Array.from({ length: 2000 }, (_, i): JobRecord => ({
    name: `step-${i}`, jobName: `jf-step-${i}`, phase: i % 3 === 0 ? 'Pending' : 'Succeeded'
  }))
  const first = groupRecords(records, 'jf', NOW)
  const read = readRecords(first as unknown as Record<string, unknown>, 'jf')
  const again = groupRecords([...read.values()].flat(), 'jf', NOW)
  t.same(again, first)
  t.equal(first.jobs.length, 0)
  t.ok(JSON.stringify(first).length < 2000 * 12, 'a name and its quotes a step')
})

t.test('malformed groups and names are left out; ranges stop at the most items a step has', async t => {
  const status = {
    jobs: [{ name: 'a', jobName: 'jf-a', phase: 'Running' }],
    jobGroups: [
      'nonsense',
      { phase: 'Succeeded' },
      { names: [7, 'b', 'c[', 'd[1-3', 'e[2-1]', 'f[9998-99999999]', 'g[x]'], phase: 'Succeeded', attempt: 2 }
    ]
  }
  const records = ungroupRecords(status, 'jf')
  t.same(records.map(r => [r.name, r.jobName]), [
    ['a', 'jf-a'], ['b', 'jf-b-2'], ['f[9998]', 'jf-f-item-9998-2'], ['f[9999]', 'jf-f-item-9999-2']
  ])
})

t.test('fixture sync-grouped: the last of 600 items ends, its Job goes once a status grouped it', async t => {
  const respond = responseOf(syncJobFlow)
  const request = fixture('jobflow/sync-grouped.v2.json')
  const previous = request.parent.status as Record<string, unknown>
  t.same(previous.jobGroups, [{ names: ['process[0-598]'], phase: 'Succeeded' }], 'the fixture: 599 items as one group')
  const names = (children: KubeObject[]): string[] => children.map(c => c.metadata.name)
  const first = respond(request, context())
  t.same(first.status.jobGroups, [{ names: ['process[0-599]'], phase: 'Succeeded' }], 'item 599 joins its group')
  t.same(first.status.jobs, [
    { name: 'merge', jobName: 'jobflow-fanout-merge', phase: 'Pending', message: 'creating the Job' }
  ])
  t.equal(first.status.jobsSucceeded, '600/601')
  t.same(names(first.children), ['jobflow-fanout-process-item-599', 'jobflow-fanout-merge'],
    'no item Job made again (law 6); item 599\'s Job stays (TTL 0) until a status has its outcome')
  t.ok(JSON.stringify(first.status).length < 600, 'the status of 601 records in a few hundred bytes')
  // The next sync, handed the status just written: the Job goes by its TTL, its outcome kept in the group.
  request.parent.status = JSON.parse(JSON.stringify(first.status)) as Record<string, unknown>
  const second = respond(request, context())
  t.same(names(second.children), ['jobflow-fanout-merge'])
  t.same(second.status.jobGroups, first.status.jobGroups)
})

t.test('the items of a template group\'s step (dotted names) group and read back as any step\'s', async t => {
  const records = Array.from({ length: GROUP_ABOVE + 1 }, (_, i) =>
    ({ ...item(i), name: `run.shard[${i}]`, jobName: `jf-run.shard-item-${i}` }))
  const status = groupRecords(records, 'jf', NOW)
  t.same(status.jobGroups, [{ names: [`run.shard[0-${GROUP_ABOVE}]`], phase: 'Succeeded' }])
  const memory = roundTrip(records)
  t.equal(memory.size, GROUP_ABOVE + 1, 'every item read back')
  t.same(memory.get('run.shard[7]'), [{ name: 'run.shard[7]', jobName: 'jf-run.shard-item-7', phase: 'Succeeded' }])
})
