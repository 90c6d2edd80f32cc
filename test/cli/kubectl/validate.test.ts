// `kubectl jobhooks validate -f`: our objects checked against the CRDs with no cluster, each
// refusal on standard error as kubectl prints it; exit 0 when all are valid, 1 otherwise.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { plugin } from '../../helpers/plugin.js'
import { exampleJobFlow } from '../../helpers/examples.js'

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: 'b' } }

function misspelled (): Record<string, unknown> {
  const flow = exampleJobFlow('team-a') as unknown as { spec: { flows: Array<Record<string, unknown>> } }
  const second = flow.spec.flows[1] as Record<string, unknown>
  second.dependecies = second.dependencies
  delete second.dependencies
  return flow as unknown as Record<string, unknown>
}

t.test('validate -f: valid objects named on stdout, other kinds said not checked, exit 0', async t => {
  const { run, fake } = await plugin(t, [])
  const dir = t.testdir({ 'flow.yaml': [exampleJobFlow('team-a'), configMap].map(o => stringify(o)).join('---\n') })
  const result = await run(['validate', '-f', join(dir, 'flow.yaml')])
  t.equal(result.code, 0, result.err)
  t.equal(result.out, 'jobflow.jobhooks.io/jobflow-example valid\n')
  t.equal(result.err, 'ConfigMap/settings not checked: not a jobhooks kind\n')
  t.same(fake.requests, [], 'no request reached a cluster')
})

t.test('validate -f: an unknown field, a schema error, refused as kubectl apply --validate=strict says', async t => {
  const { run } = await plugin(t, [])
  const bad = { ...exampleJobFlow('team-a'), metadata: { name: 'bad' } } as unknown as { spec: Record<string, unknown> }
  bad.spec.failurePolicy = 'Stop'
  const dir = t.testdir({ 'a.yaml': stringify(misspelled()), 'b.yaml': stringify(bad) })
  const result = await run(['validate', '-f', join(dir, 'a.yaml'), '-f', join(dir, 'b.yaml')])
  t.equal(result.code, 1)
  t.equal(result.out, '')
  t.equal(result.err, [
    `Error from server (BadRequest): error when creating "${join(dir, 'a.yaml')}": JobFlow in version "v1alpha1" ` +
      'cannot be handled as a JobFlow: strict decoding error: unknown field "spec.flows[1].dependecies"',
    'The JobFlow "bad" is invalid: ',
    '* spec.failurePolicy: Unsupported value: "Stop": supported values: "FailFast", "Continue"',
    '* ' + '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; ' +
      'correct the existing errors to complete validation',
    ''
  ].join('\n'))
})

t.test('validate: usage and unreadable files are errors as kubectl words them, exit 1', async t => {
  const { run } = await plugin(t, [])
  const missing = await run(['validate'])
  t.equal(missing.code, 1)
  t.match(missing.err, /^error: validate needs a manifest: validate -f <manifest\.yaml>\n/)
  const none = await run(['validate', '-f', '/no/such/file.yaml'])
  t.equal(none.code, 1)
  t.equal(none.err, 'error: /no/such/file.yaml: no such file\n')
  const help = await run(['validate', '--help'])
  t.equal(help.code, 0)
  t.match(help.out, /^usage: kubectl jobhooks validate -f/)
  t.match((await run(['--help'])).out, /kubectl jobhooks validate -f <manifest\.yaml>/, 'in the plugin\'s usage')
})

t.test('validate -f: a JobFlowTemplate, checked as its CRD says, its steps as JobFlow steps', async t => {
  const { run } = await plugin(t, [])
  const flows = (exampleJobFlow('team-a').spec as { flows: unknown[] }).flows
  const template = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlowTemplate',
    metadata: { name: 'five' },
    spec: { arguments: [{ name: 'tag' }], flows }
  }
  const broken = structuredClone(template) as typeof template & { spec: { flows: Array<Record<string, unknown>> } }
  broken.metadata.name = 'broken'
  broken.spec.flows[0] = { name: 'job1', flowTemplateRef: { name: 'other' }, retry: { limit: 1 } }
  const dir = t.testdir({ 'a.yaml': stringify(template), 'b.yaml': stringify(broken) })
  t.same(await run(['validate', '-f', join(dir, 'a.yaml')]),
    { code: 0, out: 'jobflowtemplate.jobhooks.io/five valid\n', err: '' })
  const refused = await run(['validate', '-f', join(dir, 'b.yaml')])
  t.equal(refused.code, 1)
  t.equal(refused.err, 'The JobFlowTemplate "broken" is invalid: spec.flows[0]: Invalid value: a flowTemplateRef ' +
    'step runs the template\'s steps and no Job of its own, so it cannot have jobTemplate, jobTemplateRef, approval, ' +
    'patch, script, retry, queueName, outputFrom, forEachFrom, parallelism or shareVolumeMounts\n')
})
