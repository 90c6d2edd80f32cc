// A custom resource checked against its CRD version's `openAPIV3Schema` as the API server checks
// it on create (k8s.io/apiextensions-apiserver and kube-openapi's validate, Kubernetes 1.36):
// unknown fields (strict field validation), then metadata.name, the schema's keywords, list
// types, and (when none of those is blocking: a missing, unsupported, too long, too many or
// mistyped value) the CEL rules of `x-kubernetes-validations`, each error in the API server's words
// (field-errors.ts). Patterns run on RE2 (re2js), as Go's regexp runs them, in linear time. CEL
// is not known here: the caller passes a RuleEvaluator (the CLI's runs the project's budgeted CEL).
import { RE2JS } from 're2js'
import { atMostBytes, atMostItems, OMIT, supportedValues, type FieldError } from './field-errors.js'
import { checkRules, type RuleEvaluator } from './schema-rules.js'
import { applyDefaults, childPath, entrySchema, prune, type JSONSchemaProps } from './schema-shape.js'
import { isRecord } from './types.js'

export type { RuleEvaluator, RuleOutcome } from './schema-rules.js'
export type { JSONSchemaProps, ValidationRule } from './schema-shape.js'

export interface ValidationResult {
  /** Fields the schema does not know, by path: `kubectl apply --validate=strict` refuses them. */
  unknownFields: string[]
  /** What the API server would refuse the object for, in its order. */
  errors: FieldError[]
  /** What could not be checked (a rule the CEL library cannot compile, a pattern RE2 refuses). */
  warnings: string[]
}

export interface ValidateOptions {
  rules?: RuleEvaluator
  /** The CRD has the status subresource: a create drops `status` before anything else. */
  statusSubresource?: boolean
  /** The scale subresource's `specReplicasPath` (`.spec.replicas`): its value must be a count. */
  specReplicasPath?: string
}

/** Checks `object` (not changed) as the API server checks a create against `schema`. */
export function validateCustomResource (
  object: Record<string, unknown>, schema: JSONSchemaProps, options: ValidateOptions = {}
): ValidationResult {
  const copy = structuredClone(object)
  if (options.statusSubresource === true) delete copy.status
  const unknownFields = prune(copy, schema)
  applyDefaults(copy, schema)
  const warnings = new Set<string>()
  const errors = [...metadataErrors(copy.metadata)]
  // A bad name is refused alone: the tier's API server (1.36) says nothing of the rest then.
  if (errors.length > 0) return { unknownFields, errors, warnings: [] }
  const walk: Walk = { errors, warnings, patterns: new Map() }
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    if (key === 'metadata' || key === 'apiVersion' || key === 'kind') continue
    if (copy[key] !== undefined) validateNode(copy[key], field, key, walk)
  }
  for (const key of schema.required ?? []) {
    if (copy[key] === undefined) errors.push({ type: 'Required', field: key })
  }
  errors.push(...listTypeErrors(copy, schema, ''), ...scaleErrors(copy, options.specReplicasPath))
  if (!hasRules(schema)) return { unknownFields, errors, warnings: [...warnings] }
  if (errors.some(e => BLOCKING.has(e.type))) {
    errors.push({ type: 'Invalid', field: '<nil>', value: null, detail: RULES_NOT_CHECKED })
  } else if (options.rules !== undefined) {
    errors.push(...checkRules(copy, schema, { evaluator: options.rules, warnings }))
  }
  return { unknownFields, errors, warnings: [...warnings] }
}

/**
 * The scale subresource's check of a create: the replicas its `specReplicasPath` names, when
 * present, are a count (the API server's words, on the path as the CRD writes it).
 */
function scaleErrors (object: Record<string, unknown>, path: string | undefined): FieldError[] {
  if (path === undefined) return []
  let value: unknown = object
  for (const key of path.replace(/^\./, '').split('.')) value = isRecord(value) ? value[key] : undefined
  if (value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 0)) return []
  return [{ type: 'Invalid', field: path, value, detail: 'should be a non-negative integer' }]
}

/** Errors after which the API server runs no CEL rule (its customresource strategy's hasBlockingErr). */
const BLOCKING = new Set<FieldError['type']>(['NotSupported', 'Required', 'TooLong', 'TooMany', 'TypeInvalid'])
const RULES_NOT_CHECKED = 'some validation rules were not checked because the object was invalid; ' +
  'correct the existing errors to complete validation'

