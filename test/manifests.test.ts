// The manifests against each other and against the service: CRD schemas (OpenAPI and CEL rules)
// accept the examples and refuse what the contract forbids, CompositeControllers call routes the
// app serves through the Service that exists, the Deployment, Service, PDB, NetworkPolicy and
// kustomization agree on names, labels and ports, and the ClusterRole grants exactly what the
// effects need.
import t from 'tap'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { Ajv, type ValidateFunction } from 'ajv'
import { parse as parseCel } from '@marcbachmann/cel-js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { parseJobFlowSpec } from '../src/controllers/jobflow/spec.js'
import { parseEphemeralJobSpec } from '../src/controllers/ephemeraljob/spec.js'
import { defaultHooksDir, loadScriptLibrary } from '../src/scripts/library.js'
import type { KubeObject } from '../src/k8s/types.js'
import { EFFECT_PERMISSIONS, EVENT_PERMISSIONS, PARENT_PERMISSIONS } from '../src/effects/executor.js'
import { syncCollaSet } from '../src/controllers/collaset/sync.js'
import { ALL_KINDS } from '../src/controllers/kinds.js'
import { updateStrategyProblem } from '../src/protocol/update-strategy.js'

type Json = any

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const MANIFESTS = join(ROOT, 'manifests')
const NOW = new Date('2026-01-02T03:04:05.000Z')

interface Doc {
  file: string
  object: Json
}

function yamlFiles (dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap(entry => {
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) return yamlFiles(path)
      return /\.ya?ml$/.test(entry) ? [path] : []
    })
}

/** Every document of every YAML file under manifests/, with its path relative to manifests/. */
function loadManifests (): { docs: Doc[]; parseErrors: string[] } {
  const docs: Doc[] = []
  const parseErrors: string[] = []
  for (const path of yamlFiles(MANIFESTS)) {
    const file = relative(MANIFESTS, path).split(sep).join('/')
    for (const document of parseAllDocuments(readFileSync(path, 'utf8'))) {
      for (const error of [...document.errors, ...document.warnings]) parseErrors.push(`${file}: ${error.message}`)
      const object = document.toJSON()
      if (object !== null && object !== undefined) docs.push({ file, object })
    }
  }
  return { docs, parseErrors }
}

const { docs, parseErrors } = loadManifests()
const ofKind = (kind: string, under?: string): Doc[] =>
  docs.filter(d => d.object.kind === kind && (under === undefined || d.file.startsWith(under)))
const clone = <T>(value: T): T => structuredClone(value)

t.test('every manifest parses as YAML and is a Kubernetes object', async t => {
  t.same(parseErrors, [])
  t.ok(docs.length >= 10, `found ${docs.length} objects`)
  for (const { file, object } of docs) {
    t.type(object.apiVersion, 'string', `${file}: apiVersion`)
    t.type(object.kind, 'string', `${file}: kind`)
    if (file !== 'kustomization.yaml') t.type(object.metadata?.name, 'string', `${file}: metadata.name`)
  }
})

// ---------------------------------------------------------------------------------------------
// CRDs: OpenAPI schemas through ajv, CEL rules through cel-js.

const crds = ofKind('CustomResourceDefinition', 'crds/').map(d => d.object)
const crdFor = (apiVersion: string, kind: string): Json | undefined =>
  crds.find(crd => `${crd.spec.group}/${storageVersion(crd).name}` === apiVersion && crd.spec.names.kind === kind)

function storageVersion (crd: Json): Json {
  return crd.spec.versions.find((v: Json) => v.storage === true)
}

/** A schema node and what is below it, depth first, with its path. */
function * schemaNodes (schema: Json, path = ''): Generator<{ node: Json; path: string; ancestors: Json[] }> {
  const stack: Array<{ node: Json; path: string; ancestors: Json[] }> = [{ node: schema, path, ancestors: [] }]
  while (stack.length > 0) {
    const entry = stack.pop() as { node: Json; path: string; ancestors: Json[] }
    yield entry
    const { node } = entry
    const ancestors = [...entry.ancestors, node]
    for (const [name, child] of Object.entries<Json>(node.properties ?? {})) {
      stack.push({ node: child, path: `${entry.path}.${name}`, ancestors })
    }
    if (node.items !== undefined) stack.push({ node: node.items, path: `${entry.path}[]`, ancestors })
    if (typeof node.additionalProperties === 'object') {
      stack.push({ node: node.additionalProperties, path: `${entry.path}{}`, ancestors })
    }
  }
}

/**
 * The schema as plain JSON Schema for ajv. Kubernetes prunes unknown fields and kubectl (strict
 * field validation) refuses them, so objects with declared properties and no
 * x-kubernetes-preserve-unknown-fields get additionalProperties: false here.
 */
function toJsonSchema (node: Json): Json {
  if (Array.isArray(node)) return node.map(toJsonSchema)
  if (node === null || typeof node !== 'object') return node
  const out: Json = {}
  // List types the API server enforces: a list-map refuses two items with the same keys.
  if (node['x-kubernetes-list-type'] === 'map') out.listMapKeys = node['x-kubernetes-list-map-keys']
  if (node['x-kubernetes-list-type'] === 'set') out.uniqueItems = true
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-')) continue
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries<Json>(value as Json).map(([k, v]) => [k, toJsonSchema(v)]))
        : toJsonSchema(value)
  }
  if (
    node.type === 'object' &&
    node.properties !== undefined &&
    node.additionalProperties === undefined &&
    node['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out.additionalProperties = false
  }
  return out
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
ajv.addKeyword({
  keyword: 'listMapKeys',
  type: 'array',
  schemaType: 'array',
  error: { message: 'has a duplicate key (x-kubernetes-list-type: map)' },
  validate: (keys: string[], items: unknown[]) => {
    const seen = new Set(items.map(item => JSON.stringify(keys.map(k => (item as Json)?.[k]))))
    return seen.size === items.length
  }
})
const validators = new Map<Json, ValidateFunction>()
function openApiErrors (crd: Json, object: Json): string[] {
  let validate = validators.get(crd)
  if (validate === undefined) {
    validate = ajv.compile(toJsonSchema(storageVersion(crd).schema.openAPIV3Schema))
    validators.set(crd, validate)
  }
  if (validate(object)) return []
  return (validate.errors ?? []).map(
    e =>
      `${e.instancePath || '/'} ${e.message ?? ''}` +
      (e.params !== undefined && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : '')
  )
}

/** JSON numbers that are whole are CEL ints (BigInt in cel-js), as the API server sees them. */
function celValue (value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value)
  if (Array.isArray(value)) return value.map(celValue)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celValue(v)]))
  }
  return value
}

