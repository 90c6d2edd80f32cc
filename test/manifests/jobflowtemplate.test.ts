// The JobFlowTemplate CRD and the JobFlow step's flowTemplateRef: a template's steps are JobFlow
// steps (its CRD writes the step schema out again, and must not drift from jobflow.yaml's), and a
// flowTemplateRef step has none of a Job's fields. The hook's own checks of flowTemplateRef are
// the engine's (test/controllers/).
import t from 'tap'
import { type Json, clone, crds, storageVersion, openApiErrors, celErrors, fiveJobs } from '../helpers/manifests.js'

const crdOf = (kind: string): Json => crds.find(c => c.spec.names.kind === kind)
const specOf = (kind: string): Json => storageVersion(crdOf(kind)).schema.openAPIV3Schema.properties.spec.properties

/** The five-job example with job3 running the JobFlowTemplate `build` in place of its Job. */
function withTemplateStep (): Json {
  const o = fiveJobs()
  delete o.spec.flows[2].jobTemplate
  o.spec.flows[2].flowTemplateRef = { name: 'build', arguments: [{ name: 'tag', value: 'v1.2.3' }] }
  return o
}

/** A JobFlowTemplate of the five-job example's steps, with one argument to give and one default. */
function template (): Json {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlowTemplate',
    metadata: { name: 'five-jobs' },
    spec: {
      arguments: [{ name: 'tag', description: 'the image tag' }, { name: 'env', value: 'dev' }],
      flows: clone(fiveJobs().spec.flows),
      onExit: [{ name: 'report', jobTemplateRef: 'reporter' }]
    }
  }
}

t.test('a JobFlowTemplate step has the schema of a JobFlow step, its arguments JobFlow\'s names', async t => {
  const flow = specOf('JobFlow')
  const jft = specOf('JobFlowTemplate')
  t.same(flow.onExit.items, flow.flows.items, 'JobFlow: onExit items are flows items')
  t.same(jft.flows.items, flow.flows.items, 'JobFlowTemplate flows items: the JobFlow step, as jobflow.yaml has it')
  t.same(jft.onExit.items, flow.flows.items, 'JobFlowTemplate onExit items: the JobFlow step')
  const bounds = (list: Json): Json => {
    const { description: _, items: __, ...rest } = list
    return rest
  }
  t.same(bounds(jft.flows), bounds(flow.flows), 'flows: the same bounds and list type')
  t.same(bounds(jft.onExit), bounds(flow.onExit), 'onExit: the same bounds and list type')
  t.same(bounds(jft.arguments), bounds(flow.arguments), 'arguments: the same bounds and list type')
  const { description: _, ...name } = jft.arguments.items.properties.name
  const { description: __, ...flowName } = flow.arguments.items.properties.name
  t.same(name, flowName, 'an argument\'s name: the pattern and length of JobFlow\'s')
  t.equal(jft.arguments.items.properties.value.maxLength, flow.arguments.items.properties.value.maxLength)
  const refArgument = flow.flows.items.properties.flowTemplateRef.properties.arguments
  t.same(bounds(refArgument), bounds(flow.arguments), 'flowTemplateRef.arguments: as spec.arguments')
  t.same(refArgument.items.required, ['name', 'value'], 'flowTemplateRef.arguments: each with its value')
})

t.test('the JobFlowTemplate CRD takes a template and refuses a broken one', async t => {
  const crd = crdOf('JobFlowTemplate')
  const root = storageVersion(crd).schema.openAPIV3Schema
  t.same(openApiErrors(crd, template()), [], 'the schema takes it')
  t.same(celErrors(root, template()), [], 'the CEL rules take it')
  const schemaCases: Array<[string, (o: Json) => void]> = [
    ['no flows', o => { delete o.spec.flows }],
    ['an empty flow list', o => { o.spec.flows = [] }],
    ['an argument without a name', o => { delete o.spec.arguments[0].name }],
    ['an argument name that starts with a digit', o => { o.spec.arguments[0].name = '1tag' }],
    ['two arguments with one name', o => { o.spec.arguments[1].name = 'tag' }],
    ['a default that is not a string', o => { o.spec.arguments[1].value = 3 }],
    ['more than 64 arguments', o => { o.spec.arguments = Array.from({ length: 65 }, (_, i) => ({ name: `a${i}` })) }],
    ['a status, which the kind has not', o => { o.status = { phase: 'Running' } }],
    ['a misspelt field', o => { o.spec.flow = o.spec.flows }]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = template()
    mutate(o)
    t.not(openApiErrors(crd, o).length, 0, `the schema refuses ${what}`)
  }
  const o = template()
  o.spec.flows[0].jobTemplateRef = 'twice'
  t.match(celErrors(root, o), [/exactly one of jobTemplate and jobTemplateRef/], 'its steps keep the step rules')
})

t.test('flowTemplateRef: a step that runs a template\'s DAG and no Job of its own', async t => {
  const crd = crdOf('JobFlow')
  const root = storageVersion(crd).schema.openAPIV3Schema
  t.same(openApiErrors(crd, withTemplateStep()), [], 'the schema takes a flowTemplateRef step')
  t.same(celErrors(root, withTemplateStep()), [], 'the CEL rules take it')
  const jobFields: Record<string, unknown> = {
    jobTemplate: { template: {} },
    jobTemplateRef: 'builder',
    approval: {},
    patch: { backoffLimit: 1 },
    script: { name: 'check.sh' },
    retry: { limit: 1 },
    queueName: 'team-a',
    outputFrom: 'main',
    forEachFrom: 'job1',
    parallelism: 2,
    shareVolumeMounts: [{ name: 'cache', mountPath: '/cache' }]
  }
  for (const [field, value] of Object.entries(jobFields)) {
    const o = withTemplateStep()
    o.spec.flows[2][field] = value
    t.same(openApiErrors(crd, o), [], `with ${field}: the OpenAPI schema alone lets it through`)
    t.match(celErrors(root, o), [/^\.spec\.flows\[2\]: a flowTemplateRef step runs the template's steps and no Job /],
      `with ${field}: one CEL rule refuses it`)
  }
  const forEach = withTemplateStep()
  forEach.spec.flows[2].forEach = ['a']
  t.same(celErrors(root, forEach), [], 'forEach is the hook\'s to refuse (CEL cannot read its items)')
  const exit = withTemplateStep()
  exit.spec.onExit = [{ name: 'cleanup', flowTemplateRef: { name: 'cleanup' }, retry: { limit: 1 } }]
  t.match(celErrors(root, exit), [/^\.spec\.onExit\[0\]: a flowTemplateRef step/], 'an exit step too')

  const schemaCases: Array<[string, (ref: Json) => void]> = [
    ['no name', ref => { delete ref.name }],
    ['an empty name', ref => { ref.name = '' }],
    ['a name that is no DNS subdomain', ref => { ref.name = 'Build' }],
    ['an argument without a value', ref => { delete ref.arguments[0].value }],
    ['two arguments with one name', ref => { ref.arguments.push({ name: 'tag', value: 'v2' }) }],
    ['a value longer than 4096', ref => { ref.arguments[0].value = 'x'.repeat(4097) }],
    ['an unknown field', ref => { ref.namespace = 'elsewhere' }]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = withTemplateStep()
    mutate(o.spec.flows[2].flowTemplateRef)
    t.not(openApiErrors(crd, o).length, 0, `the schema refuses a flowTemplateRef with ${what}`)
  }
})
