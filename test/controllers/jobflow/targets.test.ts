// spec.targets (targets.ts): the steps that run are the targets and what they need; the others are
// Skipped before anything else is decided and fail nothing; the outcome is the targets' (Argo's
// assessDAGPhase over targetTasks). And jobhooks.io/rerun-steps (rerun.ts): a rerun of the steps
// named and every step after them, however they ended.
import t from 'tap'
import { parseJobFlowSpec } from '../../../src/controllers/jobflow/spec.js'
import {
  isNeeded, isUntargeted, NOT_A_TARGET, untargetedMessage, type Targets
} from '../../../src/controllers/jobflow/targets.js'
import { failedLeaves } from '../../../src/controllers/jobflow/branches.js'
import { orderByDependencies } from '../../../src/controllers/jobflow/dag.js'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import type { FlowPhase, JobRecord } from '../../../src/controllers/jobflow/records.js'
import type { SyncRequest, SyncResponse } from '../../../src/protocol/hooks.js'
import { responseOf } from '../../helpers/hooks.js'
import { childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { condition } from '../../helpers/conditions.js'
import { specOf } from '../../helpers/objects.js'
import { type JobFlowManifestSpec, listOf } from '../../helpers/records.js'

const respond = responseOf(syncJobFlow)
const TEMPLATE = { template: { spec: { containers: [{ name: 'main', image: 'busybox' }] } } }

function parse (spec: Record<string, unknown>): ReturnType<typeof parseJobFlowSpec> {
  const flows = (spec.flows as Array<Record<string, unknown>>).map(f => ({ jobTemplate: TEMPLATE, ...f }))
  const exits = spec.onExit as Array<Record<string, unknown>> | undefined
  const onExit = exits?.map(f => ({ jobTemplate: TEMPLATE, ...f }))
  const full = { ...spec, flows, ...(onExit !== undefined ? { onExit } : {}) }
  return parseJobFlowSpec({ apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', metadata: { name: 'f' }, spec: full })
}

function targetsOf (spec: Record<string, unknown>): Targets | undefined {
  const parsed = parse(spec)
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  return parsed.value.targets
}

const problemsOf = (spec: Record<string, unknown>): string[] => {
  const parsed = parse(spec)
  return parsed.ok ? [] : parsed.problems
}

// a → b → d, a → c → e (depends), list → shard (forEachFrom), and x alone.
const FLOWS = [
  { name: 'a' }, { name: 'b', dependencies: ['a'] }, { name: 'c', dependencies: ['a'] },
  { name: 'd', dependencies: ['b'] }, { name: 'e', depends: 'c.Succeeded || c.Failed' },
  { name: 'list' }, { name: 'shard', dependencies: ['list'], forEachFrom: 'list' }, { name: 'x' }
]

t.test('the steps that run: the targets and, transitively, their dependencies, depends and forEachFrom', async t => {
  t.same([...targetsOf({ flows: FLOWS, targets: ['e'] })?.needed ?? []].sort(), ['a', 'c', 'e'])
  t.same([...targetsOf({ flows: FLOWS, targets: ['d', 'shard', 'd'] })?.needed ?? []].sort(),
    ['a', 'b', 'd', 'list', 'shard'])
  t.same(targetsOf({ flows: FLOWS, targets: ['d', 'shard', 'd'] })?.names, ['d', 'shard'], 'each name once')
  t.equal(targetsOf({ flows: FLOWS, targets: [] }), undefined, 'an empty list: every step')
  t.equal(targetsOf({ flows: FLOWS }), undefined, 'unset: every step')
})

t.test('a target that is no step of flows, an exit step, or no list of names: Invalid, saying so', async t => {
  t.same(problemsOf({ flows: FLOWS, targets: ['e', 'nope', 'zz'] }),
    ['spec.targets names no step of spec.flows: "nope", "zz"'])
  t.same(problemsOf({ flows: FLOWS, onExit: [{ name: 'notify' }], targets: ['notify'] }), [
    'spec.targets names exit steps ("notify"): exit steps are no target, they run after whatever part of ' +
      'spec.flows ran'
  ])
  t.same(problemsOf({ flows: FLOWS, targets: 'e' }), ['spec.targets must be a list of step names of spec.flows'])
  t.same(problemsOf({ flows: FLOWS, targets: [1] }), ['spec.targets must be a list of step names of spec.flows'])
})

t.test('a step no target needs is skipped with the reason; not an exit step, nor an item of a needed step', async t => {
  const targets = targetsOf({ flows: FLOWS, targets: ['e'] })
  t.equal(untargetedMessage(targets, { name: 'b' }), `${NOT_A_TARGET} (spec.targets: e)`)
  t.equal(untargetedMessage(targets, { name: 'c' }), undefined)
  t.equal(untargetedMessage(undefined, { name: 'b' }), undefined, 'no targets: every step runs')
  t.equal(untargetedMessage(targets, { name: 'notify', exit: true }), undefined, 'exit steps always run')
  t.ok(isNeeded(targetsOf({ flows: FLOWS, targets: ['shard'] }),
    { name: 'shard[3]', item: { step: 'shard', index: 3, value: 'x' } }), 'an item goes by its step')
  t.notOk(isNeeded(targets, { name: 'shard[3]', item: { step: 'shard', index: 3, value: 'x' } }))
  const many = targetsOf({ flows: FLOWS, targets: ['a', 'b', 'c', 'd', 'e', 'list', 'shard'] })
  t.equal(untargetedMessage(many, { name: 'x' }), `${NOT_A_TARGET} (spec.targets: a, b, c, d, e and 2 more)`,
    'at most five names: every skipped record carries the message')
  t.ok(isUntargeted({ phase: 'Skipped', message: `${NOT_A_TARGET} (spec.targets: e)` }))
  t.notOk(isUntargeted({ phase: 'Skipped', message: 'not started: depends on a (failed)' }))
})

function records (phases: Record<string, FlowPhase | [FlowPhase, string]>): Map<string, JobRecord> {
  return new Map(Object.entries(phases).map(([name, p]) => {
    const [phase, message] = Array.isArray(p) ? p : [p, undefined]
    return [name, { name, jobName: `f-${name}`, phase, ...(message !== undefined ? { message } : {}) }]
  }))
}

t.test('with targets the outcome is the targets\' branches: a skipped non-target fails nothing', async t => {
  const parsed = parse({
    flows: [{ name: 'a' }, { name: 'fix', depends: 'a.Failed' }, { name: 'next', dependencies: ['a'] }]
  })
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  const steps = orderByDependencies(parsed.value.flows).order
  const untargeted: [FlowPhase, string] = ['Skipped', `${NOT_A_TARGET} (spec.targets: fix)`]
  const ended = records({ a: 'Failed', fix: 'Succeeded', next: untargeted })
  t.same(failedLeaves(steps, ended, new Map()), ['next'], 'without targets the leaf next fails the flow')
  t.same(failedLeaves(steps, ended, new Map(), ['fix']), [], 'targets fix: the failure is handled')
  t.same(failedLeaves(steps, ended, new Map(), ['a', 'fix']), ['a'], 'a target that failed fails the flow, as in Argo')
})

function withTargets (path: string, targets: string[]): SyncRequest {
  const request = fixture(path)
  specOf<JobFlowManifestSpec>(request.parent).targets = targets
  return request
}
const jobs = (response: SyncResponse): string[] => [...childrenOf(response.children, 'Job').keys()]
const last = (response: SyncResponse): Record<string, unknown> =>
  Object.fromEntries(listOf<JobRecord>(response.status, 'jobs').map(r => [r.name, [r.phase, r.message]]))

t.test('a sync with targets: only what they need starts; the rest is Skipped and never gets a Job', async t => {
  // job1 → job2 → job3 (after job1, job2); job4; job5 after job2, job4.
  const response = respond(withTargets('jobflow/sync-new.v2.json', ['job3']), context())
  t.same(jobs(response), ['jobflow-example-job1'])
  const skipped = ['Skipped', `${NOT_A_TARGET} (spec.targets: job3)`]
  t.same(last(response), {
    job1: ['Pending', 'creating the Job'],
    job2: ['Pending', 'waiting for job1'],
    job3: ['Pending', 'waiting for job1, job2'],
    job4: skipped,
    job5: skipped
  })
})

t.test('a finished flow with targets: Succeeded, its message counting the steps no target needs', async t => {
  // The rerun fixture without job2's Job: job1 and job4 ran, and the target job4 needs neither job2 nor job5.
  const request = withTargets('jobflow/sync-rerun.v2.json', ['job4'])
  delete request.parent.metadata.annotations
  delete (request.children['Job.batch/v1'] as Record<string, unknown>)['default/jobflow-example-job2']
  const status = request.parent.status as Record<string, unknown>
  delete status.completionTime
  status.phase = 'Running'
  status.conditions = []
  status.jobs = [
    { name: 'job4', jobName: 'jobflow-example-job4', phase: 'Succeeded', startTime: '2026-01-02T03:00:05Z' },
    { name: 'job1', jobName: 'jobflow-example-job1', phase: 'Succeeded', startTime: '2026-01-02T03:00:05Z' }
  ]
  const response = respond(request, context())
  t.equal(response.status.phase, 'Succeeded')
  t.match(condition(response.status, 'Complete'), {
    status: 'True',
    message: '2 of 5 jobs succeeded, 3 not run: no target needs them (spec.targets)'
  })
})

function rerunSteps (steps: string, targets?: string[]): SyncResponse {
  const request = fixture('jobflow/sync-rerun.v2.json')
  request.parent.metadata.annotations = { 'jobhooks.io/rerun': '1', 'jobhooks.io/rerun-steps': steps }
  if (targets !== undefined) specOf<JobFlowManifestSpec>(request.parent).targets = targets
  return respond(request, context())
}

t.test('jobhooks.io/rerun-steps: the steps named and every step after them rerun, even succeeded ones', async t => {
  const response = rerunSteps('job1')
  t.same(jobs(response), ['jobflow-example-job1', 'jobflow-example-job1-2', 'jobflow-example-job2',
    'jobflow-example-job4'], 'job1 runs again; job4 keeps its Job and its record')
  t.match(response.status.rerun, {
    value: '1', steps: ['job1'], message: 'rerunning job1, job2, job3, job5 (job1 and the steps after them)'
  })
  const attempts = listOf<JobRecord>(response.status, 'jobs')
  t.same(attempts.filter(r => r.name === 'job4').map(r => r.phase), ['Succeeded'])
  t.match(attempts.filter(r => r.name === 'job1'), [{ phase: 'Succeeded' }, { attempt: 2, rerun: '1' }])
  t.match(attempts.filter(r => r.name === 'job3'),
    [{ phase: 'Skipped' }, { attempt: 2, message: 'waiting for job1, job2' }])
  const spaced = rerunSteps(' job4 , job4,')
  t.match(spaced.status.rerun, { steps: ['job4'], message: 'rerunning job4, job5 (job4 and the steps after them)' })
})

t.test('jobhooks.io/rerun-steps naming no step: nothing reruns, status.rerun says why; the spec is valid', async t => {
  const response = rerunSteps('job2,nope')
  t.same(jobs(response), ['jobflow-example-job1', 'jobflow-example-job2', 'jobflow-example-job4'])
  t.match(response.status.rerun, {
    value: '1',
    steps: ['job2', 'nope'],
    message: 'nothing rerun: jobhooks.io/rerun-steps names no step of the JobFlow: nope'
  })
  t.equal(response.status.phase, 'Failed')
  t.match(condition(response.status, 'Valid'), { status: 'True' })
})

t.test('a rerun under targets leaves the steps no target needs as they are', async t => {
  const plain = fixture('jobflow/sync-rerun.v2.json')
  specOf<JobFlowManifestSpec>(plain.parent).targets = ['job3']
  const response = respond(plain, context())
  t.match(response.status.rerun, { message: 'rerunning job2, job3' }, 'job5 is skipped but no target needs it')
  t.same(last(response).job5, ['Skipped', 'not started: job2 failed'], 'its record stays')
  t.match(rerunSteps('job4', ['job3']).status.rerun,
    { message: 'nothing to rerun: spec.targets needs none of job4 and the steps after them' })
})