const compiledRules = new Map<string, (context: Record<string, unknown>) => unknown>()
function compileRule (rule: string): (context: Record<string, unknown>) => unknown {
  let program = compiledRules.get(rule)
  if (program === undefined) {
    program = parseCel(rule) as unknown as (context: Record<string, unknown>) => unknown
    compiledRules.set(rule, program)
  }
  return program
}

/**
 * Runs every x-kubernetes-validations rule of the schema on the part of `value` it sits on, the
 * way the API server does: `self` is that part, absent parts are not checked. `old` is the
 * object before an update: transition rules (those that read `oldSelf`) run only where the old
 * object has that part too, so never on create.
 */
function celErrors (schema: Json, value: unknown, path = '', old?: unknown): string[] {
  if (value === undefined || value === null) return []
  const errors: string[] = []
  for (const { rule, message } of schema['x-kubernetes-validations'] ?? []) {
    const transition = /\boldSelf\b/.test(rule)
    if (transition && (old === undefined || old === null)) continue
    let result: unknown
    try {
      result = compileRule(rule)({ self: celValue(value), ...(transition ? { oldSelf: celValue(old) } : {}) })
    } catch (error) {
      result = error
    }
    if (result !== true) {
      errors.push(`${path || '<root>'}: ${String(message ?? rule)}${result === false ? '' : ` (${String(result)})`}`)
    }
  }
  if (Array.isArray(value)) {
    // Old items correlate with new ones only in list-maps, by their keys.
    const keys: string[] | undefined =
      schema['x-kubernetes-list-type'] === 'map' ? schema['x-kubernetes-list-map-keys'] : undefined
    const oldItem = (item: unknown): unknown =>
      keys === undefined || !Array.isArray(old)
        ? undefined
        : old.find(o => keys.every(k => (o as Json)?.[k] === (item as Json)?.[k]))
    if (schema.items !== undefined) {
      value.forEach((item, i) => errors.push(...celErrors(schema.items, item, `${path}[${i}]`, oldItem(item))))
    }
  } else if (typeof value === 'object') {
    const record = value as Record<string, unknown>
    const oldRecord: Record<string, unknown> | undefined =
      old !== null && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined
    const properties: Record<string, Json> = schema.properties ?? {}
    for (const [name, child] of Object.entries(properties)) {
      errors.push(...celErrors(child, record[name], `${path}.${name}`, oldRecord?.[name]))
    }
    if (typeof schema.additionalProperties === 'object') {
      for (const [name, child] of Object.entries(record)) {
        if (!(name in properties)) {
          errors.push(...celErrors(schema.additionalProperties, child, `${path}.${name}`, oldRecord?.[name]))
        }
      }
    }
  }
  return errors
}

function crdErrors (object: Json): string[] {
  const crd = crdFor(object.apiVersion, object.kind)
  if (crd === undefined) return [`no CRD for ${object.kind} ${object.apiVersion}`]
  return [...openApiErrors(crd, object), ...celErrors(storageVersion(crd).schema.openAPIV3Schema, object)]
}

t.test('the CRDs are structural and follow the contract', async t => {
  const expected: Record<string, { shortName: string; status: boolean }> = {
    JobFlow: { shortName: 'jf', status: true },
    JobTemplate: { shortName: 'jt', status: false },
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
  t.same(status.jobs.items.properties.phase.enum, ['Pending', 'Running', 'Succeeded', 'Failed', 'Skipped'])
  t.same(
    Object.keys(status.jobs.items.properties).sort(),
    ['attempt', 'completionTime', 'jobName', 'message', 'name', 'phase', 'rerun', 'startTime'],
    'the contract record, with the attempt and the rerun that started it'
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

// ---------------------------------------------------------------------------------------------
// Examples.

const examples = docs.filter(d => d.file.startsWith('examples/'))
const exampleJobFlows = examples.filter(d => d.object.kind === 'JobFlow')
const fiveJobs = (): Json => clone(exampleJobFlows.find(d => d.object.metadata.name === 'jobflow-example')?.object)

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
        o.spec.flows = Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}`, jobTemplate: { template: {} } }))
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

// ---------------------------------------------------------------------------------------------
// The service: routes, and what the hooks answer for the examples.

let app: FastifyInstance
t.before(async () => {
  app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => NOW })
})
t.teardown(async () => await app?.close())

const services = ofKind('Service', 'deploy/').map(d => d.object)

t.test('every CompositeController calls routes the app serves, through the Service', async t => {
  const controllers = ofKind('CompositeController', 'controllers/')
  t.ok(controllers.length >= 1, 'at least one CompositeController')
  for (const { file, object } of controllers) {
    const spec = object.spec
    t.equal(object.apiVersion, 'metacontroller.k8s.io/v1alpha1', `${file}: apiVersion`)
    const [group, version] = String(spec.parentResource.apiVersion).split('/')
    const parentCrd = crds.find(c => c.spec.group === group && c.spec.names.plural === spec.parentResource.resource)
    t.ok(parentCrd !== undefined, `${file}: parent ${spec.parentResource.resource} has a CRD`)
    t.ok(
      parentCrd?.spec.versions.some((v: Json) => v.name === version && v.served === true),
      `${file}: parent version ${String(version)} is served`
    )
    t.ok(
      storageVersion(parentCrd ?? { spec: { versions: [] } })?.subresources?.status !== undefined,
      `${file}: the parent has a status subresource`
    )
    // Every child resource has a strategy its kind's answers are safe under (src/protocol/update-strategy.ts):
    // JobFlow's Jobs InPlace, answered as last applied, for spec.suspend; every other OnDelete,
    // children that exist answered by identity only.
    const kind = ALL_KINDS.find(k => spec.hooks?.sync?.webhook?.path === `/hooks/${k.kind}/sync`)
    t.equal(
      kind === undefined ? 'no kind serves it' : updateStrategyProblem(object, kind),
      undefined,
      `${file}: update strategies its kind is safe under`
    )
    for (const child of spec.childResources ?? []) {
      const expected =
        object.metadata.name === 'jobflow-controller' && child.resource === 'jobs' ? 'InPlace' : 'OnDelete'
      t.equal(child.updateStrategy?.method, expected, `${file}: ${String(child.resource)} update strategy`)
    }
    // After an outage every parent is synced again within a minute of the service's return: the
    // next resync, plus time for the queue (docs/operations.md, "Recovery after an outage").
    t.ok(
      Number.isInteger(spec.resyncPeriodSeconds) && spec.resyncPeriodSeconds >= 1 && spec.resyncPeriodSeconds <= 50,
      `${file}: resyncPeriodSeconds ${String(spec.resyncPeriodSeconds)} within 1–50`
    )
    t.ok(spec.hooks?.sync !== undefined, `${file}: has a sync hook`)
    for (const [hook, config] of Object.entries<Json>(spec.hooks ?? {})) {
      const where = `${file}: ${hook} hook`
      t.equal(config.version, 'v2', `${where} uses version v2`)
      const webhook = config.webhook
      let path: string
      if (webhook.url !== undefined) {
        path = new URL(webhook.url).pathname
      } else {
        path = webhook.path
        const service = services.find(
          s => s.metadata.name === webhook.service?.name && s.metadata.namespace === webhook.service?.namespace
        )
        t.ok(
          service !== undefined,
          `${where} names the Service ${String(webhook.service?.namespace)}/${String(webhook.service?.name)}`
        )
        t.ok(
          service?.spec.ports.some((p: Json) => p.port === (webhook.service?.port ?? 80)),
          `${where} calls a port of that Service`
        )
      }
      t.ok(app.hasRoute({ method: 'POST', url: path }), `${where}: POST ${path} is a route of the app`)
      t.equal(
        path,
        `/hooks/${String(parentCrd?.spec.names.singular)}/${hook}`,
        `${where}: the path names the parent's kind and the hook`
      )
      if (webhook.timeout !== undefined) t.match(webhook.timeout, /^\d+(ms|s)$/, `${where}: timeout is a Go duration`)
    }
  }
})

