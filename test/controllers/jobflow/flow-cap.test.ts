// spec.parallelism's choice: how many slots are free (Running and Queued Jobs take one), and which
// due flows take them: the shallower in the DAG first, then by step name and item index.
import t from 'tap'
import { heldByParallelism, heldMessage } from '../../../src/controllers/jobflow/flow-cap.js'
import type { FlowSpec } from '../../../src/controllers/jobflow/spec.js'
import type { PlannedFlow } from '../../../src/controllers/jobflow/fanout.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'

const step = (name: string, dependencies: string[] = []): FlowSpec => ({ name, dependencies } as unknown as FlowSpec)
const steps = [step('b'), step('a'), step('s'), step('deep', ['a'])]

function standing (entries: Array<[string, JobRecord['phase'] | undefined, number?]>): Map<string, {
  flow: PlannedFlow
  current?: JobRecord
}> {
  return new Map(entries.map(([name, phase, index]) => {
    const flow = (index === undefined
      ? { name, dependencies: [] }
      : { name, dependencies: [], item: { step: 's', index, value: index } }) as unknown as PlannedFlow
    const current = phase === undefined ? undefined : { name, jobName: name, phase }
    return [name, current === undefined ? { flow } : { flow, current }]
  }))
}

t.test('no limit, or room for every due flow: nothing held', async t => {
  const flows = standing([['a', 'Pending'], ['b', 'Pending']])
  t.same(heldByParallelism(undefined, steps, flows, new Set(['a', 'b'])), new Set())
  t.same(heldByParallelism(2, steps, flows, new Set(['a', 'b'])), new Set())
})

t.test('Running and Queued Jobs take a slot; the rest wait in order', async t => {
  const flows = standing([
    ['b', 'Running'], ['a', 'Queued'], ['deep', 'Pending'], ['s[10]', 'Pending', 10], ['s[2]', 'Pending', 2],
    ['done', 'Succeeded']
  ])
  const due = new Set(['deep', 's[10]', 's[2]'])
  t.same(heldByParallelism(3, steps, flows, due), new Set(['s[10]', 'deep']),
    'one slot left: s[2] (a root, index 2 before 10), not deep (one level down)')
  t.same(heldByParallelism(2, steps, flows, due), due, 'no slot left')
  t.equal(heldMessage(3), 'waiting: at most 3 Jobs of the JobFlow at once (spec.parallelism)')
})
