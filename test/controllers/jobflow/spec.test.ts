// Reading a JobFlow's spec: what makes it Invalid before anything runs. A `forEachFrom` step
// whose `depends` needs its source not to have succeeded, and a container a flow names that its
// pod does not have, are found when the spec is read, not when the step is due.
import t from 'tap'
import type { JobSpec } from 'kubernetes-types/batch/v1.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { jobSpecProblems, parseJobFlowSpec } from '../../../src/controllers/jobflow/spec.js'

const template = { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } }

function jobFlow (flows: Array<Record<string, unknown>>): KubeObject {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'f', namespace: 'default' },
    spec: { flows: flows.map(f => ({ jobTemplate: template, ...f })) }
  }
}

/** The problems of a spec of `list`, maybe `other`, and `load`, a forEachFrom over `list` with this depends. */
function problemsWith (depends: string, list: Record<string, unknown> = {}): string[] {
  const parsed = parseJobFlowSpec(jobFlow([
    { name: 'list', ...list },
    { name: 'other' },
    { name: 'load', depends, forEachFrom: 'list' }
  ]))
  return parsed.ok ? [] : parsed.problems
}

t.test('a forEachFrom step whose depends holds only when its source did not succeed is Invalid', async t => {
  t.same(problemsWith('list.Failed'), [
    'flow "load": depends "list.Failed" holds only when list did not succeed, so forEachFrom list could never ' +
      'read items (list has an output only once it succeeded)'
  ])
  for (const depends of ['list.Failed || list.Omitted', '!list', 'list.Skipped && other', 'list.AnySucceeded']) {
    t.equal(problemsWith(depends).length, 1, depends)
  }
})

t.test('a depends that may hold once its source succeeded is valid, whatever else it allows', async t => {
  for (const depends of ['list', 'list.Succeeded', 'list || list.Failed', 'list.Failed || other', '!other && list']) {
    t.same(problemsWith(depends), [], depends)
  }
})

t.test('a fan-out source is read however it ended: its items that succeeded give the array', async t => {
  t.same(problemsWith('list.Failed', { forEach: [1, 2] }), [])
})

t.test('forEachFrom must name a dependency, which a depends names too', async t => {
  t.match(problemsWith('other'), [/flow "load": forEachFrom must name one of its dependencies, not "list"/])
})

t.test('a container a flow names must be one of its pod', async t => {
  const spec = template as JobSpec
  t.same(jobSpecProblems(spec, 'flow "a"', { outputFrom: 'main' }), [])
  t.same(jobSpecProblems(spec, 'flow "a"', { outputFrom: 'report' }),
    ['flow "a": outputFrom names no container of its pod: report'])
  const script = { name: 'retry.sh', args: [], container: 'side' }
  t.same(jobSpecProblems(spec, 'flow "a" (its Job spec patched)', { script }),
    ['flow "a" (its Job spec patched): script retry.sh: no container "side" to run it in'])
  t.same(jobSpecProblems({ template: { spec: { containers: [] } } }, 'flow "a"', { outputFrom: 'report' }),
    ['flow "a": the Job template has no containers (template.spec.containers)'], 'what the API server refuses first')
})

/** The problems of a spec of `flows` and `onExit` (each with an inline template), none when valid. */
function exitProblems (flows: Array<Record<string, unknown>>, onExit: unknown): string[] {
  const flow = jobFlow(flows)
  const exits = Array.isArray(onExit) ? onExit.map(e => ({ jobTemplate: template, ...e })) : onExit
  flow.spec = { ...flow.spec as object, onExit: exits }
  const parsed = parseJobFlowSpec(flow)
  return parsed.ok ? [] : parsed.problems
}

t.test('exit steps: marked, after the DAG in the plan, and depending only on one another', async t => {
  const parsed = parseJobFlowSpec({
    ...jobFlow([{ name: 'a' }]),
    spec: { flows: [{ name: 'a', jobTemplate: template }], onExit: [{ name: 'z', jobTemplate: template }] }
  })
  t.ok(parsed.ok)
  if (parsed.ok) t.same(parsed.value.onExit.map(s => [s.name, s.exit]), [['z', true]])
  t.same(exitProblems([{ name: 'a' }], [{ name: 'z', dependencies: ['a'] }]), [
    'exit step "z" depends on "a", a step of spec.flows: exit steps start once every step of spec.flows has ' +
    'finished, and may depend only on other exit steps (read the outcome from flow.phase or JOBHOOKS_FLOW_FAILURES)'
  ])
  t.same(exitProblems([{ name: 'a' }], [{ name: 'a' }]), ['duplicate flow name "a"'], 'one Job name, one step')
  t.same(exitProblems([{ name: 'a' }], [{ name: 'y', dependencies: ['z'] }, { name: 'z', dependencies: ['y'] }]),
    ['dependency cycle: y → z → y'])
  t.same(exitProblems([{ name: 'a' }], { name: 'z' }), ['spec.onExit must be a list of steps'])
  t.same(exitProblems([{ name: 'a' }], Array.from({ length: 51 }, (_, i) => ({ name: `e${i}` }))),
    ['spec.onExit has 51 steps, more than 50'])
})

t.test('flow.phase is read by an exit step\'s when only', async t => {
  t.same(exitProblems([{ name: 'a' }], [{ name: 'z', when: "flow.phase == 'Failed'" }]), [])
  t.same(exitProblems([{ name: 'a', when: "flow.phase == 'Failed'" }], []), [
    'flow "a": when reads flow, the outcome of the whole DAG, which only an exit step (spec.onExit) can read'
  ])
  t.match(exitProblems([{ name: 'a' }], [{ name: 'z', when: 'flow.phase ==' }]),
    [/exit step "z": when "flow.phase ==" is not valid CEL/])
})

/** The problems of a spec whose one step is `{name: 'gate', ...step}` with no Job spec of its own. */
function approvalProblems (step: Record<string, unknown>): string[] {
  const flow = jobFlow([])
  flow.spec = { flows: [{ name: 'gate', ...step }] }
  const parsed = parseJobFlowSpec(flow)
  return parsed.ok ? [] : parsed.problems
}

t.test('an approval step runs no Job: no Job fields, a timeout for onTimeout', async t => {
  t.same(approvalProblems({ approval: {} }), [], 'no jobTemplate needed')
  t.same(approvalProblems({ approval: { timeoutSeconds: 600, onTimeout: 'Approve' } }), [])
  t.same(approvalProblems({ approval: {}, jobTemplate: template, retry: { limit: 1 } }),
    ['flow "gate": an approval step runs no Job, so it cannot have jobTemplate, retry'])
  t.same(approvalProblems({ approval: { onTimeout: 'Approve' } }),
    ['flow "gate": approval.onTimeout needs approval.timeoutSeconds'])
  t.same(approvalProblems({ approval: { onTimeout: 'Later', timeoutSeconds: 5 } }),
    ['flow "gate": approval.onTimeout must be Fail or Approve, not "Later"'])
  t.same(approvalProblems({ approval: true }),
    ['flow "gate": approval must be an object ({} or {timeoutSeconds, onTimeout})'])
  t.same(approvalProblems({}), ['flow "gate": set exactly one of jobTemplate and jobTemplateRef'],
    'a plain step needs a Job')
})
