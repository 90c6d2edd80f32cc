// The examples of manifests/examples/: they pass their CRD schemas and CEL rules, keep the shape
// of their reference, pin no node, and resolve for the hook (names, dependencies, templates, scripts).
import t from 'tap'
import { parseJobFlowSpec } from '../../src/controllers/jobflow/spec.js'
import { defaultHooksDir, loadScriptLibrary } from '../../src/scripts/library.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { type Json, crdErrors, examples, exampleJobFlows, fiveJobs } from '../helpers/manifests.js'

t.test('every example of our group passes its CRD schema and CEL rules', async t => {
  const ours = examples.filter(d => String(d.object.apiVersion).startsWith('jobhooks.io/'))
  t.ok(ours.filter(d => d.object.kind === 'JobFlow').length >= 3, 'three example JobFlows')
  t.ok(
    ours.some(d => d.object.kind === 'JobTemplate'),
    'an example JobTemplate'
  )
  for (const { file, object } of ours) {
    t.same(crdErrors(object), [], `${file}: ${object.kind} ${object.metadata.name}`)
    t.equal(object.metadata.namespace, undefined, `${file}: ${object.metadata.name} leaves the namespace to kubectl`)
  }
})

t.test('the five-job example keeps the shape of its reference', async t => {
  const flow = fiveJobs()
  t.equal(flow?.apiVersion, 'jobhooks.io/v1alpha1')
  const deps = Object.fromEntries(flow.spec.flows.map((f: Json) => [f.name, [...(f.dependencies ?? [])].sort()]))
  t.same(deps, { job1: [], job2: ['job1'], job3: ['job1', 'job2'], job4: [], job5: ['job2', 'job4'] })
  t.same(flow.spec.globalParams.env, [
    { name: 'FOO', value: 'bar' },
    { name: 'QUE', value: 'pasa' }
  ])
  t.same(flow.spec.globalParams.labels, { key1: 'value1', key2: 'value2' })
  t.same(flow.spec.globalParams.annotations, { key1: 'value1', key2: 'value2' })
  t.equal(flow.spec.globalParams.nodeName, undefined, 'no nodeName: the example runs on any cluster as it is')
})

t.test('no example pins a node: each runs on any cluster as it is', async t => {
  for (const { file, object } of examples) {
    t.notMatch(
      JSON.stringify(object),
      /"nodeName"/,
      `${file}: ${String(object.kind)} ${String(object.metadata?.name)} names no node`
    )
  }
})

t.test('the examples are valid for the hook too: names, dependencies, templates and scripts resolve', async t => {
  const shipped = loadScriptLibrary(defaultHooksDir())
  for (const { file, object } of exampleJobFlows) {
    const parsed = parseJobFlowSpec(object as KubeObject)
    t.same(parsed.ok ? [] : parsed.problems, [], `${file}: the hook parses ${object.metadata.name}`)
    for (const flow of object.spec.flows) {
      if (flow.jobTemplateRef !== undefined) {
        t.ok(
          examples.some(
            d => d.file === file && d.object.kind === 'JobTemplate' && d.object.metadata.name === flow.jobTemplateRef
          ),
          `${file}: JobTemplate ${flow.jobTemplateRef} is in the same file`
        )
      }
      if (flow.script !== undefined) {
        t.ok(
          shipped.has(flow.script.name) || object.spec.scripts?.[flow.script.name] !== undefined,
          `${file}: script ${flow.script.name} is shipped or inline`
        )
      }
    }
  }
  const scripts = exampleJobFlows.find(d => d.file === 'examples/jobflow-scripts.yaml')?.object
  t.ok(
    scripts?.spec.flows.some((f: Json) => shipped.has(f.script?.name)),
    'the scripts example runs a shipped script'
  )
  t.ok(
    scripts?.spec.flows.some((f: Json) => scripts.spec.scripts?.[f.script?.name] !== undefined),
    'the scripts example runs an inline script'
  )
  const refs = exampleJobFlows.find(d => d.file === 'examples/jobflow-template-ref.yaml')?.object
  t.ok(
    refs?.spec.flows.every((f: Json) => typeof f.jobTemplateRef === 'string'),
    'the template-ref example uses jobTemplateRef'
  )
  t.ok(
    refs?.spec.shareVolumes?.length > 0 && refs?.spec.shareVolumeMounts?.length > 0,
    'the template-ref example shares volumes'
  )
})
