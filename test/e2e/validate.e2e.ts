// `kubectl jobhooks validate` held to the real API server: every broken manifest of
// test/fixtures/validation/broken-manifests.yaml (where the offline check's exact words are held,
// test/cli/validate/broken-manifests.test.ts) is applied with kubectl's strict validation, and the
// API server must refuse it naming the same fields, and nothing of it stored.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import { startScenarios } from './scenario.js'

interface BrokenCase {
  name: string
  manifest: { kind: string, metadata: { name: string } }
  unknownFields?: string[]
  errors?: string[]
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'validation', 'broken-manifests.yaml')
const cases = parse(readFileSync(FIXTURES, 'utf8')) as BrokenCase[]
const { cluster, namespace } = await startScenarios(t)

/** The field paths a refusal names: its strict-decoding unknown fields, or its field errors. */
function fieldsNamed (text: string): string[] {
  const unknown = [...text.matchAll(/unknown field "([^"]+)"/g)].map(m => m[1] as string)
  if (unknown.length > 0) return unknown.sort()
  const lines = text.split('\n').flatMap(line => line.split(/ is invalid: |^\* /).slice(-1))
  return lines.map(line => /^([^\s:]+): /.exec(line.trim())?.[1]).filter((f): f is string => f !== undefined).sort()
}

t.test('the API server refuses each broken manifest naming the fields validate names', async t => {
  const ns = await namespace('validate')
  for (const broken of cases) {
    const apply = ['apply', '--validate=strict', '-n', ns, '-f', '-']
    const result = await cluster.kubectl(apply, stringify(broken.manifest))
    t.not(result.code, 0, `${broken.name}: refused`)
    const ours = broken.unknownFields ?? (broken.errors ?? []).map(e => /^([^\s:]+): /.exec(e)?.[1] as string)
    t.same(fieldsNamed(result.stderr), [...ours].sort(), `${broken.name}: the same fields`, { stderr: result.stderr })
    for (const error of broken.errors ?? []) {
      if (!result.stderr.includes(error)) t.comment(`${broken.name}: worded otherwise by the API server: ${error}`)
    }
    const stored = await cluster.kubectl(['get', broken.manifest.kind, broken.manifest.metadata.name, '-n', ns])
    t.not(stored.code, 0, `${broken.name}: nothing stored`)
  }
})
