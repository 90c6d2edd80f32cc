// What `kubectl explain` and `kubectl get` show of our kinds: every field of every CRD explains
// itself (a node without a description prints `<no description>`), every kind lists under
// `kubectl get jobhooks`, and each kind prints the columns its users know from the reference.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { printerColumns } from '../src/cli/printer-columns.js'

type Json = any

const CRDS = join(import.meta.dirname, '..', 'manifests', 'crds')

const crds: Array<{ file: string; crd: Json }> = readdirSync(CRDS)
  .filter(f => f.endsWith('.yaml'))
  .sort()
  .flatMap(file =>
    parseAllDocuments(readFileSync(join(CRDS, file), 'utf8'))
      .map(d => d.toJS())
      .filter(d => d?.kind === 'CustomResourceDefinition')
      .map(crd => ({ file, crd }))
  )

/**
 * The paths of the schema nodes under `node` that have no description: every declared property,
 * and the items of an array when they are objects (kubectl explain describes those as the list's
 * fields). A free-form node (x-kubernetes-preserve-unknown-fields) needs its own description; what
 * it keeps without declaring has no schema to describe. The values of a map (additionalProperties)
 * are described by the map. The object's own `metadata` is the exception: the API server refuses
 * a CRD that says anything of it but its type (kubectl explain describes it as ObjectMeta anyway).
 */
function undescribed (node: Json, path: string, root = true): string[] {
  const missing: string[] = []
  if (typeof node.description !== 'string' || node.description.trim() === '') missing.push(path)
  for (const [name, child] of Object.entries<Json>(node.properties ?? {})) {
    if (root && name === 'metadata') continue
    missing.push(...undescribed(child, `${path}.${name}`, false))
  }
  if (node.items?.type === 'object') missing.push(...undescribed(node.items, `${path}[]`, false))
  return missing
}

t.test('there is a CRD for each kind', async t => {
  t.same(crds.map(c => c.crd.spec.names.kind).sort(), [
    'CollaSet',
    'CronJobFlow',
    'DaemonJob',
    'EphemeralJob',
    'JobFlow',
    'JobFlowTemplate',
    'JobTemplate',
    'OperationJob'
  ])
})

t.test('every field of every CRD has a description, .spec and .status included', async t => {
  for (const { file, crd } of crds) {
    for (const version of crd.spec.versions) {
      const missing = undescribed(version.schema.openAPIV3Schema, crd.spec.names.kind.toLowerCase())
      t.same(missing, [], `${file} ${String(version.name)}: every schema node has a description`)
    }
  }
})

t.test('the walk finds what has no description, and stops at what a free-form node keeps', async t => {
  const schema = {
    description: 'root',
    properties: {
      spec: {
        type: 'object',
        properties: {
          a: { type: 'string' },
          list: {
            type: 'array',
            description: 'l',
            items: { type: 'object', properties: { b: { type: 'string', description: 'b' } } }
          }
        }
      },
      free: { type: 'object', description: 'f', 'x-kubernetes-preserve-unknown-fields': true },
      names: { type: 'array', description: 'n', items: { type: 'string' } },
      map: { type: 'object', description: 'm', additionalProperties: { type: 'string' } }
    }
  }
  t.same(undescribed(schema, 'x'), ['x.spec', 'x.spec.a', 'x.spec.list[]'])
})

t.test("the object's own metadata says nothing but its type, as the API server demands", async t => {
  for (const { file, crd } of crds) {
    for (const version of crd.spec.versions) {
      t.same(version.schema.openAPIV3Schema.properties.metadata, { type: 'object' }, `${file} ${String(version.name)}`)
    }
  }
})

t.test('every kind lists under `kubectl get jobhooks`', async t => {
  for (const { file, crd } of crds) t.same(crd.spec.names.categories, ['jobhooks'], file)
})

t.test('each kind prints the columns its reference shows', async t => {
  // As `kubectl get` prints them: without the -o wide ones.
  const columns = Object.fromEntries(
    crds.map(({ crd }) => [
      crd.spec.names.kind,
      printerColumns(crd.spec.names.kind).map(c => `${c.name}=${c.jsonPath}`)
    ])
  )
  t.same(columns.JobFlow, [
    'STATUS=.status.phase',
    'JOBS=.status.jobsSucceeded',
    'QUEUED=.status.jobsQueued',
    'AGE=.metadata.creationTimestamp'
  ])
  t.same(columns.JobTemplate, ['AGE=.metadata.creationTimestamp'])
  t.same(columns.JobFlowTemplate, ['AGE=.metadata.creationTimestamp'])
  t.same(columns.DaemonJob, [
    'STATUS=.status.phase',
    'DESIRED=.status.desired',
    'ACTIVE=.status.active',
    'QUEUED=.status.queued',
    'SUCCEEDED=.status.succeeded',
    'FAILED=.status.failed',
    'AGE=.metadata.creationTimestamp'
  ])
  // The proposal's `kubectl get ejob`: the phase is there with -o wide.
  t.same(columns.EphemeralJob, [
    'MATCH=.status.match',
    'SUCCEED=.status.succeeded',
    'FAILED=.status.failed',
    'RUNNING=.status.running',
    'WAITING=.status.waiting',
    'AGE=.metadata.creationTimestamp'
  ])
  t.same(columns.OperationJob, [
    'ACTION=.spec.action',
    'PROGRESS=.status.progress',
    'TOTAL=.status.totalPodCount',
    'SUCCEEDED=.status.succeededPodCount',
    'FAILED=.status.failedPodCount',
    'AGE=.metadata.creationTimestamp'
  ])
  // The OperationJob manual's `kubectl get cls`.
  t.same(columns.CollaSet, [
    'DESIRED=.spec.replicas',
    'CURRENT=.status.replicas',
    'AVAILABLE=.status.availableReplicas',
    'UPDATED=.status.updatedReplicas',
    'UPDATED_READY=.status.updatedReadyReplicas',
    'UPDATED_AVAILABLE=.status.updatedAvailableReplicas',
    'CURRENT_REVISION=.status.currentRevision',
    'UPDATED_REVISION=.status.updatedRevision',
    'AGE=.metadata.creationTimestamp'
  ])
})

t.test('every printer column says what it shows', async t => {
  for (const { file, crd } of crds) {
    for (const version of crd.spec.versions) {
      for (const column of version.additionalPrinterColumns ?? []) {
        if (column.jsonPath === '.metadata.creationTimestamp') continue
        t.type(column.description, 'string', `${file}: column ${String(column.name)}`)
      }
    }
  }
})
