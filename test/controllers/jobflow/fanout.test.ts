// Fan-out's pieces: the spec's forEach, forEachFrom and parallelism checked, a forEachFrom output
// read as items, item flows named and counted for people.
import t from 'tap'
import { parseJobFlowSpec } from '../../../src/controllers/jobflow/spec.js'
import { expandFanOut, itemsFromOutput, jobPartOf, namesForPeople } from '../../../src/controllers/jobflow/fanout.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { context, fixture } from '../../helpers/fixtures.js'

const TEMPLATE = { template: { spec: { containers: [{ name: 'main', image: 'busybox' }] } } }

function flowOf (flows: Array<Record<string, unknown>>): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'f', namespace: 'default' },
    spec: { flows: flows.map(f => ({ jobTemplate: TEMPLATE, ...f })) }
  }
}

function problems (flows: Array<Record<string, unknown>>): string[] {
  const parsed = parseJobFlowSpec(flowOf(flows))
  return parsed.ok ? [] : parsed.problems
}

t.test('the spec: forEach a list of JSON values, forEachFrom a dependency, parallelism with either', async t => {
  t.same(problems([{ name: 'a', forEach: ['x'], parallelism: 3 }]), [])
  t.same(problems([{ name: 'a', forEach: ['x', 1, true, { k: 'v' }, [1]] }]), [], 'numbers, booleans, maps, lists')
  t.same(problems([{ name: 'a' }, { name: 'b', dependencies: ['a'], forEachFrom: 'a' }]), [])
  t.match(problems([{ name: 'a', forEach: [] }]), [/forEach must list at least one item/])
  t.match(problems([{ name: 'a', forEach: 'x' }]), [/forEach must be a list of items/])
  t.same(problems([{ name: 'a', forEach: ['x', 'y', null] }]), ['flow "a": forEach item 2 is null'])
  t.match(problems([{ name: 'a', forEach: Array.from({ length: 10_001 }, (_, i) => `${i}`) }]),
    [/forEach has 10001 items, more than 10000/])
  t.match(problems([{ name: 'a' }, { name: 'b', forEachFrom: 'a' }]), [/forEachFrom must name one of its dependencies/])
  t.match(problems([{ name: 'a' }, { name: 'b', dependencies: ['a'], forEachFrom: 'a', forEach: ['x'] }]),
    [/set at most one of forEach and forEachFrom/])
  t.match(problems([{ name: 'a', parallelism: 2 }]), [/parallelism needs forEach or forEachFrom/])
  t.match(problems([{ name: 'a', forEach: ['x'], parallelism: 0 }]), [/parallelism/])
  t.match(problems([{ name: 'a', forEach: ['x'] }, { name: 'a-item-0' }]), [/has the Job name of an item of flow "a"/])
})

t.test('a forEachFrom output: a JSON array of any JSON, or the reason it is not', async t => {
  t.same(itemsFromOutput('list', '["a", "b"]'), ['a', 'b'])
  t.same(itemsFromOutput('list', '[]'), [])
  t.same(itemsFromOutput('list', '[1, {"a": 2}]'), [1, { a: 2 }])
  t.equal(itemsFromOutput('list', '{"a": 1}'),
    'forEachFrom list: its output is JSON but not an array: it starts "{\\"a\\": 1}"')
  t.equal(itemsFromOutput('list', '[1, null]'), 'forEachFrom list: its output item 1 is null')
  t.match(itemsFromOutput('list', 'a b'), /^forEachFrom list: its output is not JSON: "a b": /)
  t.match(itemsFromOutput('list', `["${'x'.repeat(4100)}`), /its output is not JSON \(its output is 4,102 bytes\)/)
  const many = JSON.stringify(Array.from({ length: 10_001 }, () => 'x'))
  t.match(itemsFromOutput('list', many), /10001 items, more than 10000/)
})

