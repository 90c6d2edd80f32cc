// Argo Workflows' own examples, kept: test/conformance/argo/ holds translations of them into
// JobFlows, one YAML a person can `kubectl apply` per example, each beside a JSON file of the same
// name that says which Argo files it comes from, how the test plays it (which Jobs fail, what
// outputs they write, what arguments it is submitted with) and what Argo does with it: which
// steps get a pod (here a Job), what each step ends as, and what the workflow ends as. Each is
// played to the end on the in-process Metacontroller and held to Argo's outcome
// (argo-examples.ts, holdToArgo), whatever the engine does today: an example whose semantics
// JobFlow lacks fails here until it has them. Six of them run on a real control plane too:
// test/e2e/argo.e2e.ts.
import t from 'tap'
import { parseAllDocuments } from 'yaml'
import { isRecord, type KubeObject } from '../../src/k8s/types.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { crdErrors } from '../helpers/manifests.js'
import { argoExamples, holdToArgo, submitted, type Example, type Played, type Run } from './argo-examples.js'

/** Argo's examples that issue 37 names; each must be here. */
const REQUIRED = [
  'dag-diamond', 'dag-multiroot', 'dag-continue-on-fail', 'dag-enhanced-depends', 'dag-disable-failfast',
  'conditionals', 'conditionals-complex', 'loops-param-result', 'loops-maps', 'parameter-aggregation-dag',
  'retry-with-steps'
]

function prefixed<T> (prefix: string, map: Record<string, T> | undefined): Record<string, T> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([key, value]) => [`${prefix}${key}`, value]))
}

async function play (t: { teardown: (fn: () => unknown) => void }, example: Example, run: Run): Promise<Played> {
  const name = example.flow.metadata.name
  const prefix = `${name}-`
  const sim = new Simulator({
    controllers: [jobflowController('v2')],
    jobs: { outcomes: prefixed(prefix, run.outcomes), outputs: prefixed(prefix, run.outputs) }
  })
  t.teardown(async () => await sim.close())
  // The templates first, as `kubectl apply -f` the file: the JobFlow's first sync finds them.
  for (const template of example.templates) sim.apply(template)
  sim.apply(submitted(example, run))
  await sim.runUntilQuiet()
  const ref: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name }
  const status = sim.get(ref)?.status
  const unprefixed = (job: string): string => job.startsWith(prefix) ? job.slice(prefix.length) : job
  const jobEvents = sim.timeline.filter(e => e.object.kind === 'Job')
  const finished = new Map<string, number>()
  for (const e of jobEvents) {
    if (e.type === 'job-succeeded' || e.type === 'job-failed') finished.set(unprefixed(e.object.name), e.seconds)
  }
  const jobs = new Map(sim.listJobs().map(job => [unprefixed(job.metadata.name), job]))
  return {
    status: isRecord(status) ? status : {},
    created: jobEvents
      .filter(e => e.type === 'created')
      .map(e => ({ job: unprefixed(e.object.name), seconds: e.seconds })),
    finished,
    stepOf: new Map([...jobs].map(([job, object]) => [job, object.metadata.labels?.['jobhooks.io/flow'] ?? job])),
    jobs
  }
}

const all = argoExamples()

t.test('the translations: at least twelve, those issue 37 names among them, each citing its Argo files', async t => {
  t.ok(all.length >= 12, `${all.length} examples`)
  const names = all.map(e => e.name)
  for (const name of REQUIRED) t.ok(names.includes(name), `${name} is translated`)
  for (const example of all) {
    const header = example.yaml.slice(0, example.yaml.search(/^apiVersion:/m))
    t.match(header, /^# Argo Workflows' examples\//, `${example.name}: its header opens with the example it comes from`)
    for (const file of example.argo) t.ok(header.includes(file), `${example.name}: its header cites ${file}`)
    t.match(header, new RegExp(`kubectl apply -f test/conformance/argo/${example.name}\\.yaml`),
      `${example.name}: its header says how to apply it`)
    t.equal(example.flow.kind, 'JobFlow', `${example.name} is a JobFlow`)
    const kinds = parseAllDocuments(example.yaml).map(d => (d.toJS() as KubeObject | null)?.kind)
    t.equal(kinds.at(-1), 'JobFlow', `${example.name}: its JobFlow last, after the templates it runs (kubectl apply)`)
    t.equal(example.flow.metadata.name, example.name, `${example.name}: named as its file`)
    t.ok(example.runs.length > 0, `${example.name}: played at least once`)
  }
})

t.test('each translation passes its CRDs\' schema and CEL rules, as `kubectl apply` checks them', async t => {
  for (const example of all) {
    for (const object of [...example.templates, example.flow]) {
      t.same(crdErrors(object), [], `${example.name}: ${object.kind} ${object.metadata.name}`)
    }
  }
})

for (const example of all) {
  for (const run of example.runs) {
    t.test(`${example.name}: ${run.name}`, async t => {
      holdToArgo(t, example, run, await play(t, example, run))
    })
  }
}
