// The batch/v1 JobSpec as a structural OpenAPI schema, the kind a CRD holds, built from
// Kubernetes' OpenAPI models as @kubernetes/client-node ships them (kube-models.ts). CRD schemas
// have no `$ref`: every model is written out where it is used. Only what Kubernetes itself leaves
// free-form stays free-form (`x-kubernetes-int-or-string` for IntOrString and quantities,
// `x-kubernetes-preserve-unknown-fields` for untyped JSON such as managedFields' fieldsV1).
import { readModel, type Model, type ModelField } from './kube-models.js'

export interface Schema { [keyword: string]: unknown }

/**
 * Fields whose OpenAPI type is `resource.Quantity` (an int-or-string with a pattern), which
 * client-node types as plain strings: `cpu: 1` must be accepted as Kubernetes accepts it.
 * `<Model>.<field>`; a map's values are the quantities.
 */
export const QUANTITY_FIELDS: ReadonlySet<string> = new Set([
  'V1ResourceRequirements.limits', 'V1ResourceRequirements.requests',
  'V1VolumeResourceRequirements.limits', 'V1VolumeResourceRequirements.requests',
  'V1PodSpec.overhead', 'V1EmptyDirVolumeSource.sizeLimit', 'V1ResourceFieldSelector.divisor'
])

/** Kubernetes' pattern of a quantity written as a string (`500m`, `1Gi`, `1e3`). */
const QUANTITY_PATTERN = '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))' +
  '(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'

/** The longest description written: the first sentences of Kubernetes' text up to this length. */
export const DESCRIPTION_LENGTH = 120

/** Every model the JobSpec reaches, by name, each read once. */
export class ModelTable {
  readonly models = new Map<string, Model>()

  get (name: string): Model {
    let model = this.models.get(name)
    if (model === undefined) {
      model = readModel(name)
      this.models.set(name, model)
      for (const field of model.fields) {
        const reference = modelOf(field.type)
        if (reference !== undefined) this.get(reference)
      }
    }
    return model
  }
}

/** The model a client-node type refers to (`V1Container` in `Array<V1Container>`), if any. */
export function modelOf (type: string): string | undefined {
  const inner = /^Array<(.+)>$/.exec(type)?.[1] ?? /^\{ \[key: string\]: (.+); \}$/.exec(type)?.[1] ?? type
  return /^(V\d\w*|Core\w+)$/.test(inner) ? inner : undefined
}

/** A description short enough to keep the CRD within what `kubectl apply` can annotate. */
export function shorten (text: string | undefined): string | undefined {
  if (text === undefined || text.length <= DESCRIPTION_LENGTH) return text
  const sentences = text.match(/[^.]+(\.(?=\s|$)|$)\s*/g) ?? [text]
  let out = ''
  for (const sentence of sentences) {
    if (out !== '' && out.length + sentence.length > DESCRIPTION_LENGTH) break
    out += sentence
  }
  out = out.trim()
  if (out.length <= DESCRIPTION_LENGTH) return out
  const cut = out.slice(0, DESCRIPTION_LENGTH - 1)
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 1)).replace(/[\s,;:]+$/, '')}…`
}

function described (schema: Schema, description: string | undefined): Schema {
  const short = shorten(description)
  return short === undefined ? schema : { description: short, ...schema }
}

/** The schema of a value of client-node type `type` (`field` names it for the quantity list). */
function typeSchema (table: ModelTable, type: string, format: string, field: string): Schema {
  if (QUANTITY_FIELDS.has(field) && type === 'string') return quantity()
  const list = /^Array<(.+)>$/.exec(type)?.[1]
  if (list !== undefined) return { type: 'array', items: typeSchema(table, list, format, field) }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type)?.[1]
  if (map !== undefined) {
    const values = QUANTITY_FIELDS.has(field) ? quantity() : typeSchema(table, map, '', field)
    return { type: 'object', additionalProperties: values }
  }
  switch (type) {
    case 'string': return { type: 'string' }
    case 'boolean': return { type: 'boolean' }
    case 'Date': return { type: 'string', format: 'date-time' }
    case 'number':
      return format === 'int32' || format === 'int64' ? { type: 'integer', format } : { type: 'number' }
    case 'IntOrString': return { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }
    case 'any': return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }
  }
  const model = modelOf(type)
  if (model === undefined) throw new Error(`${field}: no schema for the client-node type ${type}`)
  return modelSchema(table, table.get(model))
}

function quantity (): Schema {
  return {
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN
  }
}

/** The object schema of a model: its fields, in the OpenAPI's order, and the required ones. */
export function modelSchema (table: ModelTable, model: Model): Schema {
  const properties: Record<string, Schema> = {}
  for (const field of model.fields) properties[field.name] = fieldSchema(table, model, field)
  const required = model.fields.filter(f => f.required).map(f => f.name)
  return { type: 'object', ...(required.length > 0 ? { required } : {}), properties }
}

/**
 * A field's schema with its description; a field Kubernetes does not describe takes its model's
 * (`podFailurePolicy` is described by PodFailurePolicy), and so do a list's object items.
 */
function fieldSchema (table: ModelTable, model: Model, field: ModelField): Schema {
  const schema = typeSchema(table, field.type, field.format, `${model.name}.${field.name}`)
  const reference = modelOf(field.type)
  const referenced = reference === undefined ? undefined : table.get(reference).description
  if (isRecord(schema.items) && schema.items.type === 'object') {
    schema.items = described(schema.items, referenced)
  }
  const description = field.description ?? referenced ?? `${field.name} (${model.name})`
  return described(schema, description)
}

function isRecord (value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The JobSpec's fields as schemas, by field name, and every model they reach. */
export function jobSpecSchemas (): { fields: Record<string, Schema>, table: ModelTable } {
  const table = new ModelTable()
  const schema = modelSchema(table, table.get('V1JobSpec'))
  return { fields: schema.properties as Record<string, Schema>, table }
}