/** A sync request for an example as Metacontroller would send it on the first pass. */
function firstSync (parent: Json, file: string): Json {
  const namespace = 'default'
  const templates = examples.filter(d => d.file === file && d.object.kind === 'JobTemplate')
  return {
    controller: {
      apiVersion: 'metacontroller.k8s.io/v1alpha1',
      kind: 'CompositeController',
      metadata: { name: 'jobflow-controller' }
    },
    parent: {
      ...clone(parent),
      metadata: { ...parent.metadata, namespace, uid: `uid-${String(parent.metadata.name)}`, generation: 1 }
    },
    children: { 'Job.batch/v1': {}, 'ConfigMap.v1': {} },
    related: {
      'JobTemplate.jobhooks.io/v1alpha1': Object.fromEntries(
        templates.map(d => [
          `${namespace}/${String(d.object.metadata.name)}`,
          { ...clone(d.object), metadata: { ...d.object.metadata, namespace } }
        ])
      )
    },
    finalizing: false
  }
}

t.test('the hooks run every example JobFlow: root flows start and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'JobFlow')
  for (const { file, object } of exampleJobFlows) {
    const name = String(object.metadata.name)
    const customize = await app.inject({
      method: 'POST',
      url: '/hooks/jobflow/customize',
      payload: { parent: { ...object, metadata: { ...object.metadata, namespace: 'default' } } }
    })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    const wanted = customize.json().relatedResources.flatMap((r: Json) => r.names ?? [])
    const refs = [
      ...new Set<string>(
        object.spec.flows.flatMap((f: Json) => (f.jobTemplateRef !== undefined ? [f.jobTemplateRef] : []))
      )
    ].sort()
    t.same([...wanted].sort(), refs, `${file}: customize asks for the referenced JobTemplates`)

    const response = await app.inject({ method: 'POST', url: '/hooks/jobflow/sync', payload: firstSync(object, file) })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.not(body.status.phase, 'Invalid', `${file}: ${name} is valid (${JSON.stringify(body.status.conditions)})`)
    const jobs = body.children
      .filter((c: Json) => c.kind === 'Job')
      .map((c: Json) => c.metadata.name)
      .sort()
    // A JobFlow applied suspended starts nothing.
    const roots =
      object.spec.suspend === true
        ? []
        : object.spec.flows
          .filter((f: Json) => (f.dependencies ?? []).length === 0)
          .map((f: Json) => `${name}-${String(f.name)}`)
          .sort()
    t.same(jobs, roots, `${file}: the flows without dependencies start first (none while suspended)`)
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status the hook returns fits the CRD's status schema`
    )
  }
})

// ---------------------------------------------------------------------------------------------
// Deployment, Service, PDB, NetworkPolicy.

const deployments = ofKind('Deployment', 'deploy/').map(d => d.object)
const deployment = deployments[0]
const podLabels: Record<string, string> = deployment?.spec.template.metadata.labels ?? {}
const container =
  deployment?.spec.template.spec.containers.find((c: Json) => c.name === 'jobhooks') ??
  deployment?.spec.template.spec.containers[0]
const containerPorts: Json[] = container?.ports ?? []

const selects = (selector: Record<string, string> | undefined): boolean =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => podLabels[k] === v)
const namesPort = (port: unknown): boolean =>
  containerPorts.some(p => (typeof port === 'string' ? p.name === port : p.containerPort === port))

