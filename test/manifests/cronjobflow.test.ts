// The CronJobFlow CRD: a run written out is a JobFlow's spec (the CRD writes JobFlow's spec schema
// out again, and must not drift from jobflow.yaml's), a run made of a JobFlowTemplate gives its
// arguments as a flowTemplateRef does, and the API server refuses what the hook could not act on.
import t from 'tap'
import { type Json, clone, crds, storageVersion, openApiErrors, celErrors, fiveJobs } from '../helpers/manifests.js'

const crdOf = (kind: string): Json => crds.find(c => c.spec.names.kind === kind)
const rootOf = (kind: string): Json => storageVersion(crdOf(kind)).schema.openAPIV3Schema

function cronJobFlow (): Json {
  return {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'CronJobFlow',
    metadata: { name: 'nightly' },
    spec: {
      schedule: '30 2 * * *',
      timeZone: 'Europe/Berlin',
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 600,
      jobFlowTemplate: { metadata: { labels: { team: 'data' } }, spec: clone(fiveJobs().spec) }
    }
  }
}

t.test('spec.jobFlowTemplate.spec is JobFlow\'s spec, and the ref\'s arguments a flowTemplateRef\'s', async t => {
  const cron = rootOf('CronJobFlow').properties.spec.properties
  const flow = rootOf('JobFlow').properties.spec
  t.same(cron.jobFlowTemplate.properties.spec, flow, 'the JobFlow spec, as jobflow.yaml has it')
  const refArguments = flow.properties.flows.items.properties.flowTemplateRef.properties.arguments
  t.same(cron.jobFlowTemplateRef.properties.arguments, refArguments)
})

t.test('the CronJobFlow CRD takes a CronJobFlow and refuses a broken one', async t => {
  const crd = crdOf('CronJobFlow')
  const root = rootOf('CronJobFlow')
  t.same(openApiErrors(crd, cronJobFlow()), [], 'the schema takes it')
  t.same(celErrors(root, cronJobFlow()), [], 'the CEL rules take it')
  const ref = cronJobFlow()
  delete ref.spec.jobFlowTemplate
  ref.spec.jobFlowTemplateRef = { name: 'etl', arguments: [{ name: 'table', value: 'orders' }] }
  t.same(openApiErrors(crd, ref), [], 'a template reference')
  t.same(celErrors(root, ref), [])
  const schemaCases: Array<[string, (o: Json) => void]> = [
    ['no schedule', o => { delete o.spec.schedule }],
    ['an empty schedule', o => { o.spec.schedule = '' }],
    ['an unknown policy', o => { o.spec.concurrencyPolicy = 'Queue' }],
    ['a negative deadline', o => { o.spec.startingDeadlineSeconds = -1 }],
    ['a history of 101', o => { o.spec.successfulJobFlowsHistoryLimit = 101 }],
    ['a negative history', o => { o.spec.failedJobFlowsHistoryLimit = -1 }],
    ['a run without flows', o => { delete o.spec.jobFlowTemplate.spec.flows }],
    ['a run\'s misspelt field', o => { o.spec.jobFlowTemplate.spec.flows[1].dependecies = ['job1'] }],
    ['a label that is not a string', o => { o.spec.jobFlowTemplate.metadata.labels.team = 3 }],
    ['a misspelt field', o => { o.spec.schedules = ['@daily'] }]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = cronJobFlow()
    mutate(o)
    t.not(openApiErrors(crd, o).length, 0, `the schema refuses ${what}`)
  }
  const both = cronJobFlow()
  both.spec.jobFlowTemplateRef = { name: 'etl' }
  t.match(celErrors(root, both), [/exactly one of jobFlowTemplate and jobFlowTemplateRef/], 'not both')
  const neither = cronJobFlow()
  delete neither.spec.jobFlowTemplate
  t.match(celErrors(root, neither), [/exactly one of jobFlowTemplate and jobFlowTemplateRef/], 'not neither')
  const step = cronJobFlow()
  step.spec.jobFlowTemplate.spec.flows[0].jobTemplateRef = 'twice'
  t.match(celErrors(root, step), [/exactly one of jobTemplate and jobTemplateRef/], 'its steps keep the step rules')
})
