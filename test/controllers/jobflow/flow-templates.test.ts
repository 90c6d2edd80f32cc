// flows[].flowTemplateRef: the expansion (names, dependencies, arguments, limits) and one sync of
// a group, from the fixture sync-flow-template.v2.json.
import t from 'tap'
import { syncJobFlow } from '../../../src/controllers/jobflow/sync.js'
import { customizeJobFlow } from '../../../src/controllers/jobflow/customize.js'
import { expandFlowTemplates, MAX_TEMPLATE_DEPTH } from '../../../src/controllers/jobflow/flow-templates.js'
import { parseJobFlowSpec, type JobFlowSpec } from '../../../src/controllers/jobflow/spec.js'
import { responseOf } from '../../helpers/hooks.js'
import { childrenOf, context, fixture } from '../../helpers/fixtures.js'
import { jobOf, listOf } from '../../helpers/records.js'
import type { KubeObject } from '../../../src/k8s/types.js'
import type { JobRecord } from '../../../src/controllers/jobflow/records.js'
import type { CustomizeRequest } from '../../../src/protocol/hooks.js'

const respond = responseOf(syncJobFlow)

const job = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ name, jobTemplate: { template: { spec: { containers: [{ name: 'main', image: 'busybox' }] } } }, ...extra })

function spec (flows: unknown[], extra: Record<string, unknown> = {}): JobFlowSpec {
  const parent = {
    apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlow', metadata: { name: 'f' }, spec: { flows, ...extra }
  }
  const parsed = parseJobFlowSpec(parent)
  if (!parsed.ok) throw new Error(parsed.problems.join('; '))
  return parsed.value
}

function templates (specs: Record<string, Record<string, unknown>>): Map<string, KubeObject> {
  return new Map(Object.entries(specs).map(([name, s]) =>
    [name, { apiVersion: 'jobhooks.io/v1alpha1', kind: 'JobFlowTemplate', metadata: { name, generation: 2 }, spec: s }]
  ))
}

t.test('a group\'s steps are renamed, their dependencies and depends with them', async t => {
  const [x, y] = [job('x'), job('y', { depends: 'x.Failed || x' })]
  const z = job('z', { forEachFrom: 'y', dependencies: ['y'] })
  const expanded = expandFlowTemplates(
    spec([job('a'), { name: 'g', depends: 'a.Failed', flowTemplateRef: { name: 'two' } }]),
    templates({ two: { flows: [x, y, z] } }),
    'default'
  )
  if (!expanded.ok) throw new Error(expanded.problems.join('; '))
  const byName = new Map(expanded.value.flows.map(f => [f.name, f]))
  t.same([...byName.keys()], ['a', 'g', 'g.x', 'g.y', 'g.z'])
  t.match(byName.get('g'),
    { depends: { source: 'a.Failed' }, group: { template: 'two', members: ['g.x', 'g.y', 'g.z'], generation: 2 } })
  t.match(byName.get('g.x'), { scope: 'g', dependencies: [] })
  const tree = { op: 'or', args: [{ step: 'g.x' }, { step: 'g.x' }] }
  t.match(byName.get('g.y'), { dependencies: ['g.x'], depends: { steps: ['g.x'], tree } })
  t.match(byName.get('g.z'), { forEachFrom: 'g.y', dependencies: ['g.y'] })
  t.same(expanded.used.map(u => u.metadata.name), ['two'])
})