t.test('the Deployment runs the service safely', async t => {
  t.equal(deployments.length, 1, 'one Deployment')
  t.ok(deployment.spec.replicas >= 2, 'at least two replicas')
  t.ok(selects(deployment.spec.selector.matchLabels), 'its selector matches its pod labels')
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const images: Json[] = docs.find(d => d.file === 'kustomization.yaml')?.object?.images ?? []
  t.equal(container.image, 'jobhooks', 'the Deployment names the image for kustomize to set')
  t.same(
    images.map(i => i.name),
    ['jobhooks'],
    'the kustomization sets it, in one place'
  )
  t.equal(String(images[0]?.newTag), String(pkg.version), 'the image tag is the package version')
  t.match(images[0]?.newName, /^[a-z0-9.-]+(:\d+)?\/[a-z0-9/._-]+$/, 'a registry and a repository')
  const http = containerPorts.find(p => p.name === 'http')
  t.equal(http?.containerPort, 8080, 'container port 8080 is named http')
  const env = Object.fromEntries((container.env ?? []).map((e: Json) => [e.name, e.value]))
  t.equal(Number(env.PORT), http?.containerPort, 'PORT is the container port')

  for (const [probe, expected] of [
    ['readinessProbe', '/readyz'],
    ['livenessProbe', '/healthz']
  ] as const) {
    const get = container[probe]?.httpGet
    t.equal(get?.path, expected, `${probe} path`)
    t.ok(app.hasRoute({ method: 'GET', url: get?.path }), `${probe}: GET ${String(get?.path)} is a route of the app`)
    t.ok(namesPort(get?.port), `${probe} port is a container port`)
  }

  const pod = deployment.spec.template.spec
  const security = container.securityContext ?? {}
  t.equal(security.runAsNonRoot ?? pod.securityContext?.runAsNonRoot, true, 'runAsNonRoot')
  t.equal(security.runAsUser ?? pod.securityContext?.runAsUser, 1000, 'runs as the node user of the image')
  t.equal(security.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem')
  t.equal(security.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation false')
  t.same(security.capabilities?.drop, ['ALL'], 'drops every capability')
  t.equal(
    (security.seccompProfile ?? pod.securityContext?.seccompProfile)?.type,
    'RuntimeDefault',
    'RuntimeDefault seccomp profile'
  )
  const namespace = ofKind('Namespace', 'deploy/')
    .map(d => d.object)
    .find(n => n.metadata.name === deployment.metadata.namespace)
  t.equal(
    namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce'],
    'restricted',
    'its namespace enforces the restricted Pod Security Standard, which the settings above meet'
  )
  t.equal(pod.hostNetwork ?? false, false, 'no host network (restricted)')
  t.notOk(
    (pod.volumes ?? []).some((v: Json) => v.hostPath !== undefined),
    'no hostPath volume (restricted)'
  )
  t.ok(
    container.resources?.requests?.cpu !== undefined && container.resources?.requests?.memory !== undefined,
    'resource requests'
  )
  t.ok(container.resources?.limits?.memory !== undefined, 'a memory limit')

  const graceMs = Number(env.SHUTDOWN_GRACE_MS ?? 15000)
  const preStop = container.lifecycle?.preStop
  const pauseMs =
    preStop?.sleep?.seconds !== undefined
      ? preStop.sleep.seconds * 1000
      : Number(preStop?.exec?.command?.[0] === 'sleep' ? preStop.exec.command[1] : 0) * 1000
  t.ok(
    pod.terminationGracePeriodSeconds * 1000 > graceMs + pauseMs,
    'the grace period covers the preStop pause and the drain of hooks in flight'
  )

  const spread = pod.topologySpreadConstraints?.[0]
  const antiAffinity = pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]
  t.ok(
    (spread?.whenUnsatisfiable === 'ScheduleAnyway' && selects(spread.labelSelector?.matchLabels)) ||
      selects(antiAffinity?.podAffinityTerm?.labelSelector?.matchLabels),
    'replicas prefer different nodes'
  )

  const accounts = ofKind('ServiceAccount', 'deploy/').map(d => d.object)
  t.ok(
    accounts.some(
      a => a.metadata.name === pod.serviceAccountName && a.metadata.namespace === deployment.metadata.namespace
    ),
    'its ServiceAccount exists'
  )
  const account = accounts.find(a => a.metadata.name === pod.serviceAccountName)
  t.not(
    pod.automountServiceAccountToken ?? account?.automountServiceAccountToken,
    false,
    'the pods get the token that applies effects'
  )
})

t.test("the ClusterRole grants exactly what the effects need, to the Deployment's ServiceAccount", async t => {
  const roles = ofKind('ClusterRole', 'deploy/').map(d => d.object)
  t.equal(roles.length, 1, 'one ClusterRole')
  const role = roles[0]
  const granted: string[] = []
  for (const rule of role?.rules ?? []) {
    t.same(
      Object.keys(rule).sort(),
      ['apiGroups', 'resources', 'verbs'],
      'no resourceNames, nonResourceURLs or aggregation'
    )
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) granted.push(`${String(group)} ${String(resource)} ${String(verb)}`)
      }
    }
  }
  const needed = [...Object.values(EFFECT_PERMISSIONS), PARENT_PERMISSIONS, EVENT_PERMISSIONS].flatMap(permissions =>
    permissions.flatMap(p => p.verbs.map(verb => `${p.apiGroup} ${p.resource} ${verb}`))
  )
  t.same(
    [...new Set(granted)].sort(),
    [...new Set(needed)].sort(),
    "the union of EFFECT_PERMISSIONS, the parents' reads and the Events, no more, no less"
  )
  t.same(
    EVENT_PERMISSIONS,
    [{ apiGroup: '', resource: 'events', verbs: ['create', 'patch'] }],
    'Events: create and patch in the core group, nothing more'
  )
  t.same(
    PARENT_PERMISSIONS.map(p => `${p.resource} ${p.verbs.join(',')}`),
    ['ephemeraljobs get', 'operationjobs get', 'collasets get', 'jobflows get'],
    'reads of the parents whose hooks have effects, only get'
  )
  t.same(granted.length, new Set(granted).size, 'nothing granted twice')
  t.notOk(
    granted.some(g => g.includes('*')),
    'no wildcards'
  )
  t.same(
    Object.keys(EFFECT_PERMISSIONS).sort(),
    ['Delete', 'Evict', 'InjectEphemeralContainers', 'SetPodCondition', 'SetPodLabels'],
    'every effect type has its permissions listed'
  )

  const bindings = ofKind('ClusterRoleBinding', 'deploy/').map(d => d.object)
  t.equal(bindings.length, 1, 'one ClusterRoleBinding')
  const binding = bindings[0]
  t.same(
    binding?.roleRef,
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role?.metadata.name },
    'binds the ClusterRole'
  )
  t.same(
    binding?.subjects,
    [
      {
        kind: 'ServiceAccount',
        name: deployment.spec.template.spec.serviceAccountName,
        namespace: deployment.metadata.namespace
      }
    ],
    "to the Deployment's ServiceAccount only"
  )
})

t.test("Service, PDB and NetworkPolicy select the Deployment's pods", async t => {
  t.equal(services.length, 1, 'one Service')
  const service = services[0]
  t.equal(service.spec.type ?? 'ClusterIP', 'ClusterIP')
  t.ok(selects(service.spec.selector), 'the Service selects the pods')
  for (const port of service.spec.ports) {
    t.ok(namesPort(port.targetPort ?? port.port), `Service port ${String(port.port)} targets a container port`)
  }
  t.ok(
    service.spec.ports.some((p: Json) => p.port === 80),
    'the Service listens on 80'
  )

  const pdb = ofKind('PodDisruptionBudget', 'deploy/')[0]?.object
  t.ok(selects(pdb?.spec.selector.matchLabels), 'the PDB selects the pods')
  t.ok(
    pdb?.spec.minAvailable >= 1 && pdb?.spec.minAvailable < deployment.spec.replicas,
    'the PDB keeps one pod but lets drains proceed'
  )

  const policy = ofKind('NetworkPolicy', 'deploy/')[0]?.object
  t.ok(selects(policy?.spec.podSelector.matchLabels), 'the NetworkPolicy selects the pods')
  const ports = (policy?.spec.ingress ?? []).flatMap((rule: Json) => rule.ports ?? [])
  t.ok(ports.length > 0 && ports.every((p: Json) => namesPort(p.port)), 'the NetworkPolicy opens the container port')
  t.same(policy?.spec.policyTypes, ['Ingress'])
  t.same(
    (policy?.spec.ingress ?? []).map((rule: Json) => rule.from),
    [[{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'metacontroller' } } }]],
    "only Metacontroller's namespace is admitted, by default the one its own manifests create"
  )

  const namespaces = new Set(ofKind('Namespace', 'deploy/').map(d => d.object.metadata.name))
  const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding'])
  for (const { file, object } of docs.filter(d => d.file.startsWith('deploy/') && !clusterScoped.has(d.object.kind))) {
    t.ok(namespaces.has(object.metadata.namespace), `${file}: in a namespace the manifests create`)
  }
})

