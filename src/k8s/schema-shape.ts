// What the API server does to a custom resource before it validates it, by its CRD version's
// `openAPIV3Schema` (k8s.io/apiextensions-apiserver, schema/pruning and schema/defaulting):
// unknown fields are pruned (and named, for `kubectl apply --validate=strict`), nulls of fields
// that are not nullable are dropped, and defaults are filled in. The walks follow the schema, so
// they go no deeper than it does, whatever the object's own depth.
import { isRecord } from './types.js'

/** A node of a CRD's structural schema, with the keywords the API server reads. */
export interface JSONSchemaProps {
  type?: string
  description?: string
  properties?: Record<string, JSONSchemaProps>
  required?: string[]
  additionalProperties?: JSONSchemaProps | boolean
  items?: JSONSchemaProps
  enum?: unknown[]
  pattern?: string
  format?: string
  minimum?: number
  maximum?: number
  exclusiveMinimum?: boolean
  exclusiveMaximum?: boolean
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  minProperties?: number
  maxProperties?: number
  nullable?: boolean
  default?: unknown
  'x-kubernetes-preserve-unknown-fields'?: boolean
  'x-kubernetes-int-or-string'?: boolean
  'x-kubernetes-embedded-resource'?: boolean
  'x-kubernetes-list-type'?: string
  'x-kubernetes-list-map-keys'?: string[]
  'x-kubernetes-validations'?: ValidationRule[]
}

/** One CEL rule of `x-kubernetes-validations`. */
export interface ValidationRule {
  rule: string
  message?: string
  messageExpression?: string
  fieldPath?: string
  reason?: string
  optionalOldSelf?: boolean
}

/** Fields every embedded resource (and the root) has beside its schema's. */
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata'])

/** The fields of an ObjectMeta (apimachinery's meta/v1): any other in the root's metadata is unknown. */
const OBJECT_META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers',
  'managedFields'
])

export function childPath (path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}

/** The schema of a map's entries, if the node is a map. */
export function entrySchema (schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const additional = schema.additionalProperties
  if (additional === true) return { 'x-kubernetes-preserve-unknown-fields': true }
  return isRecord(additional) ? additional : undefined
}

function preserves (schema: JSONSchemaProps | undefined): boolean {
  return schema?.['x-kubernetes-preserve-unknown-fields'] === true
}

/**
 * Removes the fields the schema does not know from `value`, and returns their paths, sorted
 * (`spec.flows[1].dependecies`), as the API server's strict field validation names them.
 */
export function prune (value: unknown, schema: JSONSchemaProps, root = true): string[] {
  const unknown: string[] = []
  const embedded = root || schema['x-kubernetes-embedded-resource'] === true
  pruneNode(value, { ...schema, 'x-kubernetes-embedded-resource': embedded }, '', unknown)
  const metadata = isRecord(value) ? value.metadata : undefined
  if (root && isRecord(metadata)) {
    for (const key of Object.keys(metadata).filter(k => !OBJECT_META_FIELDS.has(k))) {
      unknown.push(`metadata.${key}`)
      delete metadata[key]
    }
  }
  return unknown.sort()
}

function pruneNode (value: unknown, schema: JSONSchemaProps | undefined, path: string, unknown: string[]): void {
  const keep = preserves(schema)
  if (Array.isArray(value)) {
    if (keep && schema?.items === undefined) return
    value.forEach((item, i) => { pruneNode(item, schema?.items, `${path}[${i}]`, unknown) })
    return
  }
  if (!isRecord(value)) return
  for (const key of Object.keys(value)) {
    if (schema?.['x-kubernetes-embedded-resource'] === true && META_FIELDS.has(key)) continue
    const known = schema?.properties?.[key] ?? (schema !== undefined ? entrySchema(schema) : undefined)
    if (known !== undefined) {
      pruneNode(value[key], known, childPath(path, key), unknown)
    } else if (!keep) {
      unknown.push(childPath(path, key))
      delete value[key]
    }
  }
}

/**
 * Fills in the schema's defaults where a field is absent, after dropping the nulls of fields
 * that are neither nullable nor defaulted (the API server does both before it validates).
 */
export function applyDefaults (value: unknown, schema: JSONSchemaProps): void {
  if (Array.isArray(value)) {
    const items = schema.items
    if (items !== undefined) for (const item of value) applyDefaults(item, items)
    return
  }
  if (!isRecord(value)) return
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    if (value[key] === null && field.nullable !== true) {
      delete value[key]
    }
    if (value[key] === undefined && field.default !== undefined) value[key] = structuredClone(field.default)
    if (value[key] !== undefined) applyDefaults(value[key], field)
  }
  const entries = schema.properties === undefined ? entrySchema(schema) : undefined
  if (entries !== undefined) for (const entry of Object.values(value)) applyDefaults(entry, entries)
}
