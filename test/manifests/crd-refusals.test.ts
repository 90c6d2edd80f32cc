// The CRDs refuse what the contract forbids: each broken variant of an example fails its OpenAPI
// schema or a CEL rule, with the message the contract names.
import t from 'tap'
import { parseJobFlowSpec } from '../../src/controllers/jobflow/spec.js'
import type { KubeObject } from '../../src/k8s/types.js'
import {
  type Json, clone, crds, storageVersion,
  openApiErrors, celErrors, examples, fiveJobs
} from '../helpers/manifests.js'

t.test('the CRDs refuse what the contract forbids', async t => {
  const jobflowCrd = crds.find(c => c.spec.names.kind === 'JobFlow')
  const root = storageVersion(jobflowCrd).schema.openAPIV3Schema
  const openApi = (o: Json): string[] => openApiErrors(jobflowCrd, o)
  const cel = (o: Json): string[] => celErrors(root, o)
  const hookProblems = (o: Json): string[] => {
    const p = parseJobFlowSpec(o as KubeObject)
    return p.ok ? [] : p.problems
  }

  const schemaCases: Array<[string, (o: Json) => void]> = [
    [
      'an uppercase flow name',
      o => {
        o.spec.flows[0].name = 'Job1'
      }
    ],
    [
      'a flow name longer than 63',
      o => {
        o.spec.flows[0].name = 'j'.repeat(64)
      }
    ],
    [
      'no flows',
      o => {
        delete o.spec.flows
      }
    ],
    [
      'an empty flow list',
      o => {
        o.spec.flows = []
      }
    ],
    [
      'no spec',
      o => {
        delete o.spec
      }
    ],
    [
      'a flow without a name',
      o => {
        delete o.spec.flows[0].name
      }
    ],
    [
      'a misspelt field',
      o => {
        o.spec.flows[1].dependecies = o.spec.flows[1].dependencies
      }
    ],
    [
      'a script name with a slash',
      o => {
        o.spec.flows[0].script = { name: '../etc/passwd' }
      }
    ],
    [
      'a script without a name',
      o => {
        o.spec.flows[0].script = { args: ['x'] }
      }
    ],
    [
      'an empty jobTemplateRef',
      o => {
        delete o.spec.flows[0].jobTemplate
        o.spec.flows[0].jobTemplateRef = ''
      }
    ],
    [
      'a jobTemplate without a pod template',
      o => {
        o.spec.flows[0].jobTemplate = { backoffLimit: 1 }
      }
    ],
    [
      'a label value that is not a string',
      o => {
        o.spec.globalParams.labels.key1 = 7
      }
    ],
    [
      'an unknown phase',
      o => {
        o.status = { phase: 'Done' }
      }
    ],
    [
      'an unknown job phase',
      o => {
        o.status = { jobs: [{ name: 'job1', jobName: 'x', phase: 'Complete' }] }
      }
    ],
    [
      'two flows with one name (a list-map keyed by name)',
      o => {
        o.spec.flows[3].name = 'job1'
      }
    ],
    [
      'more flows than maxItems',
      o => {
        o.spec.flows = Array.from({ length: 2001 }, (_, i) => ({ name: `f${i}`, jobTemplate: { template: {} } }))
      }
    ]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = fiveJobs()
    mutate(o)
    t.not(openApi(o).length, 0, `the schema refuses ${what}`)
  }

  const celCases: Array<[string, (o: Json) => void, RegExp]> = [
    [
      'both jobTemplate and jobTemplateRef',
      o => {
        o.spec.flows[2].jobTemplateRef = 'some-template'
      },
      /exactly one of jobTemplate and jobTemplateRef/
    ],
    [
      'neither jobTemplate nor jobTemplateRef',
      o => {
        delete o.spec.flows[2].jobTemplate
      },
      /exactly one of jobTemplate and jobTemplateRef/
    ],
    [
      'a flow that depends on itself',
      o => {
        o.spec.flows[1].dependencies = ['job1', 'job2']
      },
      /cannot depend on itself/
    ],
    [
      'an inline script with a slash',
      o => {
        o.spec.scripts = { 'ok.sh': 'true', 'bin/x.sh': 'true' }
      },
      /plain file names/
    ],
    [
      'an inline script with a leading dot',
      o => {
        o.spec.scripts = { '.hidden': 'true' }
      },
      /plain file names/
    ]
  ]
  for (const [what, mutate, message] of celCases) {
    const o = fiveJobs()
    mutate(o)
    t.same(openApi(o), [], `${what}: the OpenAPI schema alone lets it through`)
    const errors = cel(o)
    t.equal(errors.length, 1, `a CEL rule refuses ${what}: ${errors.join('; ')}`)
    t.match(errors[0] ?? '', message)
    t.not(hookProblems(o).length, 0, `the hook also finds ${what} invalid`)
  }

  const full = fiveJobs()
  full.spec.flows = Array.from({ length: 1000 }, (_, i) => ({
    name: `f${i}`,
    dependencies: i > 0 ? [`f${i - 1}`] : [],
    jobTemplate: { template: {} }
  }))
  t.same(openApi(full), [], '1000 flows fit the schema')
  t.same(cel(full), [], '1000 distinct flows pass the CEL rules')

  const jobTemplateCrd = crds.find(c => c.spec.names.kind === 'JobTemplate')
  const template = clone(examples.find(d => d.object.kind === 'JobTemplate')?.object)
  t.same(openApiErrors(jobTemplateCrd, template), [])
  delete template.spec.jobTemplate
  t.not(openApiErrors(jobTemplateCrd, template).length, 0, 'a JobTemplate needs spec.jobTemplate')
})