t.test(
  'every hook sends the token of a Secret the Deployment mounts as AUTH_TOKEN_FILE; no token ships in the manifests',
  async t => {
    const pod = deployment.spec.template.spec
    const env = Object.fromEntries((container.env ?? []).map((e: Json) => [e.name, e.value]))
    const tokenFile = String(env.AUTH_TOKEN_FILE)
    const mount = (container.volumeMounts ?? []).find((m: Json) => tokenFile.startsWith(`${String(m.mountPath)}/`))
    t.ok(mount !== undefined, `AUTH_TOKEN_FILE ${tokenFile} is in a mounted volume`)
    t.equal(mount?.readOnly, true, 'mounted read-only')
    const volume = (pod.volumes ?? []).find((v: Json) => v.name === mount?.name)
    const secretName = volume?.secret?.secretName
    t.ok(typeof secretName === 'string', 'the volume is a Secret')
    t.not(volume?.secret?.optional, true, 'a missing Secret stops the pod instead of serving without a token')
    const key = tokenFile.slice(String(mount?.mountPath).length + 1)
    const mode = volume?.secret?.defaultMode ?? 0o644
    t.equal(mode & 0o007, 0, 'the token is not world-readable')
    if ((mode & 0o070) !== 0) {
      t.equal(pod.securityContext?.fsGroup, pod.securityContext?.runAsGroup ?? 1000, 'readable through fsGroup')
    }

    const controllers = ofKind('CompositeController', 'controllers/')
    for (const { file, object } of controllers) {
      for (const [hook, config] of Object.entries<Json>(object.spec.hooks ?? {})) {
        t.same(
          config.webhook.authorization,
          {
            type: 'Bearer',
            secretRef: { name: secretName, namespace: deployment.metadata.namespace, key }
          },
          `${file}: the ${hook} hook sends the token the service reads`
        )
      }
    }
    t.same(
      docs.filter(d => d.object.kind === 'Secret').map(d => d.file),
      [],
      'no Secret in the manifests: every installation makes its own token'
    )
    for (const file of [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter(f => f.endsWith('.md'))
        .map(f => `docs/${f}`)
    ]) {
      t.notMatch(
        readFileSync(join(ROOT, file), 'utf8'),
        /--from-literal=token=(?!"\$\()/,
        `${file} never shows a fixed token`
      )
    }
  }
)

t.test('kustomization.yaml installs crds, controllers and deploy, and only those', async t => {
  const kustomization = docs.find(d => d.file === 'kustomization.yaml')?.object
  const resources: string[] = kustomization?.resources ?? []
  for (const resource of resources) t.ok(existsSync(join(MANIFESTS, resource)), `${resource} exists`)
  t.notOk(
    resources.some(r => r.startsWith('examples')),
    'the examples are not installed'
  )
  const installable = [...new Set(docs.map(d => d.file))].filter(f => /^(crds|controllers|deploy)\//.test(f))
  for (const file of installable) t.ok(resources.includes(file), `${file} is listed`)
  t.same([...new Set(resources)], resources, 'no resource listed twice')
})

t.test('the Dockerfile builds what the Deployment runs', async t => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
  const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8'))
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1]
  const args = cmd === undefined ? [] : (JSON.parse(cmd) as string[])
  t.equal(args.at(-1), `${String(build.compilerOptions.outDir)}/src/server.js`, 'CMD runs the compiled server')
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const start = (pkg.scripts.start as string)
    .split('&&')
    .map(part => part.trim())
    .find(part => part.startsWith('node '))
  t.same(args, start?.split(/\s+/), 'the image runs the server exactly as npm start does (same node flags)')
  t.ok(existsSync(join(ROOT, 'src', 'server.ts')), 'its source exists')
  t.match(
    dockerfile,
    new RegExp(`^EXPOSE\\s+${String(containerPorts[0]?.containerPort)}\\s*$`, 'm'),
    'EXPOSE matches the container port'
  )
  t.match(dockerfile, /^USER\s+node\s*$/m, 'runs as the node user (uid 1000)')
  t.match(dockerfile, /^COPY\s+hooks\s+\S*hooks\/?\s*$/m, 'ships hooks/')
  t.match(dockerfile, /^COPY\s+package\.json\s/m, 'ships package.json, which the server uses to find hooks/')
  t.match(dockerfile, /npm ci --omit=dev/, 'production dependencies only in the runtime image')
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map(l => l.trim())
  for (const needed of ['src', 'hooks', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    t.notOk(ignored.includes(needed), `.dockerignore keeps ${needed}`)
  }
  t.ok(ignored.includes('node_modules'), '.dockerignore leaves out node_modules')
})

// ---------------------------------------------------------------------------------------------
// EphemeralJob.

t.test(
  'the EphemeralJob CRD: columns, required fields, ranges, and only replicas, parallelism and paused change',
  async t => {
    const crd = crds.find(c => c.spec.names.kind === 'EphemeralJob')
    const version = storageVersion(crd)
    t.ok(crd.spec.names.shortNames.includes('ejob'), 'short name ejob')
    t.same(
      version.additionalPrinterColumns.map((c: Json) => `${String(c.name)}${c.priority > 0 ? ' (wide)' : ''}`),
      ['MATCH', 'SUCCEED', 'FAILED', 'RUNNING', 'WAITING', 'AGE', 'STATUS (wide)']
    )
    t.same(version.schema.openAPIV3Schema.properties.status.properties.phase.enum, [
      'Waiting',
      'Running',
      'Succeeded',
      'Failed',
      'Paused',
      'Invalid'
    ])
    const root = version.schema.openAPIV3Schema
    const story = (): Json =>
      clone(
        examples.find(d => d.object.kind === 'EphemeralJob' && d.object.metadata.name === 'hello-world-ephemeral-job')
          ?.object
      )
    const openApi = (o: Json): string[] => openApiErrors(crd, o)
    const cel = (o: Json, old?: Json): string[] => celErrors(root, o, '', old)
    const hookProblems = (o: Json): string[] => {
      const p = parseEphemeralJobSpec(o as KubeObject)
      return p.ok ? [] : p.problems
    }
    t.same([...openApi(story()), ...cel(story())], [], 'the first story is valid')
    t.same(hookProblems(story()), [], 'and the hook agrees')

    const schemaCases: Array<[string, (o: Json) => void]> = [
      ...['name', 'image', 'imagePullPolicy', 'terminationMessagePolicy', 'targetContainerName'].map(
        (field): [string, (o: Json) => void] => [
          `a container without ${field}`,
          o => {
            delete o.spec.template.ephemeralContainers[0][field]
          }
        ]
      ),
      [
        'no selector',
        o => {
          delete o.spec.selector
        }
      ],
      [
        'no template',
        o => {
          delete o.spec.template
        }
      ],
      [
        'no containers',
        o => {
          o.spec.template.ephemeralContainers = []
        }
      ],
      [
        'parallelism 11',
        o => {
          o.spec.parallelism = 11
        }
      ],
      [
        'parallelism 0',
        o => {
          o.spec.parallelism = 0
        }
      ],
      [
        'an unknown pull policy',
        o => {
          o.spec.template.ephemeralContainers[0].imagePullPolicy = 'Sometimes'
        }
      ],
      [
        'an unknown termination message policy',
        o => {
          o.spec.template.ephemeralContainers[0].terminationMessagePolicy = 'Stdout'
        }
      ],
      [
        'an unknown selector operator',
        o => {
          o.spec.selector.matchExpressions = [{ key: 'a', operator: 'Like', values: ['b'] }]
        }
      ],
      [
        'two containers with one name',
        o => {
          o.spec.parallelism = 2
          o.spec.template.ephemeralContainers.push(clone(o.spec.template.ephemeralContainers[0]))
        }
      ]
    ]
    for (const [what, mutate] of schemaCases) {
      const o = story()
      mutate(o)
      t.not(openApi(o).length, 0, `the schema refuses ${what}`)
      t.not(hookProblems(o).length, 0, `the hook also refuses ${what}`)
    }
    const celCases: Array<[string, (o: Json) => void, RegExp]> = [
      [
        'an empty selector',
        o => {
          o.spec.selector = {}
        },
        /must not be empty/
      ],
      [
        'In without values',
        o => {
          o.spec.selector.matchExpressions = [{ key: 'a', operator: 'In' }]
        },
        /need values/
      ],
      [
        'more containers than parallelism',
        o => {
          o.spec.template.ephemeralContainers.push({ ...clone(o.spec.template.ephemeralContainers[0]), name: 'second' })
        },
        /parallelism must be at least the number of ephemeral containers/
      ]
    ]
    for (const [what, mutate, message] of celCases) {
      const o = story()
      mutate(o)
      t.same(openApi(o), [], `${what}: the OpenAPI schema alone lets it through`)
      const errors = cel(o)
      t.equal(errors.length, 1, `a CEL rule refuses ${what}: ${errors.join('; ')}`)
      t.match(errors[0] ?? '', message)
      t.not(hookProblems(o).length, 0, `the hook also refuses ${what}`)
    }

    const allowed: Array<[string, (o: Json) => void]> = [
      [
        'replicas',
        o => {
          o.spec.replicas = 2
        }
      ],
      [
        'replicas removed',
        o => {
          delete o.spec.replicas
        }
      ],
      [
        'parallelism',
        o => {
          o.spec.parallelism = 3
        }
      ],
      [
        'paused',
        o => {
          o.spec.paused = true
        }
      ]
    ]
    for (const [what, mutate] of allowed) {
      const o = story()
      mutate(o)
      t.same([...openApi(o), ...cel(o, story())], [], `an update may change ${what}`)
    }
    const immutable: Array<[string, (o: Json) => void, RegExp]> = [
      [
        'the selector',
        o => {
          o.spec.selector.matchLabels.app = 'other'
        },
        /spec.selector cannot change/
      ],
      [
        'the template',
        o => {
          o.spec.template.ephemeralContainers[0].image = 'busybox:1.37'
        },
        /spec.template cannot change/
      ],
      [
        "the template's command",
        o => {
          o.spec.template.ephemeralContainers[0].command = ['true']
        },
        /spec.template cannot change/
      ],
      [
        'ttlSecondsAfterCreated',
        o => {
          o.spec.ttlSecondsAfterCreated = 60
        },
        /ttlSecondsAfterCreated cannot change/
      ],
      [
        'ttlSecondsAfterCreated (removed)',
        o => {
          delete o.spec.ttlSecondsAfterCreated
        },
        /ttlSecondsAfterCreated cannot change/
      ],
      [
        'ttlSecondsAfterFinished (added)',
        o => {
          o.spec.ttlSecondsAfterFinished = 60
        },
        /ttlSecondsAfterFinished cannot change/
      ],
      [
        'activeDeadlineSeconds (added)',
        o => {
          o.spec.activeDeadlineSeconds = 60
        },
        /activeDeadlineSeconds cannot change/
      ]
    ]
    for (const [what, mutate, message] of immutable) {
      const o = story()
      mutate(o)
      t.same([...openApi(o), ...cel(o)], [], `${what}: fine on create`)
      const errors = cel(o, story())
      t.equal(errors.length, 1, `an update may not change ${what}: ${errors.join('; ')}`)
      t.match(errors[0] ?? '', message)
    }
  }
)

t.test('the EphemeralJob hooks answer for the examples, and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'EphemeralJob')
  for (const { file, object } of examples.filter(d => d.object.kind === 'EphemeralJob')) {
    const parent = {
      ...clone(object),
      metadata: {
        ...object.metadata,
        namespace: 'default',
        uid: `uid-${String(object.metadata.name)}`,
        creationTimestamp: '2026-01-02T03:00:00Z',
        generation: 1
      }
    }
    const customize = await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/customize', payload: { parent } })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    t.same(
      customize.json().relatedResources,
      [{ apiVersion: 'v1', resource: 'pods', namespace: 'default', labelSelector: object.spec.selector }],
      `${file}: customize asks for the selected Pods of its namespace`
    )
    const targets = new Set<string>(object.spec.template.ephemeralContainers.map((c: Json) => c.targetContainerName))
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'pod-0',
        namespace: 'default',
        uid: 'pod-uid-0',
        creationTimestamp: '2026-01-02T02:00:00Z',
        labels: object.spec.selector.matchLabels
      },
      spec: { containers: [...targets].map(name => ({ name, image: 'busybox' })) },
      status: { phase: 'Running' }
    }
    const request = { parent, children: {}, related: { 'Pod.v1': { 'default/pod-0': pod } }, finalizing: false }
    const response = await app.inject({ method: 'POST', url: '/hooks/ephemeraljob/sync', payload: request })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.match(body.status, { phase: 'Waiting', match: 1, waiting: 1 }, `${file}: the Pod is chosen`)
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status fits the CRD's status schema`
    )
  }
})