/** Whether any node of the schema has CEL rules (else the API server has no rule validator for it). */
function hasRules (schema: JSONSchemaProps): boolean {
  if ((schema['x-kubernetes-validations'] ?? []).length > 0) return true
  const entries = entrySchema(schema)
  return Object.values(schema.properties ?? {}).some(hasRules) ||
    (schema.items !== undefined && hasRules(schema.items)) || (entries !== undefined && hasRules(entries))
}

interface Walk {
  errors: FieldError[]
  warnings: Set<string>
  patterns: Map<string, RE2JS | undefined>
}

const DNS_SUBDOMAIN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'
const DNS_SUBDOMAIN_RE2 = RE2JS.compile(`^${DNS_SUBDOMAIN}$`)
const DNS_SUBDOMAIN_MESSAGE = 'a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, ' +
  "'-' or '.', and must start and end with an alphanumeric character " +
  `(e.g. 'example.com', regex used for validation is '${DNS_SUBDOMAIN}')`

/** metadata.name as the API server checks a custom resource's: present, a DNS subdomain. */
export function metadataErrors (metadata: unknown): FieldError[] {
  const meta = isRecord(metadata) ? metadata : {}
  const name = typeof meta.name === 'string' ? meta.name : ''
  if (name === '') {
    return typeof meta.generateName === 'string' && meta.generateName !== ''
      ? []
      : [{ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' }]
  }
  const errors: FieldError[] = []
  if (name.length > 253) {
    errors.push({ type: 'Invalid', field: 'metadata.name', value: name, detail: 'must be no more than 253 characters' })
  }
  if (!DNS_SUBDOMAIN_RE2.test(name)) {
    errors.push({ type: 'Invalid', field: 'metadata.name', value: name, detail: DNS_SUBDOMAIN_MESSAGE })
  }
  return errors
}

/** The JSON type kube-openapi sees in a value: integer for a whole number. */
export function jsonType (value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value === 'object' ? 'object' : typeof value
}

function typeProblem (value: unknown, schema: JSONSchemaProps, path: string): FieldError | undefined {
  const types = schema['x-kubernetes-int-or-string'] === true
    ? ['integer', 'string']
    : schema.type !== undefined ? [schema.type] : []
  if (types.length === 0) return undefined
  const actual = jsonType(value)
  if (actual === 'null' && schema.nullable === true) return undefined
  if (types.includes(actual) || (actual === 'integer' && types.includes('number'))) return undefined
  return {
    type: 'TypeInvalid',
    field: path,
    value: actual,
    detail: `${path} in body must be of type ${types.join(',')}: ${JSON.stringify(actual)}`
  }
}

function validateNode (value: unknown, schema: JSONSchemaProps, path: string, walk: Walk): void {
  const typeError = typeProblem(value, schema, path)
  if (typeError !== undefined) {
    walk.errors.push(typeError)
    return
  }
  if (value === null) return
  if (Array.isArray(value)) arrayErrors(value, schema, path, walk)
  if (schema.enum !== undefined && !schema.enum.some(allowed => sameJson(allowed, value))) {
    walk.errors.push({ type: 'NotSupported', field: path, value, detail: supportedValues(schema.enum) })
  }
  if (isRecord(value)) objectErrors(value, schema, path, walk)
  if (typeof value === 'string') stringErrors(value, schema, path, walk)
  if (typeof value === 'number') walk.errors.push(...numberErrors(value, schema, path))
}

function sameJson (a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

function arrayErrors (value: unknown[], schema: JSONSchemaProps, path: string, walk: Walk): void {
  const items = schema.items
  if (items !== undefined) value.forEach((item, i) => { validateNode(item, items, `${path}[${i}]`, walk) })
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    const detail = `${path} in body should have at least ${schema.minItems} items`
    walk.errors.push({ type: 'Invalid', field: path, value: value.length, detail })
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    walk.errors.push({ type: 'TooMany', field: path, value: value.length, detail: atMostItems(schema.maxItems) })
  }
}

function objectErrors (value: Record<string, unknown>, schema: JSONSchemaProps, path: string, walk: Walk): void {
  const count = Object.keys(value).length
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    const detail = `${path} in body should have at least ${schema.minProperties} properties`
    walk.errors.push({ type: 'Invalid', field: path, value: count, detail })
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    walk.errors.push({ type: 'TooMany', field: path, value: count, detail: atMostItems(schema.maxProperties) })
  }
  const entries = schema.properties === undefined ? entrySchema(schema) : undefined
  for (const [key, field] of Object.entries(value)) {
    const known = schema.properties?.[key] ?? entries
    if (known !== undefined) validateNode(field, known, childPath(path, key), walk)
  }
  for (const key of schema.required ?? []) {
    if (value[key] === undefined) walk.errors.push({ type: 'Required', field: childPath(path, key) })
  }
}

function stringErrors (value: string, schema: JSONSchemaProps, path: string, walk: Walk): void {
  const length = [...value].length
  if (schema.minLength !== undefined && length < schema.minLength) {
    walk.errors.push({
      type: 'Invalid', field: path, value, detail: `${path} in body should be at least ${schema.minLength} chars long`
    })
  }
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    walk.errors.push({ type: 'TooLong', field: path, detail: atMostBytes(schema.maxLength) })
  }
  if (schema.pattern === undefined) return
  const pattern = compiled(schema.pattern, walk)
  if (pattern !== undefined && !pattern.test(value)) {
    const detail = `${path} in body should match '${schema.pattern}'`
    walk.errors.push({ type: 'Invalid', field: path, value, detail })
  }
}

