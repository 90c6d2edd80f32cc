// The manifests of manifests/, loaded once, and what checks them the way the API server would:
// OpenAPI schemas through ajv, CEL rules through cel-js (test/manifests/ uses them).
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { Ajv, type ValidateFunction } from 'ajv'
import { parse as parseCel } from '@marcbachmann/cel-js'

// Manifests are free-form YAML read at deep paths: typing each shape would restate the CRDs.
export type Json = any

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const MANIFESTS = join(ROOT, 'manifests')
export const NOW = new Date('2026-01-02T03:04:05.000Z')

export interface Doc {
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
export function loadManifests (): { docs: Doc[]; parseErrors: string[] } {
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

/** Every manifest document, loaded once per test process. */
export const { docs, parseErrors } = loadManifests()
export const ofKind = (kind: string, under?: string): Doc[] =>
  docs.filter(d => d.object.kind === kind && (under === undefined || d.file.startsWith(under)))
export const clone = <T>(value: T): T => structuredClone(value)

// CRDs: OpenAPI schemas through ajv, CEL rules through cel-js.

export const crds = ofKind('CustomResourceDefinition', 'crds/').map(d => d.object)
const crdFor = (apiVersion: string, kind: string): Json | undefined =>
  crds.find(crd => `${crd.spec.group}/${storageVersion(crd).name}` === apiVersion && crd.spec.names.kind === kind)

export function storageVersion (crd: Json): Json {
  return crd.spec.versions.find((v: Json) => v.storage === true)
}

/** A schema node and what is below it, depth first, with its path. */
export function * schemaNodes (schema: Json, path = ''): Generator<{ node: Json; path: string; ancestors: Json[] }> {
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
export function openApiErrors (crd: Json, object: Json): string[] {
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
export function compileRule (rule: string): (context: Record<string, unknown>) => unknown {
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
export function celErrors (schema: Json, value: unknown, path = '', old?: unknown): string[] {
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

export function crdErrors (object: Json): string[] {
  const crd = crdFor(object.apiVersion, object.kind)
  if (crd === undefined) return [`no CRD for ${object.kind} ${object.apiVersion}`]
  return [...openApiErrors(crd, object), ...celErrors(storageVersion(crd).schema.openAPIV3Schema, object)]
}

// Examples.

export const examples = docs.filter(d => d.file.startsWith('examples/'))
export const exampleJobFlows = examples.filter(d => d.object.kind === 'JobFlow')
export const fiveJobs = (): Json =>
  clone(exampleJobFlows.find(d => d.object.metadata.name === 'jobflow-example')?.object)

/** The Service of deploy/, which the CompositeControllers call. */
export const services = ofKind('Service', 'deploy/').map(d => d.object)

/** A sync request for an example as Metacontroller would send it on the first pass. */
export function firstSync (parent: Json, file: string): Json {
  const namespace = 'default'
  const related = (kind: string): Json => Object.fromEntries(
    examples.filter(d => d.file === file && d.object.kind === kind).map(d => [
      `${namespace}/${String(d.object.metadata.name)}`,
      { ...clone(d.object), metadata: { ...d.object.metadata, namespace, generation: 1 } }
    ])
  )
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
      'JobTemplate.jobhooks.io/v1alpha1': related('JobTemplate'),
      'JobFlowTemplate.jobhooks.io/v1alpha1': related('JobFlowTemplate')
    },
    finalizing: false
  }
}