// ---------------------------------------------------------------------------------------------
// OperationJob.

t.test('the OperationJob CRD: defaults, ranges, immutable action and targets, a partition that only grows', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
  const version = storageVersion(crd)
  t.same(
    version.additionalPrinterColumns.map((c: Json) => `${String(c.name)} ${String(c.jsonPath)}`),
    [
      'ACTION .spec.action',
      'PROGRESS .status.progress',
      'TOTAL .status.totalPodCount',
      'SUCCEEDED .status.succeededPodCount',
      'FAILED .status.failedPodCount',
      'AGE .metadata.creationTimestamp'
    ]
  )
  const root = version.schema.openAPIV3Schema
  const spec = root.properties.spec.properties
  t.equal(spec.activeDeadlineSeconds.default, 10800, 'deadline defaults to 3 h')
  t.equal(spec.TTLSecondsAfterFinished.default, 1800, 'TTL defaults to 30 min (capital T, as in the reference)')
  t.same(root.properties.status.properties.progress.enum, ['Pending', 'Processing', 'Failed', 'Succeeded', 'Invalid'])
  t.same(Object.keys(root.properties.status.properties.targetDetails.items.properties).sort(), [
    'endTime',
    'error',
    'extraInfo',
    'name',
    'progress',
    'startTime'
  ])
  const example = (): Json => clone(examples.find(d => d.object.kind === 'OperationJob')?.object)
  const openApi = (o: Json): string[] => openApiErrors(crd, o)
  const cel = (o: Json, old?: Json): string[] => celErrors(root, o, '', old)
  t.same([...openApi(example()), ...cel(example())], [], 'the example is valid')

  const schemaCases: Array<[string, (o: Json) => void]> = [
    [
      'no action',
      o => {
        delete o.spec.action
      }
    ],
    [
      'no targets',
      o => {
        delete o.spec.targets
      }
    ],
    [
      'an empty target list',
      o => {
        o.spec.targets = []
      }
    ],
    [
      'a target without a name',
      o => {
        o.spec.targets[0] = { containers: ['nginx'] }
      }
    ],
    [
      'two targets with one name (a list-map keyed by name)',
      o => {
        o.spec.targets[1].name = o.spec.targets[0].name
      }
    ],
    [
      'a negative partition',
      o => {
        o.spec.partition = -1
      }
    ],
    [
      'activeDeadlineSeconds 0',
      o => {
        o.spec.activeDeadlineSeconds = 0
      }
    ],
    [
      'TTLSecondsAfterFinished 0',
      o => {
        o.spec.TTLSecondsAfterFinished = 0
      }
    ],
    [
      'a camelCase ttlSecondsAfterFinished',
      o => {
        o.spec.ttlSecondsAfterFinished = 60
      }
    ],
    [
      'exec without an image',
      o => {
        delete o.spec.exec.image
      }
    ],
    [
      'an unknown progress',
      o => {
        o.status = { progress: 'Done' }
      }
    ]
  ]
  for (const [what, mutate] of schemaCases) {
    const o = example()
    mutate(o)
    t.not(openApi(o).length, 0, `the schema refuses ${what}`)
  }
  const celCases: Array<[string, (o: Json) => void, RegExp]> = [
    [
      'exec with both command and script',
      o => {
        o.spec.exec.command = ['true']
      },
      /exactly one of exec.command and exec.script/
    ],
    [
      'Exec without spec.exec',
      o => {
        delete o.spec.exec
      },
      /action Exec needs spec.exec/
    ]
  ]
  for (const [what, mutate, message] of celCases) {
    const o = example()
    mutate(o)
    t.same(openApi(o), [], `${what}: the OpenAPI schema alone lets it through`)
    const errors = cel(o)
    t.equal(errors.length, 1, `a CEL rule refuses ${what}: ${errors.join('; ')}`)
    t.match(errors[0] ?? '', message)
  }

  const allowed: Array<[string, (o: Json) => void]> = [
    [
      'a larger partition',
      o => {
        o.spec.partition = 3
      }
    ],
    ['the same partition', () => {}],
    [
      'the deadline',
      o => {
        o.spec.activeDeadlineSeconds = 60
      }
    ],
    [
      'the TTL',
      o => {
        o.spec.TTLSecondsAfterFinished = 60
      }
    ],
    [
      'operationDelaySeconds',
      o => {
        o.spec.operationDelaySeconds = 5
      }
    ]
  ]
  for (const [what, mutate] of allowed) {
    const o = example()
    mutate(o)
    t.same([...openApi(o), ...cel(o, example())], [], `an update may change ${what}`)
  }
  const noPartition = (): Json => {
    const o = example()
    delete o.spec.partition
    return o
  }
  t.same(cel(noPartition(), example()), [], 'removing partition grows it to all targets')
  t.match(
    cel(example(), noPartition()).join('; '),
    /may only grow/,
    'setting a partition below the target count on a job that had none narrows it: refused'
  )
  const all = example()
  all.spec.partition = all.spec.targets.length
  t.same(cel(all, noPartition()), [], 'setting it to every target is no change')
  const immutable: Array<[string, (o: Json) => void, RegExp]> = [
    [
      'the action',
      o => {
        o.spec.action = 'Replace'
      },
      /spec.action cannot change/
    ],
    [
      'a target',
      o => {
        o.spec.targets[2].name = 'nginx-9'
      },
      /spec.targets cannot change/
    ],
    [
      "a target's containers",
      o => {
        o.spec.targets[1].containers = ['nginx']
      },
      /spec.targets cannot change/
    ],
    [
      'the number of targets',
      o => {
        o.spec.targets.pop()
      },
      /spec.targets cannot change/
    ],
    [
      'a smaller partition',
      o => {
        o.spec.partition = 0
      },
      /may only grow/
    ]
  ]
  for (const [what, mutate, message] of immutable) {
    const o = example()
    mutate(o)
    t.same(openApi(o), [], `${what}: fine on create`)
    const errors = cel(o, example())
    t.equal(errors.length, 1, `an update may not change ${what}: ${errors.join('; ')}`)
    t.match(errors[0] ?? '', message)
  }
})