t.test('expansion: items as flows, dependants on every item; an unknown output waits, a bad one fails', async t => {
  const parsed = parseJobFlowSpec(flowOf([
    { name: 'list' },
    { name: 'load', dependencies: ['list'], forEachFrom: 'list', retry: { limit: 2 } },
    { name: 'report', dependencies: ['load'] }
  ]))
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  const now = new Date('2026-01-02T03:00:00Z')
  const done = (output?: string): Map<string, JobRecord[]> => new Map([['list', [{
    name: 'list',
    jobName: 'f-list',
    phase: 'Succeeded',
    completionTime: '2026-01-02T02:59:59Z',
    ...(output !== undefined ? { output } : {})
  }]]])
  const latest = (memory: Map<string, JobRecord[]>) => (name: string) => memory.get(name)?.at(-1)
  const waiting = expandFanOut(parsed.value, latest(new Map()), now).flows
  t.same(waiting.map(f => [f.name, f.itemsPending, f.retry]), [
    ['list', undefined, undefined], ['load', 'waiting for list', undefined], ['report', undefined, undefined]
  ], 'a placeholder that never retries into a Job')
  t.equal(expandFanOut(parsed.value, latest(done()), now).flows[1]?.itemsPending, 'waiting for the output of list')
  const expanded = expandFanOut(parsed.value, latest(done('["a", "b"]')), now).flows
  t.same(expanded.map(f => f.name), ['list', 'load[0]', 'load[1]', 'report'])
  t.same(expanded.map(jobPartOf), ['list', 'load-item-0', 'load-item-1', 'report'])
  t.same(expanded[3]?.dependencies, ['load'], 'a dependant names the step, never its items')
  const plan = expandFanOut(parsed.value, latest(done('["a", "b"]')), now)
  t.same([...plan.fanOuts.keys()], ['load'], 'the fan-out step is one node of the plan')
  t.same(plan.fanOuts.get('load')?.items.map(i => i.item?.value), ['a', 'b'])
  t.same(expanded[1]?.item, { step: 'load', index: 0, value: 'a', parallelism: undefined })
  t.same(expanded[1]?.retry, { limit: 2, backoffSeconds: 10, maxBackoffSeconds: 300 }, 'retries per item')
  const late = new Date('2026-01-02T03:01:00Z')
  const problem = expandFanOut(parsed.value, latest(done()), late).flows[1]?.itemsProblem
  t.match(problem, /its output is not JSON: "": /,
    'no output 30 s after the dependency succeeded: the step fails, saying why')
})

t.test('the items of a step are counted for people', async t => {
  const groups = new Map([['shard', ['shard[0]', 'shard[1]', 'shard[2]']]])
  const open = (step: string): number | undefined => (step === 'shard' ? 2 : undefined)
  t.equal(namesForPeople(['a', 'shard'], groups, open), 'a, shard (2 of 3 items)')
  t.equal(namesForPeople(['a', 'b'], new Map(), open), 'a, b')
})

t.test('a bad template of a fan-out step is one problem, said of the step, not one per item', async t => {
  const request = fixture('jobflow/sync-new.v2.json')
  request.parent.spec = flowOf([{ name: 'shard', forEach: Array.from({ length: 50 }, (_, i) => `${i}`) }]).spec
  const spec = request.parent.spec as { flows: Array<Record<string, unknown>> }
  spec.flows[0] = { ...spec.flows[0], jobTemplate: { template: { spec: { containers: [] } } } }
  const { status } = syncJobFlow(request, context()).response
  t.equal(status.phase, 'Invalid')
  const valid = (status.conditions as Array<{ type: string, message: string }>).find(c => c.type === 'Valid')
  t.equal(valid?.message, 'flow "shard": the Job template has no containers (template.spec.containers)')
})

