// Every field a CRD's CEL rule reads of `self` is one the API server gives CEL a type for. It
// builds the rule's types from the schema (apiextensions-apiserver, schema/cel/model): a field
// with no type (and no x-kubernetes-preserve-unknown-fields or int-or-string), or a list whose
// items have none, is left out, and a rule that reads it does not compile ("undefined field").
// The offline checks evaluate rules over values, where such a field is there: this test is what
// catches it without a cluster (`has(self.forEach)` reached the real tier before it was caught).
import t from 'tap'
import { type Json, crds, schemaNodes, storageVersion } from '../helpers/manifests.js'

/** Whether the API server gives CEL a type for a value of `schema`. */
function celTyped (schema: Json): boolean {
  if (schema === undefined || schema === null) return false
  if (schema['x-kubernetes-int-or-string'] === true) return true
  if (schema.type === undefined) return schema['x-kubernetes-preserve-unknown-fields'] === true
  if (schema.type === 'array') return celTyped(schema.items)
  return true
}

/** The fields a rule reads of `self` by name, as chains: `self.a.b` is ['a', 'b']. */
function fieldChains (rule: string): string[][] {
  return [...rule.matchAll(/(?<![\w.])self((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)]
    .map(match => (match[1] as string).split('.').slice(1))
}

/** What is wrong with reading `chain` from a value of `schema`, or undefined. */
function chainProblem (schema: Json, chain: string[]): string | undefined {
  let node = schema
  for (const field of chain) {
    // A map's values, or an object that keeps unknown fields, is read by key: nothing to check.
    if (node.properties === undefined) return undefined
    const next = node.properties[field]
    if (next === undefined) return `self.${chain.join('.')}: ${field} is no field of the schema`
    if (!celTyped(next)) return `self.${chain.join('.')}: ${field} has no type CEL can read (type it, or its items)`
    node = next
  }
  return undefined
}

t.test('every field a CEL rule reads has a type the API server gives CEL', async t => {
  let rules = 0
  for (const crd of crds) {
    const schema = storageVersion(crd).schema.openAPIV3Schema
    for (const { node, path } of schemaNodes(schema)) {
      for (const { rule } of node['x-kubernetes-validations'] ?? []) {
        rules++
        const problems = fieldChains(String(rule)).map(chain => chainProblem(node, chain)).filter(p => p !== undefined)
        t.same(problems, [], `${String(crd.spec.names.kind)} ${path || '(root)'}: ${String(rule)}`)
      }
    }
  }
  t.ok(rules > 20, `${rules} rules read`)
})

t.test('the check refuses what the API server refuses', async t => {
  const step = { type: 'object', properties: { name: { type: 'string' }, forEach: { type: 'array', items: {} } } }
  t.match(chainProblem(step, ['forEach']), /forEach has no type CEL can read/)
  t.match(chainProblem(step, ['nope']), /nope is no field/)
  t.equal(chainProblem(step, ['name']), undefined)
  t.same(fieldChains('has(self.a) && self.b.c == oldSelf.d && !has(x.self)'), [['a'], ['b', 'c']])
})