t.test(
  "the OperationJob CRD holds each action's own field: the Label example fits, and what Label refuses, the CRD refuses",
  async t => {
    const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
    const root = storageVersion(crd).schema.openAPIV3Schema
    const example = (): Json =>
      clone(
        examples.find(d => d.file === 'examples/operationjob-label.yaml' && d.object.kind === 'OperationJob')?.object
      )
    const errors = (o: Json): string[] => [...openApiErrors(crd, o), ...celErrors(root, o, '')]
    t.same(errors(example()), [], 'the example is valid')
    const refused: Array<[string, (o: Json) => void]> = [
      [
        'an action nobody registered',
        o => {
          o.spec.action = 'Relabel'
        }
      ],
      [
        'Label without spec.label',
        o => {
          delete o.spec.label
        }
      ],
      [
        'no labels',
        o => {
          o.spec.label.labels = {}
        }
      ],
      [
        'a value that is not a label value',
        o => {
          o.spec.label.labels.track = 'not ok'
        }
      ],
      [
        "a label of the service's own protocol",
        o => {
          o.spec.label.labels['jobhooks.io/to-replace'] = 'true'
        }
      ],
      [
        'overwrite as text',
        o => {
          o.spec.label.overwrite = 'yes'
        }
      ]
    ]
    for (const [what, mutate] of refused) {
      const o = example()
      mutate(o)
      t.not(errors(o).length, 0, `the CRD refuses ${what}`)
    }
    const allowed = example()
    allowed.spec.label.overwrite = true
    allowed.spec.label.labels['example.com/team'] = 'payments'
    t.same(errors(allowed), [], 'overwrite and a prefixed key are fine')
  }
)

