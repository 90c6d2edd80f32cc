// The CEL rules of a CRD schema (`x-kubernetes-validations`), walked as the API server walks them
// (apiextensions-apiserver schema/cel): at every node the object has, `self` bound to the node's
// value, integers as CEL ints; a rule that reads `oldSelf` is a transition rule, which a create
// does not run. Errors in its words: `spec.flows[0]: Invalid value: <message>` (an object's or a
// list's value left out), or Forbidden, Required, Duplicate as the rule's `reason` says. The CEL
// itself is the caller's (k8s/ knows none): a RuleEvaluator, with a cost budget per object.
import { OMIT, type FieldError } from './field-errors.js'
import { childPath, entrySchema, type JSONSchemaProps, type ValidationRule } from './schema-shape.js'
import { isRecord } from './types.js'

/** What evaluating one expression gave: a value and its cost, an error, or "cannot check" (a warning). */
export type RuleOutcome =
  | { ok: true, value: unknown, cost: number }
  | { ok: false, error: string, overLimit: boolean, cost: number }
  | { cannotCheck: string }

export interface RuleEvaluator {
  /** Evaluates `expression` with `self` bound, stopping once it has cost `budget`. */
  evaluate: (expression: string, self: unknown, budget: number) => RuleOutcome
  /** The cost all the rules of one object may spend together. */
  objectBudget: number
}

interface RuleWalk {
  evaluator: RuleEvaluator
  warnings: Set<string>
  errors: FieldError[]
  spent: number
  stopped: boolean
}

/** Every rule's error over `object` (already pruned and defaulted). */
export function checkRules (
  object: Record<string, unknown>, schema: JSONSchemaProps,
  options: { evaluator: RuleEvaluator, warnings: Set<string> }
): FieldError[] {
  const walk: RuleWalk = { ...options, errors: [], spent: 0, stopped: false }
  rulesAt(object, schema, '', walk)
  return walk.errors
}

function rulesAt (value: unknown, schema: JSONSchemaProps, path: string, walk: RuleWalk): void {
  if (walk.stopped || value === undefined || value === null) return
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (/\boldSelf\b/.test(rule.rule)) continue
    checkRule(rule, value, schema, path, walk)
    if (walk.stopped) return
  }
  if (Array.isArray(value)) {
    const items = schema.items
    if (items !== undefined) value.forEach((item, i) => { rulesAt(item, items, `${path}[${i}]`, walk) })
  } else if (isRecord(value)) {
    const entries = schema.properties === undefined ? entrySchema(schema) : undefined
    for (const [key, field] of Object.entries(value)) {
      if (path === '' && (key === 'metadata' || key === 'apiVersion' || key === 'kind')) continue
      const known = schema.properties?.[key] ?? entries
      if (known !== undefined) rulesAt(field, known, childPath(path, key), walk)
    }
  }
}

/** `<nil>` is how the API server prints the root's path. */
function shownPath (path: string): string {
  return path === '' ? '<nil>' : path
}

function ruleErrorString (rule: ValidationRule): string {
  return rule.message !== undefined && rule.message.trim() !== '' ? rule.message.trim() : rule.rule.trim()
}

function checkRule (rule: ValidationRule, value: unknown, schema: JSONSchemaProps, path: string, walk: RuleWalk): void {
  const type = schema.type ?? 'object'
  const remaining = walk.evaluator.objectBudget - walk.spent
  const outOfBudget = (): void => {
    walk.errors.push({
      type: 'Invalid',
      field: shownPath(path),
      value: type,
      detail: 'validation failed due to running out of cost budget, no further validation rules will be run'
    })
    walk.stopped = true
  }
  if (remaining <= 0) return outOfBudget()
  const self = celValue(value, schema)
  const outcome = walk.evaluator.evaluate(rule.rule, self, remaining)
  if ('cannotCheck' in outcome) {
    walk.warnings.add(`cannot check rule ${JSON.stringify(rule.rule)}: ${outcome.cannotCheck}`)
    return
  }
  walk.spent += outcome.cost
  if (!outcome.ok) {
    if (outcome.overLimit) return outOfBudget()
    const detail = `${outcome.error} evaluating rule: ${ruleErrorString(rule)}`
    walk.errors.push({ type: 'Invalid', field: shownPath(path), value: type, detail })
    return
  }
  if (outcome.value === true) return
  const detail = messageOf(rule, self, walk) ?? (rule.message !== undefined && rule.message.trim() !== ''
    ? rule.message.trim()
    : `failed rule: ${ruleErrorString(rule)}`)
  const at = rule.fieldPath !== undefined ? childPath(path, rule.fieldPath.replace(/^\./, '')) : path
  const shown = type === 'object' || type === 'array' ? OMIT : value
  walk.errors.push(reasonError(rule.reason, shownPath(at), shown, detail))
}

/** The rule's messageExpression, when it gives a non-empty string of one line. */
function messageOf (rule: ValidationRule, self: unknown, walk: RuleWalk): string | undefined {
  if (rule.messageExpression === undefined) return undefined
  const outcome = walk.evaluator.evaluate(rule.messageExpression, self, walk.evaluator.objectBudget - walk.spent)
  if ('cannotCheck' in outcome) {
    const expression = JSON.stringify(rule.messageExpression)
    walk.warnings.add(`cannot check messageExpression ${expression}: ${outcome.cannotCheck}`)
    return undefined
  }
  walk.spent += outcome.cost
  if (!outcome.ok || typeof outcome.value !== 'string') return undefined
  const message = outcome.value.trim()
  return message === '' || message.includes('\n') ? undefined : message
}

function reasonError (reason: string | undefined, field: string, value: unknown, detail: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden': return { type: 'Forbidden', field, detail }
    case 'FieldValueRequired': return { type: 'Required', field, detail }
    case 'FieldValueDuplicate': return { type: 'Duplicate', field, value }
    default: return { type: 'Invalid', field, value, detail }
  }
}

/** A value as CEL sees it: the schema's integers as ints (bigint), the rest as it is. */
export function celValue (value: unknown, schema: JSONSchemaProps | undefined): unknown {
  if (schema === undefined) return value
  if (typeof value === 'number' && Number.isInteger(value) &&
    (schema.type === 'integer' || schema['x-kubernetes-int-or-string'] === true)) {
    return BigInt(value)
  }
  if (Array.isArray(value)) return value.map(item => celValue(item, schema.items))
  if (isRecord(value)) {
    const entries = schema.properties === undefined ? entrySchema(schema) : undefined
    if (schema.properties === undefined && entries === undefined) return value
    return Object.fromEntries(Object.entries(value).map(([key, field]) =>
      [key, celValue(field, schema.properties?.[key] ?? entries)]))
  }
  return value
}
