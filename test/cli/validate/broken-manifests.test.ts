// Manifests the API server refuses (test/fixtures/validation/broken-manifests.yaml), each refused
// offline with exactly the API server's words; and every manifest the project ships (the examples,
// the Argo conformance cases) taken as they are.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import type { KubeObject } from '../../../src/k8s/types.js'
import { checkObjects, isRefused, readManifest, refusal } from '../../../src/cli/validate/check.js'
import { ROOT } from '../../helpers/manifests.js'

interface BrokenCase {
  name: string
  why: string
  manifest: KubeObject
  unknownFields?: string[]
  errors?: string[]
}

const FIXTURE = join(ROOT, 'test', 'fixtures', 'validation', 'broken-manifests.yaml')
const CASES = parse(readFileSync(FIXTURE, 'utf8')) as BrokenCase[]

t.test('every broken manifest is refused with the API server\'s words', async t => {
  const kinds = new Set(CASES.map(c => c.manifest.kind))
  const all = ['CollaSet', 'DaemonJob', 'EphemeralJob', 'JobFlow', 'OperationJob']
  t.same([...kinds].sort(), all, 'each kind has a case')
  const checks = checkObjects(CASES.map(c => ({ object: c.manifest, source: `${c.name}.yaml` })))
  for (const [i, check] of checks.entries()) {
    const expected = CASES[i] as BrokenCase
    t.same(
      { unknownFields: check.unknownFields, errors: check.unknownFields.length > 0 ? [] : check.errors },
      { unknownFields: expected.unknownFields ?? [], errors: expected.errors ?? [] },
      `${expected.name}: ${expected.why}`
    )
    t.ok(isRefused(check), `${expected.name} is refused`)
    t.same(check.warnings, [], `${expected.name}: every rule could be checked`)
  }
})

t.test('refusals as kubectl apply --validate=strict prints them', async t => {
  const byName = (name: string): KubeObject => (CASES.find(c => c.name === name) as BrokenCase).manifest
  const [unknown, invalid, one] = checkObjects([
    { object: byName('jobflow-misspelled-field'), source: 'flow.yaml' },
    { object: byName('jobflow-rules'), source: 'flow.yaml' },
    { object: byName('operationjob-rules'), source: 'opj.yaml' }
  ])
  t.same(refusal(unknown as never), [
    'Error from server (BadRequest): error when creating "flow.yaml": JobFlow in version "v1alpha1" cannot be ' +
      'handled as a JobFlow: strict decoding error: unknown field "spec.flows[1].dependecies"'
  ])
  t.same(refusal(invalid as never), [
    'The JobFlow "rules" is invalid: ',
    '* spec.flows[0]: Invalid value: set exactly one of jobTemplate and jobTemplateRef',
    '* spec.flows[1]: Invalid value: a flow cannot depend on itself',
    '* spec.flows[1].retry: Invalid value: maxBackoffSeconds must not be less than backoffSeconds'
  ])
  t.same(refusal(one as never), [
    'The OperationJob "opj" is invalid: ',
    '* spec.action: Unsupported value: "Restart": supported values: "Exec", "Label", "Recreate", "Replace"',
    '* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; ' +
      'correct the existing errors to complete validation'
  ], 'no rule runs after a blocking error, as the API server says')
  const v9 = { ...byName('jobflow-rules'), apiVersion: 'jobhooks.io/v9' }
  const [unmapped] = checkObjects([{ object: v9, source: 'x.yaml' }])
  t.same(refusal(unmapped as never), [
    'error: resource mapping not found for name: "rules" namespace: "" from "x.yaml": no matches for kind ' +
      '"JobFlow" in version "jobhooks.io/v9"'
  ])
})

t.test('every example manifest and Argo conformance case validates cleanly', async t => {
  const files = [
    ...readdirSync(join(ROOT, 'manifests', 'examples')).map(f => join(ROOT, 'manifests', 'examples', f)),
    ...readdirSync(join(ROOT, 'test', 'conformance', 'argo')).map(f => join(ROOT, 'test', 'conformance', 'argo', f))
  ].filter(f => f.endsWith('.yaml'))
  const checks = checkObjects(files.flatMap(file => readManifest(file).map(object => ({ object, source: file }))))
  const ours = checks.filter(c => c.outcome === 'checked')
  t.ok(ours.length >= files.length, `${ours.length} objects of our kinds checked`)
  t.same(checks.filter(isRefused).flatMap(refusal), [], 'no refusal')
  t.same([...new Set(checks.flatMap(c => c.warnings))], [], 'every rule and pattern could be checked')
})
