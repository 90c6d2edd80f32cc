// Argo's assessDAGPhase over a JobFlow's records: the leaf steps on a failed branch, a failure
// later steps handled, an omission known before it is recorded, and a fan-out step as one.
import t from 'tap'
import {
  failedLeaves, groupPhase, itemGroups, outputStillRead, recordEnd, stepView
} from '../../../src/controllers/jobflow/branches.js'
import { parseJobFlowSpec, type FlowSpec } from '../../../src/controllers/jobflow/spec.js'
import { orderByDependencies } from '../../../src/controllers/jobflow/dag.js'
import type { FlowPhase, JobRecord } from '../../../src/controllers/jobflow/records.js'

const TEMPLATE = { template: { spec: { containers: [{ name: 'main', image: 'busybox' }] } } }

function steps (flows: Array<Record<string, unknown>>): FlowSpec[] {
  const parsed = parseJobFlowSpec({
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'f' },
    spec: { flows: flows.map(f => ({ jobTemplate: TEMPLATE, ...f })) }
  })
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  return orderByDependencies(parsed.value.flows).order
}

function records (phases: Record<string, FlowPhase | [FlowPhase, string]>): Map<string, JobRecord> {
  return new Map(Object.entries(phases).map(([name, p]) => {
    const [phase, message] = Array.isArray(p) ? p : [p, undefined]
    return [name, { name, jobName: `f-${name}`, phase, ...(message !== undefined ? { message } : {}) }]
  }))
}

const WHEN_SKIPPED = "skipped: its when is false: flows.a.phase == 'Succeeded'"

t.test('a skipped record ended by its own when, or omitted by its dependencies', async t => {
  t.equal(recordEnd({ phase: 'Skipped', message: WHEN_SKIPPED }), 'Skipped')
  t.equal(recordEnd({ phase: 'Skipped', message: 'not started: b failed' }), 'Omitted')
  t.equal(recordEnd({ phase: 'Running' }), undefined)
})

t.test('a failure handled by the step after it does not fail the flow; one below an omitted leaf does', async t => {
  const dag = steps([{ name: 'a' }, { name: 'fix', depends: 'a.Failed' }, { name: 'next', dependencies: ['a'] }])
  const omitted: [FlowPhase, string] = ['Skipped', 'not started: depends on a (failed)']
  t.same(failedLeaves(dag, records({ a: 'Failed', fix: 'Succeeded', next: omitted }), new Map()), ['next'])
  const handled = steps([{ name: 'a' }, { name: 'fix', depends: 'a.Failed' }])
  t.same(failedLeaves(handled, records({ a: 'Failed', fix: 'Succeeded' }), new Map()), [])
  t.same(failedLeaves(handled, records({ a: 'Failed', fix: 'Failed' }), new Map()), ['fix'])
})

t.test('a leaf its own when skipped carries the failure of the branch that led to it', async t => {
  const dag = steps([{ name: 'a' }, { name: 'b', dependencies: ['a'], when: "flows.a.phase == 'Succeeded'" }])
  t.same(failedLeaves(dag, records({ a: 'Failed', b: ['Skipped', WHEN_SKIPPED] }), new Map()), ['b'])
  t.same(failedLeaves(dag, records({ a: 'Succeeded', b: ['Skipped', WHEN_SKIPPED] }), new Map()), [])
})

t.test('known early: a plain dependant of a failure will be omitted; a handler may still run', async t => {
  const plain = steps([{ name: 'a' }, { name: 'b', dependencies: ['a'] }, { name: 'c', dependencies: ['b'] }])
  t.same(failedLeaves(plain, records({ a: 'Failed' }), new Map()), ['c'], 'b and c are not recorded yet')
  const handler = steps([{ name: 'a' }, { name: 'b', depends: 'a.Failed' }])
  t.same(failedLeaves(handler, records({ a: 'Failed' }), new Map()), [], 'b has not decided yet')
  const running = steps([{ name: 'a' }, { name: 'b', dependencies: ['a'], when: "flows.a.phase == 'Succeeded'" },
    { name: 'c', dependencies: ['b'] }])
  t.same(failedLeaves(running, records({ a: 'Failed', b: ['Skipped', WHEN_SKIPPED], c: 'Running' }), new Map()), [],
    'c runs after a when-skipped step: its own end will decide its branch')
})