/** A schema's pattern on RE2, compiled once per walk; one RE2 refuses is a warning, not an error. */
function compiled (pattern: string, walk: Walk): RE2JS | undefined {
  if (!walk.patterns.has(pattern)) {
    try {
      walk.patterns.set(pattern, RE2JS.compile(pattern))
    } catch (error) {
      walk.patterns.set(pattern, undefined)
      walk.warnings.add(`cannot check pattern '${pattern}': ${(error as Error).message.split('\n')[0] ?? ''}`)
    }
  }
  return walk.patterns.get(pattern)
}

function numberErrors (value: number, schema: JSONSchemaProps, path: string): FieldError[] {
  const errors: FieldError[] = []
  const { minimum, maximum } = schema
  if (maximum !== undefined && (schema.exclusiveMaximum === true ? value >= maximum : value > maximum)) {
    const words = schema.exclusiveMaximum === true ? 'less than' : 'less than or equal to'
    errors.push({ type: 'Invalid', field: path, value, detail: `${path} in body should be ${words} ${maximum}` })
  }
  if (minimum !== undefined && (schema.exclusiveMinimum === true ? value <= minimum : value < minimum)) {
    const words = schema.exclusiveMinimum === true ? 'greater than' : 'greater than or equal to'
    errors.push({ type: 'Invalid', field: path, value, detail: `${path} in body should be ${words} ${minimum}` })
  }
  return errors
}

/** Duplicates in `x-kubernetes-list-type: set` and `map` lists (the API server's listtype check). */
function listTypeErrors (value: unknown, schema: JSONSchemaProps, path: string): FieldError[] {
  if (Array.isArray(value)) {
    const items = schema.items
    return [
      ...duplicates(value, schema, path),
      ...(items !== undefined ? value.flatMap((item, i) => listTypeErrors(item, items, `${path}[${i}]`)) : [])
    ]
  }
  if (!isRecord(value)) return []
  const entries = schema.properties === undefined ? entrySchema(schema) : undefined
  return Object.entries(value).flatMap(([key, field]) => {
    const known = schema.properties?.[key] ?? entries
    return known !== undefined ? listTypeErrors(field, known, childPath(path, key)) : []
  })
}

function duplicates (list: unknown[], schema: JSONSchemaProps, path: string): FieldError[] {
  const listType = schema['x-kubernetes-list-type']
  if (listType !== 'set' && listType !== 'map') return []
  const keys = schema['x-kubernetes-list-map-keys'] ?? []
  const identity = (item: unknown): unknown => listType === 'set' || !isRecord(item)
    ? item
    : Object.fromEntries(keys.filter(k => item[k] !== undefined).map(k => [k, item[k]]))
  const seen = new Set<string>()
  const errors: FieldError[] = []
  list.forEach((item, i) => {
    const id = identity(item)
    const text = JSON.stringify(id)
    if (seen.has(text)) errors.push({ type: 'Duplicate', field: `${path}[${i}]`, value: id })
    seen.add(text)
  })
  return errors
}

export { OMIT }
