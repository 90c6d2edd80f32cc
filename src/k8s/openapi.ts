// Structural OpenAPI v3 schemas, the kind a CustomResourceDefinition holds, and a check of a value
// against one. An OperationJob action declares the schema of its own spec field once: the CRD
// carries it (src/cli/operationjob-crd.ts writes it there), so the API server refuses a bad spec
// at `kubectl apply`, and the hook checks the same schema, so a spec that never went through
// admission (the simulator, a fixture, an older CRD) gets the same answer instead of a crash.
//
// The check covers the keywords below, as the API server reads them. CEL rules
// (`x-kubernetes-validations`) are the API server's alone: what they say, an action's `validate`
// says again in the hook when it matters.
import { isRecord } from './types.js'

export interface CelRule {
  rule: string
  message: string
}

/** A structural schema: every node says its type; an object has properties or additionalProperties. */
export interface StructuralSchema {
  type: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean'
  description?: string
  properties?: Record<string, StructuralSchema>
  required?: string[]
  additionalProperties?: StructuralSchema
  minProperties?: number
  maxProperties?: number
  items?: StructuralSchema
  minItems?: number
  maxItems?: number
  enum?: Array<string | number>
  minLength?: number
  maxLength?: number
  pattern?: string
  minimum?: number
  maximum?: number
  'x-kubernetes-validations'?: CelRule[]
}

const TYPE_WORDS: Record<StructuralSchema['type'], string> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false'
}

function hasType (value: unknown, type: StructuralSchema['type']): boolean {
  switch (type) {
    case 'object': return isRecord(value)
    case 'array': return Array.isArray(value)
    case 'string': return typeof value === 'string'
    case 'integer': return Number.isInteger(value)
    case 'number': return typeof value === 'number' && Number.isFinite(value)
    case 'boolean': return typeof value === 'boolean'
  }
}

/** Whether `count` is inside [min, max]; the words for what went wrong otherwise. */
function outOfBounds (
  count: number,
  min: number | undefined,
  max: number | undefined,
  unit: string
): string | undefined {
  if (min !== undefined && count < min) return `must have at least ${min} ${unit}`
  if (max !== undefined && count > max) return `must have at most ${max} ${unit}`
  return undefined
}

function scalarProblem (value: unknown, schema: StructuralSchema): string | undefined {
  if (schema.enum !== undefined && !schema.enum.includes(value as string | number)) {
    return `must be one of ${schema.enum.join(', ')}`
  }
  if (typeof value === 'string') {
    const length = outOfBounds([...value].length, schema.minLength, schema.maxLength, 'characters')
    if (length !== undefined) return length
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
      return `must match ${schema.pattern}`
    }
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `must be at least ${schema.minimum}`
    if (schema.maximum !== undefined && value > schema.maximum) return `must be at most ${schema.maximum}`
  }
  return undefined
}

/** What is wrong with `value` against `schema`, each problem prefixed with where (`spec.exec.image`). */
export function schemaProblems (value: unknown, schema: StructuralSchema, where: string): string[] {
  if (!hasType(value, schema.type)) return [`${where} must be ${TYPE_WORDS[schema.type]}`]
  if (Array.isArray(value)) {
    const count = outOfBounds(value.length, schema.minItems, schema.maxItems, 'items')
    const items = schema.items
    return [
      ...(count !== undefined ? [`${where} ${count}`] : []),
      ...(items !== undefined ? value.flatMap((item, i) => schemaProblems(item, items, `${where}[${i}]`)) : [])
    ]
  }
  if (isRecord(value)) return objectProblems(value, schema, where)
  const problem = scalarProblem(value, schema)
  return problem !== undefined ? [`${where} ${problem}`] : []
}

function objectProblems (value: Record<string, unknown>, schema: StructuralSchema, where: string): string[] {
  const problems: string[] = []
  const count = outOfBounds(Object.keys(value).length, schema.minProperties, schema.maxProperties, 'entries')
  if (count !== undefined) problems.push(`${where} ${count}`)
  for (const key of schema.required ?? []) {
    if (value[key] === undefined || value[key] === null) problems.push(`${where}.${key} is required`)
  }
  for (const [key, field] of Object.entries(value)) {
    // A null is no value: the API server drops it from a field that is not nullable.
    if (field === undefined || field === null) continue
    const known = schema.properties?.[key]
    if (known !== undefined) problems.push(...schemaProblems(field, known, `${where}.${key}`))
    // A map's entries (any key) are named the way kubectl names them; an unknown field is not an
    // error: the API server prunes it, so it never reaches a hook.
    else if (schema.properties === undefined && schema.additionalProperties !== undefined) {
      problems.push(...schemaProblems(field, schema.additionalProperties, `${where}[${JSON.stringify(key)}]`))
    }
  }
  return problems
}
