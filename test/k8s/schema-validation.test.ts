// The validator of CRD schemas on small schemas, each keyword and each message in the API
// server's words (Kubernetes 1.36: apimachinery's field errors, kube-openapi's details).
import t from 'tap'
import { fieldErrorText } from '../../src/k8s/field-errors.js'
import {
  validateCustomResource, type JSONSchemaProps, type RuleEvaluator, type RuleOutcome
} from '../../src/k8s/schema-validation.js'

function root (spec: JSONSchemaProps): JSONSchemaProps {
  const properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec }
  return { type: 'object', properties }
}

interface Checked { unknown: string[], errors: string[] }

function check (spec: unknown, schema: JSONSchemaProps, rules?: RuleEvaluator): Checked {
  const object = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'x' }, spec }
  const result = validateCustomResource(object, root(schema), rules !== undefined ? { rules } : {})
  return { unknown: result.unknownFields, errors: result.errors.map(fieldErrorText) }
}

t.test('unknown fields: named by path, sorted; kept where the schema preserves them', async t => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      flows: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { n: { type: 'object' } } },
      labels: { type: 'object', additionalProperties: { type: 'string' } }
    }
  }
  const spec = {
    flows: [{ name: 'a' }, { name: 'b', dependecies: ['a'] }], zzz: 1, free: { any: 1, n: { x: 1 } }, labels: { a: 'b' }
  }
  t.same(check(spec, schema).unknown, ['spec.flows[1].dependecies', 'spec.free.n.x', 'spec.zzz'])
  t.same(check(spec, schema).errors, [])
  const object = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'x', label: { a: 'b' } }, spec: {} }
  t.same(validateCustomResource(object, root(schema)).unknownFields, ['metadata.label'], 'ObjectMeta\'s own fields')
})

t.test('types, required, enum', async t => {
  const schema: JSONSchemaProps = {
    type: 'object',
    required: ['flows'],
    properties: {
      parallelism: { type: 'integer' },
      ratio: { type: 'number' },
      failurePolicy: { type: 'string', enum: ['FailFast', 'Continue'] },
      size: { 'x-kubernetes-int-or-string': true },
      flows: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
      maybe: { type: 'string', nullable: true }
    }
  }
  const spec = { parallelism: 'string', failurePolicy: 'Stop', flows: [{}], ratio: 2, size: true, maybe: null }
  t.same(check(spec, schema).errors, [
    'spec.parallelism: Invalid value: "string": spec.parallelism in body must be of type integer: "string"',
    'spec.failurePolicy: Unsupported value: "Stop": supported values: "FailFast", "Continue"',
    'spec.flows[0].name: Required value',
    'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"'
  ], 'in the order of the object\'s fields')
  t.same(check({ parallelism: 1.5, flows: [] }, schema).errors, [
    'spec.parallelism: Invalid value: "number": spec.parallelism in body must be of type integer: "number"'
  ])
  t.same(check({}, schema).errors, ['spec.flows: Required value'])
  t.same(check(undefined, schema).errors, [], 'no spec: the root requires none here')
})

t.test('bounds: lengths, items, properties, numbers, patterns on RE2', async t => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z]+$' },
      list: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'integer', minimum: 0, maximum: 20 } },
      few: { type: 'array', minItems: 1, items: { type: 'string' } },
      map: { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: { type: 'string' } },
      empty: { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } },
      ex: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true }
    }
  }
  const spec = { name: 'ABCD', list: [1, -1, 30], few: [], map: { a: 'x', b: 'y' }, empty: {}, ex: 1 }
  t.same(check(spec, schema).errors, [
    'spec.name: Too long: may not be more than 3 bytes',
    "spec.name: Invalid value: \"ABCD\": spec.name in body should match '^[a-z]+$'",
    'spec.list[1]: Invalid value: -1: spec.list[1] in body should be greater than or equal to 0',
    'spec.list[2]: Invalid value: 30: spec.list[2] in body should be less than or equal to 20',
    'spec.list: Too many: 3: must have at most 2 items',
    'spec.few: Invalid value: 0: spec.few in body should have at least 1 items',
    'spec.map: Too many: 2: must have at most 1 item',
    'spec.empty: Invalid value: 0: spec.empty in body should have at least 1 properties',
    'spec.ex: Invalid value: 1: spec.ex in body should be less than 1'
  ])
  t.same(check({ name: 'a' }, schema).errors, [
    'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'
  ])
})

t.test('list types: duplicates of a set and of a map\'s keys', async t => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      flows: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, x: { type: 'integer' } } }
      }
    }
  }
  t.same(check({ tags: ['a', 'b', 'a'], flows: [{ name: 'a', x: 1 }, { name: 'a', x: 2 }] }, schema).errors, [
    'spec.tags[2]: Duplicate value: "a"',
    'spec.flows[1]: Duplicate value: {"name":"a"}'
  ])
})