t.test('a fan-out step is one: failed as soon as an item failed, its phase by one rule', async t => {
  const dag = steps([{ name: 's', forEach: ['x', 'y'] }, { name: 'after', dependencies: ['s'] }])
  const groups = new Map([['s', ['s[0]', 's[1]']]])
  t.same(failedLeaves(dag, records({ 's[0]': 'Failed', 's[1]': 'Running' }), groups), ['after'])
  t.same(failedLeaves(dag, records({ 's[0]': 'Succeeded', 's[1]': 'Running' }), groups), [])
  t.equal(groupPhase([{ phase: 'Succeeded' }, { phase: 'Failed' }, { phase: 'Running' }]), 'Failed')
  t.equal(groupPhase([{ phase: 'Succeeded' }, { phase: 'Queued' }]), 'Running')
  t.equal(groupPhase([{ phase: 'Succeeded' }, { phase: 'Pending' }]), 'Pending')
  const skipped = { phase: 'Skipped', message: WHEN_SKIPPED }
  t.equal(groupPhase([skipped, skipped]), 'Skipped')
  t.equal(groupPhase([{ phase: 'Succeeded' }, { phase: 'Skipped', message: 'not started: a failed' }]), 'Succeeded')
  t.equal(groupPhase([]), 'Succeeded', 'an empty fan-out has nothing to do')
  const [step] = steps([{ name: 's', forEach: ['x', 'y'] }])
  const items = ['s[0]', 's[1]'].map(name => ({ ...step, name }))
  t.same(itemGroups({ fanOuts: new Map([['s', { step, items }]]) } as never), new Map([['s', ['s[0]', 's[1]']]]))
})

t.test('an output is still read while a step after it, or a forEachFrom over it, has not succeeded', async t => {
  const dag = steps([{ name: 'a' }, { name: 'b', dependencies: ['a'] }, { name: 's', forEach: [1, 2] },
    { name: 'from', dependencies: ['s'], forEachFrom: 's' }, { name: 'after', dependencies: ['from'] }])
  const groups = new Map([['s', ['s[0]', 's[1]']], ['from', ['from[0]']]])
  const running = outputStillRead(dag, records({ a: 'Succeeded', b: 'Running', 's[0]': 'Succeeded' }), groups)
  t.ok(running('a'))
  t.ok(running('s[1]'), 'the items of s are read by from')
  t.notOk(running('after'), 'no step reads after')
  const done = outputStillRead(dag, records({ a: 'Succeeded', b: 'Succeeded', 'from[0]': 'Succeeded' }), groups)
  t.notOk(done('a'))
  t.notOk(done('s[0]'))
  t.ok(outputStillRead(dag, records({ b: 'Failed' }), groups)('a'), 'a failed reader may be rerun')
})

t.test('a step view answers for a fan-out step from its items, as one step', async t => {
  const groups = new Map([['s', ['s[0]', 's[1]', 's[2]']]])
  const phases = records({ a: 'Succeeded', 's[0]': 'Succeeded', 's[1]': 'Failed', 's[2]': 'Running' })
  const running = stepView(phases, groups)
  t.equal(running.settled('s'), undefined, 'open while an item runs')
  t.equal(running.certain('s'), 'Failed', 'but certain to fail once an item failed')
  t.equal(running.openItems('s'), 1)
  t.equal(running.openItems('a'), undefined, 'a step without items')
  t.same(running.settled('a'), { end: 'Succeeded' })
  t.same(running.itemRecords('s')?.map(r => r?.phase), ['Succeeded', 'Failed', 'Running'])
  const done = stepView(records({ 's[0]': 'Succeeded', 's[1]': 'Succeeded', 's[2]': 'Succeeded' }), groups)
  t.same(done.settled('s'), { end: 'Succeeded', anySucceeded: true, allFailed: false })
  t.equal(done.openItems('s'), 0)
})