t.test('the OperationJob hooks answer for the example, and the status fits the CRD', async t => {
  const crd = crds.find(c => c.spec.names.kind === 'OperationJob')
  for (const { file, object } of examples.filter(d => d.object.kind === 'OperationJob')) {
    const parent = {
      ...clone(object),
      metadata: {
        ...object.metadata,
        namespace: 'default',
        uid: `uid-${String(object.metadata.name)}`,
        creationTimestamp: '2026-01-02T03:00:00Z',
        generation: 1
      }
    }
    const customize = await app.inject({ method: 'POST', url: '/hooks/operationjob/customize', payload: { parent } })
    t.equal(customize.statusCode, 200, `${file}: customize answers`)
    const names = object.spec.targets.map((x: Json) => x.name)
    t.same(
      customize.json().relatedResources[0],
      { apiVersion: 'v1', resource: 'pods', namespace: 'default', names },
      `${file}: customize asks for the target Pods by name`
    )
    // The example's own Pods; a Replace example's targets are Pods of the CollaSet example.
    const own = examples
      .filter(d => d.file === file && d.object.kind === 'Pod' && names.includes(d.object.metadata.name))
      .map(d => clone(d.object))
    const collaSetPods = names.map((name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        labels: { app: 'foo' },
        ownerReferences: [
          { apiVersion: 'jobhooks.io/v1alpha1', kind: 'CollaSet', name: 'foo', uid: 'uid-foo', controller: true }
        ]
      }
    }))
    const pods = (own.length > 0 ? own : collaSetPods).map((p: Json) => ({
      ...p,
      metadata: { ...p.metadata, namespace: 'default', uid: `uid-${String(p.metadata.name)}` },
      status: { phase: 'Running' }
    }))
    t.same(
      pods.map((p: Json) => p.metadata.name),
      names,
      `${file}: the example brings its target Pods (or they are the CollaSet example's)`
    )
    const request = {
      parent,
      children: {},
      related: { 'Pod.v1': Object.fromEntries(pods.map((p: Json) => [`default/${String(p.metadata.name)}`, p])) },
      finalizing: false
    }
    const response = await app.inject({ method: 'POST', url: '/hooks/operationjob/sync', payload: request })
    t.equal(response.statusCode, 200, `${file}: sync answers`)
    const body = response.json()
    t.match(
      body.status,
      { progress: 'Processing', totalPodCount: names.length },
      `${file}: valid (${JSON.stringify(body.status.conditions)})`
    )
    t.equal(
      body.status.targetDetails.filter((d: Json) => d.progress === 'Processing').length,
      object.spec.partition,
      `${file}: partition targets start`
    )
    t.same(
      openApiErrors(crd, { ...object, status: body.status }),
      [],
      `${file}: the status fits the CRD's status schema`
    )
  }
})

t.test("the CollaSet CRD: the reference's columns, scale subresource, and what it refuses", async t => {
  const crd = crds.find(c => c.spec.names.kind === 'CollaSet')
  const version = storageVersion(crd)
  t.same(
    version.additionalPrinterColumns.map((c: Json) => c.name),
    [
      'DESIRED',
      'CURRENT',
      'AVAILABLE',
      'UPDATED',
      'UPDATED_READY',
      'UPDATED_AVAILABLE',
      'CURRENT_REVISION',
      'UPDATED_REVISION',
      'AGE'
    ]
  )
  t.same(version.subresources.scale, {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.selector'
  })
  const root = version.schema.openAPIV3Schema
  const example = examples.find(d => d.object.kind === 'CollaSet')?.object
  t.equal(example?.metadata.name, 'foo')
  t.equal(example?.spec.replicas, 2)
  const errors = (o: Json, old?: Json): string[] => [...openApiErrors(crd, o), ...celErrors(root, o, '', old)]
  t.same(errors(clone(example)), [], 'the example is valid')
  const cases: Array<[string, (o: Json) => void]> = [
    [
      'negative replicas',
      o => {
        o.spec.replicas = -1
      }
    ],
    [
      'no selector',
      o => {
        delete o.spec.selector
      }
    ],
    [
      'an empty selector',
      o => {
        o.spec.selector = {}
      }
    ],
    [
      'a selector that does not match the template',
      o => {
        o.spec.selector.matchLabels = { app: 'bar' }
      }
    ],
    [
      'no containers',
      o => {
        o.spec.template.spec.containers = []
      }
    ]
  ]
  for (const [what, mutate] of cases) {
    const o = clone(example)
    mutate(o)
    t.ok(errors(o).length > 0, `refused: ${what}`)
  }
  const moved = clone(example)
  moved.spec.selector.matchLabels = { app: 'foo', tier: 'web' }
  moved.spec.template.metadata.labels.tier = 'web'
  t.match(errors(moved, clone(example)), [/selector cannot change/], 'the selector cannot change')
  const scaled = clone(example)
  scaled.spec.replicas = 5
  scaled.spec.template.spec.containers[0].image = 'nginx:1.28'
  t.same(errors(scaled, clone(example)), [], 'replicas and the template may change')

  const parent = {
    ...clone(example),
    metadata: { ...example.metadata, namespace: 'default', uid: 'uid-foo', generation: 1 }
  }
  const { response } = syncCollaSet(
    { parent, children: { 'Pod.v1': {} }, related: {} },
    { now: NOW, scripts: new Map() as Json }
  )
  t.same(errors({ ...parent, status: response.status }), [], 'the status the hook writes fits the CRD')
  t.equal(response.children.length, 2)
})
