// The DaemonJob manifests against the hook: the example is valid and runs, the status the hook
// writes is declared by the CRD (undeclared fields would be pruned), and the CRD's CEL rule on
// script.container agrees with the hook. (test/manifests/crds.test.ts checks every CRD's structure,
// and the e2e tier has the real API server refuse invalid DaemonJobs.)
import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse, parseAllDocuments } from 'yaml'
import { parse as parseCel } from '@marcbachmann/cel-js'
import type { KubeObject } from '../../../src/k8s/types.js'
import { parseDaemonJobSpec } from '../../../src/controllers/daemonjob/spec.js'
import { syncDaemonJob } from '../../../src/controllers/daemonjob/sync.js'
import { responseOf } from '../../helpers/hooks.js'
import { context, fixture } from '../../helpers/fixtures.js'
import { specOf, valueAt } from '../../helpers/objects.js'
import { jobLikeSpecOf } from '../../helpers/records.js'

const respond = responseOf(syncDaemonJob)

const read = (path: string): string => readFileSync(
  fileURLToPath(new URL(`../../../manifests/${path}`, import.meta.url)),
  'utf8'
)
const crd = parse(read('crds/daemonjob.yaml'))
const schema = crd.spec.versions[0].schema.openAPIV3Schema
const example = parseAllDocuments(
  read('examples/daemonjob.yaml')
).map(d => d.toJS()).find(d => d?.kind === 'DaemonJob') as KubeObject
const controller = parse(read('controllers/daemonjob.yaml'))

/** Paths in `value` that the schema does not declare (where it does not preserve unknown fields). */
function undeclared (node: any, value: unknown, path: string): string[] {
  if (node === undefined) return [path]
  if (node['x-kubernetes-preserve-unknown-fields'] === true) return []
  if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(node.items, v, `${path}[${i}]`))
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => undeclared(
      node.properties?.[k] ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined),
      v,
      `${path}.${k}`
    ))
  }
  return []
}

t.test('the example is the reference\'s, in our group, and valid for the hook', async t => {
  t.equal(example.apiVersion, 'jobhooks.io/v1alpha1')
  t.equal(example.metadata.name, 'daemonjob-example')
  const spec = jobLikeSpecOf(example)
  t.equal(typeof spec.excludeNodeList, 'string')
  t.same(valueAt(spec, 'globalParams', 'env'), [{ name: 'FOO', value: 'bar' }, { name: 'QUE', value: 'pasa' }])
  t.equal(spec.template.spec?.restartPolicy, 'OnFailure')
  const parsed = parseDaemonJobSpec(example)
  t.same(parsed.ok ? [] : parsed.problems, [])
  t.same(undeclared(schema, { ...example, metadata: {} }, ''), [], 'the example fits the schema')
})

t.test('the hook\'s status is declared by the CRD, in every phase', async t => {
  for (const name of ['sync-new.v2', 'sync-running.v2', 'sync-finished.v2', 'sync-no-nodes.v1']) {
    const request = fixture(`daemonjob/${name}.json`)
    const status: Record<string, unknown> = { ...respond(request, context()).status, observedGeneration: 1 }
    t.same(undeclared(schema.properties.status, status, 'status'), [], name)
    t.ok(
      schema.properties.status.properties.phase.enum.includes(status.phase),
      `${name}: phase ${String(status.phase)} is in the enum`
    )
  }
  const invalid = fixture('daemonjob/sync-running.v2.json')
  specOf(invalid.parent).excludeNodeList = ['x']
  t.same(undeclared(schema.properties.status, respond(invalid, context()).status, 'status'), [], 'Invalid')
  const columns = crd.spec.versions[0].additionalPrinterColumns.map(
    (c: any) => `${String(c.name)}=${String(c.jsonPath)}`
  )
  t.same(
    columns,
    [
      'STATUS=.status.phase',
      'DESIRED=.status.desired',
      'ACTIVE=.status.active',
      'QUEUED=.status.queued',
      'SUCCEEDED=.status.succeeded',
      'FAILED=.status.failed',
      'AGE=.metadata.creationTimestamp'
    ]
  )
})

t.test('the CEL rule on script.container agrees with the hook', async t => {
  const rule = schema.properties.spec['x-kubernetes-validations'][0].rule as string
  const check = parseCel(rule) as unknown as (context: Record<string, unknown>) => unknown
  const spec = (mutate: (s: Record<string, unknown>) => void): Record<string, unknown> => {
    const s = structuredClone(specOf(example)); mutate(s); return s
  }
  const cases: Array<[string, any, boolean]> = [
    ['no script', spec(() => {}), true],
    ['a script without container', spec(s => { s.script = { name: 'retry.sh' } }), true],
    ['a script in the container', spec(s => { s.script = { name: 'retry.sh', container: 'nginx' } }), true],
    [
      'a script in a container that does not exist',
      spec(s => { s.script = { name: 'retry.sh', container: 'sidecar' } }),
      false
    ]
  ]
  for (const [what, value, ok] of cases) {
    t.equal(check({ self: value }), ok, `CEL: ${what}`)
    const parsed = parseDaemonJobSpec({ ...example, spec: value })
    const request = fixture('daemonjob/sync-new.v2.json')
    request.parent.spec = value
    t.equal(parsed.ok && respond(request, context()).status.phase !== 'Invalid', ok, `hook: ${what}`)
  }
})

t.test('the CompositeController: Jobs and ConfigMaps OnDelete, v2 hooks, the jobhooks Service', async t => {
  t.equal(controller.metadata.name, 'daemonjob-controller')
  t.same(controller.spec.parentResource, { apiVersion: 'jobhooks.io/v1alpha1', resource: 'daemonjobs' })
  t.equal(controller.spec.generateSelector, true)
  t.same(
    controller.spec.childResources.map((c: any) => `${String(c.resource)}:${String(c.updateStrategy.method)}`),
    ['jobs:OnDelete', 'configmaps:OnDelete']
  )
  t.same(Object.keys(controller.spec.hooks).sort(), ['customize', 'sync'])
  for (const [hook, config] of Object.entries<any>(controller.spec.hooks)) {
    t.equal(config.version, 'v2', `${hook}: v2, or Nodes never arrive`)
    t.same(config.webhook.service, { name: 'jobhooks', namespace: 'jobhooks-system', port: 80 })
    t.equal(config.webhook.path, `/hooks/daemonjob/${hook}`)
  }
})
