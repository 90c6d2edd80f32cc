// The CRDs of manifests/crds/: every manifest parses as a Kubernetes object, the CRDs are
// structural and follow the contract, and their CEL rules compile, carry a message and sit under
// bounded lists and maps.
import t from 'tap'
import { type Json, crds, storageVersion, schemaNodes, compileRule, docs, parseErrors } from '../helpers/manifests.js'

t.test('every manifest parses as YAML and is a Kubernetes object', async t => {
  t.same(parseErrors, [])
  t.ok(docs.length >= 10, `found ${docs.length} objects`)
  for (const { file, object } of docs) {
    t.type(object.apiVersion, 'string', `${file}: apiVersion`)
    t.type(object.kind, 'string', `${file}: kind`)
    if (file !== 'kustomization.yaml') t.type(object.metadata?.name, 'string', `${file}: metadata.name`)
  }
})

t.test('the CRDs are structural and follow the contract', async t => {
  const expected: Record<string, { shortName: string; status: boolean }> = {
    JobFlow: { shortName: 'jf', status: true },
    JobTemplate: { shortName: 'jt', status: false },
    JobFlowTemplate: { shortName: 'jft', status: false },
    DaemonJob: { shortName: 'dj', status: true },
    OperationJob: { shortName: 'opj', status: true },
    CollaSet: { shortName: 'cls', status: true }
  }
  for (const [kind, { shortName, status }] of Object.entries(expected)) {
    const crd = crds.find(c => c.spec.names.kind === kind)
    if (crd === undefined) {
      t.fail(`no CRD for ${kind}`)
      continue
    }
    t.equal(crd.apiVersion, 'apiextensions.k8s.io/v1', `${kind}: apiextensions v1`)
    t.equal(crd.spec.group, 'jobhooks.io', `${kind}: group`)
    t.equal(crd.metadata.name, `${crd.spec.names.plural}.${crd.spec.group}`, `${kind}: name is <plural>.<group>`)
    t.equal(crd.spec.scope, 'Namespaced', `${kind}: namespaced`)
    t.ok(crd.spec.names.shortNames?.includes(shortName), `${kind}: short name ${shortName}`)
    t.same(
      crd.spec.versions.map((v: Json) => [v.name, v.served, v.storage]),
      [['v1alpha1', true, true]],
      `${kind}: one served storage version`
    )
    const version = storageVersion(crd)
    t.equal(version.subresources?.status !== undefined, status, `${kind}: status subresource ${status ? 'on' : 'off'}`)
    const root = version.schema.openAPIV3Schema
    if (status) t.equal(root.properties.status?.type, 'object', `${kind}: the status has a schema`)

    for (const { node, path } of schemaNodes(root)) {
      const loose = node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-int-or-string'] === true
      if (!loose) t.type(node.type, 'string', `${kind}${path}: has a type (structural schema)`)
      t.notOk(
        node.properties !== undefined && node.additionalProperties !== undefined,
        `${kind}${path}: not both properties and additionalProperties`
      )
      if (node.type === 'array') t.type(node.items, 'object', `${kind}${path}: an array has one items schema`)
      for (const name of node.required ?? []) {
        t.ok(node.properties?.[name] !== undefined, `${kind}${path}: required ${name} is a declared property`)
      }
    }

    const columns: Json[] = version.additionalPrinterColumns ?? []
    t.ok(
      columns.some(c => c.name === 'AGE' && c.jsonPath === '.metadata.creationTimestamp'),
      `${kind}: AGE column`
    )
    for (const column of columns) {
      const [first, ...rest] = String(column.jsonPath).replace(/^\./, '').split('.')
      if (first === 'metadata') continue
      let node: Json = root.properties[first as string]
      for (const part of rest) node = node?.properties?.[part]
      t.ok(node !== undefined, `${kind}: column ${column.name} reads ${column.jsonPath}, which the schema declares`)
    }
  }

  const jobflow = crds.find(c => c.spec.names.kind === 'JobFlow')
  const version = storageVersion(jobflow)
  const status = version.schema.openAPIV3Schema.properties.status.properties
  t.same(status.phase.enum, ['Pending', 'Running', 'Succeeded', 'Failed', 'Invalid'])
  t.same(status.jobs.items.properties.phase.enum, ['Pending', 'Queued', 'Running', 'Succeeded', 'Failed', 'Skipped'])
  t.same(
    Object.keys(status.jobs.items.properties).sort(),
    ['attempt', 'completionTime', 'jobName', 'message', 'name', 'output', 'phase', 'rerun', 'startTime'],
    'the contract record, with the attempt, the rerun that started it and the output'
  )
  t.same(Object.keys(status.conditions.items.properties).sort(), [
    'lastTransitionTime',
    'message',
    'reason',
    'status',
    'type'
  ])
  t.ok(
    version.additionalPrinterColumns.some((c: Json) => c.name === 'STATUS' && c.jsonPath === '.status.phase'),
    'STATUS column'
  )
})

t.test('CEL rules compile, carry a message, and sit under bounded lists and maps', async t => {
  let rules = 0
  for (const crd of crds) {
    for (const { node, path, ancestors } of schemaNodes(storageVersion(crd).schema.openAPIV3Schema)) {
      const validations: Json[] = node['x-kubernetes-validations'] ?? []
      for (const { rule, message } of validations) {
        rules++
        t.doesNotThrow(() => compileRule(rule), `${crd.spec.names.kind}${path}: ${rule} parses`)
        t.type(message, 'string', `${crd.spec.names.kind}${path}: ${rule} has a message`)
      }
      if (validations.length === 0) continue
      // A rule that compares every element with every other costs about maxItems² times the
      // cost of one comparison (roughly 20 for short strings in the API server's estimate), and
      // one rule may not be estimated above 10^7.
      for (const { rule } of validations) {
        if (/self\.(all|exists|exists_one|filter|map)\(.*self\.(all|exists|exists_one|filter|map)\(/.test(rule)) {
          t.ok(
            node.maxItems !== undefined && node.maxItems ** 2 * 20 <= 10_000_000,
            `${crd.spec.names.kind}${path}: maxItems ${String(node.maxItems)} keeps the pairwise rule ${rule} ` +
              'within the cost budget'
          )
        }
      }
      // The API server estimates a rule's cost from maxItems/maxProperties of every list and map
      // on the way to it, and refuses the CRD when a bound is missing and the estimate explodes.
      for (const container of [...ancestors, node]) {
        if (container.type === 'array') {
          t.type(container.maxItems, 'number', `${crd.spec.names.kind}${path}: lists above a rule have maxItems`)
        }
        if (container.type === 'object' && typeof container.additionalProperties === 'object') {
          t.type(
            container.maxProperties,
            'number',
            `${crd.spec.names.kind}${path}: maps above a rule have maxProperties`
          )
        }
      }
    }
  }
  t.ok(rules >= 3, `${rules} rules`)
})