t.test('what makes a JobFlow running templates Invalid', async t => {
  const problems = (flows: unknown[], specs: Record<string, Record<string, unknown>>): string[] => {
    const expanded = expandFlowTemplates(spec(flows), templates(specs), 'default')
    return expanded.ok ? [] : expanded.problems
  }
  const ref = (name: string, args?: unknown[]): Record<string, unknown> =>
    ({ name: 'g', flowTemplateRef: { name, ...(args !== undefined ? { arguments: args } : {}) } })
  const takesA = { t: { arguments: [{ name: 'a', value: 'x' }], flows: [job('x')] } }
  t.match(problems([ref('t', [{ name: 'nope', value: '1' }])], takesA),
    ['flow "g": JobFlowTemplate "t" has no argument nope (its arguments: a)'])
  t.match(problems([ref('t')], { t: { flows: [job('x', { when: "args.missing == '1'" })] } }),
    [/when reads args.missing, which spec.arguments does not give/])
  t.match(problems([ref('t')], { t: { flows: [job('x')], onExit: [job('bye')] } }),
    [/spec.onExit runs only when the template is a whole JobFlow/])
  const cycle = [job('x', { dependencies: ['y'] }), job('y', { dependencies: ['x'] })]
  t.match(problems([ref('t')], { t: { flows: cycle } }),
    [/dependency cycle/])
  const depths = [...Array(MAX_TEMPLATE_DEPTH + 1).keys()]
  const chain: Record<string, Record<string, unknown>> = Object.fromEntries(depths.map(i =>
    [`t${i}`, { flows: [{ name: 's', flowTemplateRef: { name: `t${i + 1}` } }] }]))
  chain[`t${MAX_TEMPLATE_DEPTH + 1}`] = { flows: [job('x')] }
  t.match(problems([ref('t0')], chain), [/run templates 5 deep at most: t0 → t1 → t2 → t3 → t4 → t5/])
  const long = 'x'.repeat(60)
  t.match(problems([{ name: long, flowTemplateRef: { name: 't' } }], { t: { flows: [job('abcd')] } }),
    [/its steps' names pass 63 characters/])
  const wide = { flows: [...Array(50).keys()].map(i => ({ name: `s${i}`, flowTemplateRef: { name: 'leaf' } })) }
  t.match(problems([ref('wide')], { wide, leaf: { flows: [...Array(50).keys()].map(i => job(`j${i}`)) } }),
    [/more than 2000/])
})

t.test('a group starts once its dependency succeeded, its steps with their template\'s arguments', async t => {
  const response = respond(fixture('jobflow/sync-flow-template.v2.json'), context())
  const jobs = childrenOf(response.children, 'Job')
  t.same([...jobs.keys()], ['jobflow-example-job1', 'jobflow-example-checks.unit', 'jobflow-example-checks.lint'])
  const env = jobOf(jobs.get('jobflow-example-checks.unit')).spec.template.spec?.containers[0]?.env
  t.match(env, [{ name: 'JOBHOOKS_ARG_SUITE', value: 'fast' }, { name: 'JOBHOOKS_ARG_LEVEL', value: '2' }])
  t.match(jobOf(jobs.get('jobflow-example-checks.unit')).metadata.labels, { 'jobhooks.io/flow': 'checks.unit' })
  const records = listOf<JobRecord>(response.status, 'jobs')
  t.match(records.find(r => r.name === 'checks'),
    { phase: 'Running', message: 'running the steps of JobFlowTemplate checks (generation 3)' })
  t.match(records.find(r => r.name === 'checks.report'),
    { phase: 'Pending', message: 'waiting for checks.unit, checks.lint' })
  const pins = [...childrenOf(response.children, 'ConfigMap').values()]
  t.match(pins, [{ metadata: { labels: { 'jobhooks.io/pinned': 'jobflowtemplates' } }, immutable: true }])
  t.same(Object.keys(pins[0]?.data ?? {}), ['checks'], 'the template it read is pinned')
})

t.test('with a template, customize asks for every JobFlowTemplate and JobTemplate of the namespace', async t => {
  const request = fixture('jobflow/sync-flow-template.v2.json') as unknown as CustomizeRequest
  const rules = customizeJobFlow(request).relatedResources
  t.match(rules, [
    { resource: 'jobflowtemplates', namespace: 'default' },
    { resource: 'jobtemplates', namespace: 'default' },
    { resource: 'pods', labelSelector: { matchLabels: { 'jobhooks.io/jobflow': 'jobflow-example' } } }
  ])
  t.notOk(rules[0] !== undefined && 'names' in rules[0], 'by namespace, not by name: templates name templates')
  t.notOk(rules[2]?.labelSelector !== undefined && 'matchExpressions' in rules[2].labelSelector, 'every pod')
})