t.test('metadata.name: required, a DNS subdomain', async t => {
  const schema = root({ type: 'object' })
  const errors = (metadata: unknown): string[] =>
    validateCustomResource({ apiVersion: 'x.io/v1', kind: 'X', metadata }, schema).errors.map(fieldErrorText)
  t.same(errors({}), ['metadata.name: Required value: name or generateName is required'])
  t.same(errors({ generateName: 'x-' }), [])
  t.match(errors({ name: 'Bad_Name' })[0],
    /^metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist/)
})

t.test('defaults fill in before validation; nulls of fields that are not nullable are dropped', async t => {
  const seen: unknown[] = []
  const rules: RuleEvaluator = {
    objectBudget: 100,
    evaluate: (_expression, self): RuleOutcome => {
      seen.push(self)
      return { ok: true, value: true, cost: 1 }
    }
  }
  const schema: JSONSchemaProps = {
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'true' }],
    required: ['a'],
    properties: { a: { type: 'integer', default: 10 }, b: { type: 'string' } }
  }
  t.same(check({ b: null }, schema, rules).errors, [])
  t.same(seen, [{ a: 10n }], 'self has the default, as a CEL int, and no null')
})

t.test('CEL rules: self at each node, messages and reasons as the API server words them', async t => {
  // A stand-in CEL of the few expressions used here.
  const rules: RuleEvaluator = {
    objectBudget: 10,
    evaluate: (expression, self): RuleOutcome => {
      const value = self as Record<string, unknown>
      if (expression === 'uses(quantity)') return { cannotCheck: 'not valid CEL: Function not found' }
      if (expression === 'boom') return { ok: false, error: 'no such key: x', overLimit: false, cost: 1 }
      if (expression === 'self.ok') return { ok: true, value: value.ok === true, cost: 1 }
      if (expression === "'at ' + self.name") return { ok: true, value: `at ${String(value.name)}`, cost: 1 }
      if (expression === 'self == oldSelf') throw new Error('transition rules are not run on create')
      return { ok: true, value: false, cost: 1 }
    }
  }
  const schema: JSONSchemaProps = {
    type: 'object',
    'x-kubernetes-validations': [
      { rule: 'self.ok', message: 'must be ok' },
      { rule: 'self == oldSelf', message: 'immutable' },
      { rule: 'uses(quantity)' },
      { rule: 'boom', message: 'boom message' }
    ],
    properties: {
      ok: { type: 'boolean' },
      items: {
        type: 'array',
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, ok: { type: 'boolean' } },
          'x-kubernetes-validations': [
            { rule: 'self.ok', messageExpression: "'at ' + self.name" },
            { rule: 'self.ok', reason: 'FieldValueForbidden', fieldPath: '.name', message: 'forbidden here' }
          ]
        }
      },
      name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'false' }] }
    }
  }
  const spec = { ok: false, items: [{ name: 'a', ok: false }, { name: 'b', ok: true }], name: 'n' }
  const object = { apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'x' }, spec }
  const result = validateCustomResource(object, root(schema), { rules })
  t.same(result.errors.map(fieldErrorText), [
    'spec: Invalid value: must be ok',
    'spec: Invalid value: "object": no such key: x evaluating rule: boom message',
    'spec.items[0]: Invalid value: at a',
    'spec.items[0].name: Forbidden: forbidden here',
    'spec.name: Invalid value: "n": failed rule: false'
  ])
  t.same(result.warnings, ['cannot check rule "uses(quantity)": not valid CEL: Function not found'])
})

t.test('no CEL rule runs after a blocking error, as the API server says', async t => {
  const rules: RuleEvaluator = { objectBudget: 10, evaluate: (): RuleOutcome => ({ ok: true, value: false, cost: 1 }) }
  const schema: JSONSchemaProps = {
    type: 'object',
    'x-kubernetes-validations': [{ rule: 'false', message: 'never shown' }],
    properties: { mode: { type: 'string', enum: ['A'] }, n: { type: 'integer', minimum: 1 } }
  }
  t.same(check({ mode: 'B' }, schema, rules).errors, [
    'spec.mode: Unsupported value: "B": supported values: "A"',
    '<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; ' +
      'correct the existing errors to complete validation'
  ])
  t.same(check({ n: 0 }, schema, rules).errors, [
    'spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1',
    'spec: Invalid value: never shown'
  ], 'a range error is not blocking')
})

t.test('CEL rules: the object\'s budget stops the rules once spent', async t => {
  const rules: RuleEvaluator = { objectBudget: 3, evaluate: (): RuleOutcome => ({ ok: true, value: true, cost: 2 }) }
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: { list: { type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'true' }] } } }
  }
  t.same(check({ list: ['a', 'b', 'c'] }, schema, rules).errors, [
    'spec.list[2]: Invalid value: "string": ' +
      'validation failed due to running out of cost budget, no further validation rules will be run'
  ])
})
