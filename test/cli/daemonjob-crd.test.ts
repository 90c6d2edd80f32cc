// The DaemonJob CRD holds the real batch/v1 JobSpec: `npm run crds` writes it from Kubernetes'
// OpenAPI as @kubernetes/client-node ships it, this test fails while the checked-in files are
// stale, and the API server (ajv here, as test/helpers/manifests.ts reads a CRD) refuses what a
// Job does not have, as the hook does.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import {
  DAEMONJOB_CRD, JOB_SPEC_FIELDS, daemonJobSpecFields, renderDaemonJobCrd, renderJobSpecFields, schemaSource
} from '../../src/cli/daemonjob-crd.js'
import { QUANTITY_FIELDS, shorten } from '../../src/cli/job-spec-schema.js'
import { parseDaemonJobSpec } from '../../src/controllers/daemonjob/spec.js'
import { celErrors, openApiErrors, schemaNodes, storageVersion } from '../helpers/manifests.js'
import { fixture } from '../helpers/fixtures.js'

const text = readFileSync(DAEMONJOB_CRD, 'utf8')
const crd = parse(text)
const spec = storageVersion(crd).schema.openAPIV3Schema.properties.spec
const source = schemaSource()
const { fields, table } = daemonJobSpecFields()

/** A DaemonJob as the API server receives it, with `mutate` applied to a copy of the example spec. */
function daemonJob (mutate: (spec: any) => void): any {
  const parent = fixture('daemonjob/sync-new.v2.json').parent
  mutate(parent.spec)
  return { apiVersion: parent.apiVersion, kind: parent.kind, metadata: {}, spec: parent.spec }
}

t.test('the CRD and src/k8s/job-spec-fields.ts are up to date (run `npm run crds` when this fails)', async t => {
  t.equal(renderDaemonJobCrd(text, fields, source), text)
  t.equal(renderJobSpecFields(table, source), readFileSync(JOB_SPEC_FIELDS, 'utf8'))
  t.match(source, /^the Kubernetes v1\.\d+\.\d+ OpenAPI as @kubernetes\/client-node \d+\.\d+\.\d+ ships it$/)
  t.match(text, `written by npm run crds from ${source}`, 'the CRD says where the JobSpec comes from')
})

t.test('the spec holds the JobSpec and the DaemonJob\'s own fields, and keeps nothing unknown', async t => {
  t.notOk('x-kubernetes-preserve-unknown-fields' in spec)
  const declared = (names: string[]): boolean => names.every(f => f in spec.properties)
  t.ok(declared(['activeDeadlineSeconds', 'backoffLimit', 'podFailurePolicy', 'successPolicy', 'template']))
  t.ok(declared(['nodeParallelism', 'failurePolicy', 'paused', 'completionPolicy']))
  const loose = [...schemaNodes(spec, 'spec')]
    .filter(({ node }) => node['x-kubernetes-preserve-unknown-fields'] === true)
    .map(({ path }) => path)
  t.same(loose.sort(), [
    'spec.template.metadata.managedFields[].fieldsV1',
    'spec.template.spec.volumes[].ephemeral.volumeClaimTemplate.metadata.managedFields[].fieldsV1'
  ], 'free-form only where Kubernetes is')
  const container = spec.properties.template.properties.spec.properties.containers
  t.same([container.minItems, container.maxItems], [1, 100], 'bounded, for the CEL rule on script.container')
  t.same(spec.properties.template.properties.spec.properties.restartPolicy.enum, ['Never', 'OnFailure'])
})

t.test('every quantity field named is a field of the models the JobSpec reaches', async t => {
  for (const name of QUANTITY_FIELDS) {
    const [model, field] = name.split('.') as [string, string]
    t.ok(table.models.get(model)?.fields.some(f => f.name === field), name)
  }
})

t.test('the CRD fits in what `kubectl apply` annotates (262144 bytes) with room for labels', async t => {
  const size = Buffer.byteLength(JSON.stringify(crd))
  t.ok(size < 220_000, `${size} bytes as last-applied-configuration`)
})

t.test('descriptions are cut at a sentence, or at a word with an ellipsis', async t => {
  t.equal(shorten('Short.'), 'Short.')
  t.equal(shorten(`${'a'.repeat(50)}. ${'b'.repeat(100)}.`), `${'a'.repeat(50)}.`)
  const long = shorten(`${'word '.repeat(60)}end.`) as string
  t.ok(long.length <= 120 && long.endsWith('word…'), long)
})

t.test('the API server and the hook refuse the same unknown fields, and accept what Kubernetes accepts', async t => {
  const container = (s: any): any => s.template.spec.containers[0]
  const policies = { nodeParallelism: '25%', failurePolicy: 'Pause', paused: true, completionPolicy: 'Never' }
  const exitCode3 = { action: 'FailJob', onExitCodes: { operator: 'In', values: [3] } }
  const cases: Array<[string, (spec: any) => void, boolean]> = [
    ['the example', () => {}, true],
    ['a quantity as a number', s => { container(s).resources = { limits: { cpu: 1, memory: '64Mi' } } }, true],
    ['an int-or-string port', s => { container(s).readinessProbe = { httpGet: { port: 'http' } } }, true],
    ['the policies', s => { Object.assign(s, policies) }, true],
    ['a Job field', s => { s.podFailurePolicy = { rules: [exitCode3] } }, true],
    ['an unknown top-level field', s => { s.restartLimit = 3 }, false],
    ['a misspelt container field', s => { container(s).imagePullPolicyy = 'Always' }, false],
    ['an unknown field in a list', s => { s.template.spec.volumes = [{ name: 'v', emptyDir: { size: 1 } }] }, false],
    ['an unknown field of a global EnvVar', s => { s.globalParams.env = [{ name: 'A', vaule: 'b' }] }, false],
    ["BroadcastJob's failurePolicy object", s => { s.failurePolicy = { type: 'FailFast' } }, false],
    ["BroadcastJob's completionPolicy object", s => { s.completionPolicy = { type: 'Never' } }, false],
    ['a nodeParallelism of 0', s => { s.nodeParallelism = 0 }, false],
    ['a nodeParallelism of 150%', s => { s.nodeParallelism = '150%' }, false],
    ['a nodeParallelism of 3', s => { s.nodeParallelism = 3 }, true],
    ['a nodeParallelism of 100%', s => { s.nodeParallelism = '100%' }, true]
  ]
  for (const [what, mutate, ok] of cases) {
    const object = daemonJob(mutate)
    const errors = [...openApiErrors(crd, object), ...celErrors(storageVersion(crd).schema.openAPIV3Schema, object)]
    t.same(errors.length === 0, ok, `API server: ${what} ${ok ? 'accepted' : 'refused'} (${errors.join('; ')})`)
    const parsed = parseDaemonJobSpec(object)
    const problems = parsed.ok ? '' : parsed.problems.join('; ')
    t.equal(parsed.ok, ok, `hook: ${what} ${ok ? 'accepted' : 'refused'} (${problems})`)
  }
  // Types and formats are the API server's: the hook reads field names only.
  const notWhole = daemonJob(s => {
    s.podFailurePolicy = { rules: [{ ...exitCode3, onExitCodes: { operator: 'In', values: [1.5] } }] }
  })
  t.not(openApiErrors(crd, notWhole).length, 0, 'API server: an int32 list refuses 1.5')
})