t.test('observation first: a forEachFrom step\'s items are created in the sync that sees its source', async t => {
  const request = fixture('jobflow/sync-new.v2.json')
  request.parent.metadata = { ...request.parent.metadata, name: 'f', namespace: 'default' }
  request.parent.spec = flowOf([{ name: 'list' }, { name: 'each', dependencies: ['list'], forEachFrom: 'list' }]).spec
  // The status read back still says list runs: only the observed Job and pod say it succeeded.
  request.parent.status = { phase: 'Running', jobs: [{ name: 'list', jobName: 'f-list', phase: 'Running' }] }
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'f-list', namespace: 'default', labels: { 'jobhooks.io/jobflow': 'f', 'jobhooks.io/flow': 'list' }
    },
    spec: TEMPLATE,
    status: { conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-02T03:00:00Z' }] }
  }
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'f-list-x', namespace: 'default', labels: { 'batch.kubernetes.io/job-name': 'f-list' } },
    status: {
      phase: 'Succeeded',
      containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 0, message: '[1, {"k": "v"}]' } } }]
    }
  }
  request.children = { 'Job.batch/v1': { 'default/f-list': job } }
  request.related = { 'Pod.v1': { 'default/f-list-x': pod } }
  const { children, status } = syncJobFlow(request, context()).response
  t.same(children.map(c => c.metadata.name), ['f-list', 'f-each-item-0', 'f-each-item-1'])
  t.match(status.jobs, [
    { name: 'list', phase: 'Succeeded', output: '[1, {"k": "v"}]' }, { name: 'each[0]' }, { name: 'each[1]' }
  ])
})

t.test('a forEachFrom whose dependency failed or was skipped fails: no output will come to wait for', async t => {
  // Its `when` or `depends` may start it all the same; Argo errs on a withParam it cannot resolve.
  const parsed = parseJobFlowSpec(flowOf([
    { name: 'list' },
    { name: 'load', dependencies: ['list'], forEachFrom: 'list', when: "flows.list.phase != 'Succeeded'" }
  ]))
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  const now = new Date('2026-01-02T03:00:00Z')
  const load = (phase: JobRecord['phase'], message?: string): { itemsPending?: string, itemsProblem?: string } => {
    const record: JobRecord = { name: 'list', jobName: 'f-list', phase, ...(message !== undefined ? { message } : {}) }
    const flow = expandFanOut(parsed.value, name => (name === 'list' ? record : undefined), now).flows[1]
    return { itemsPending: flow?.itemsPending, itemsProblem: flow?.itemsProblem }
  }
  t.same(load('Failed', 'BackoffLimitExceeded'),
    { itemsPending: undefined, itemsProblem: 'forEachFrom list: list failed, so it has no output to read items from' })
  t.same(load('Skipped', "skipped: its when is false: 'a' == 'b'"), {
    itemsPending: undefined,
    itemsProblem: 'forEachFrom list: list was skipped, so it has no output to read items from'
  })
  t.same(load('Running'), { itemsPending: 'waiting for list', itemsProblem: undefined }, 'still to finish: it waits')
})

t.test('a forEachFrom of no items stays one flow, held back by its dependencies as any step', async t => {
  const parsed = parseJobFlowSpec(flowOf([
    { name: 'list' },
    { name: 'load', dependencies: ['list'], forEachFrom: 'list' },
    { name: 'report', dependencies: ['load'] }
  ]))
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  const list: JobRecord = { name: 'list', jobName: 'f-list', phase: 'Succeeded', output: '[]' }
  const flows = expandFanOut(parsed.value, name => (name === 'list' ? list : undefined), new Date()).flows
  t.same(flows.map(f => [f.name, f.itemsNone, f.dependencies]), [
    ['list', undefined, []],
    ['load', 'nothing to do: forEachFrom list gives no items', ['list']],
    ['report', undefined, ['load']]
  ])
})

t.test('a forEachFrom step decided before its items were known keeps its record: no items after it', async t => {
  const parsed = parseJobFlowSpec(flowOf([
    { name: 'list' },
    { name: 'load', dependencies: ['list'], forEachFrom: 'list' }
  ]))
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  const records: Record<string, JobRecord> = {
    list: { name: 'list', jobName: 'f-list', phase: 'Succeeded', output: '["a"]' },
    load: { name: 'load', jobName: 'f-load', phase: 'Skipped', message: 'not started: other failed' }
  }
  const flows = expandFanOut(parsed.value, name => records[name], new Date()).flows
  t.same(flows.map(f => [f.name, f.itemsPending]), [['list', undefined], ['load', 'waiting for its items']],
    'one flow still; only a rerun of it, not started yet, would wait a sync for its items')
  delete records.load
  t.same(expandFanOut(parsed.value, name => records[name], new Date()).flows.map(f => f.name), ['list', 'load[0]'])
})
