// `npm run crds`: writes the registered actions into the OperationJob CRD
// (manifests/crds/operationjob.yaml), so that `kubectl apply` accepts each action's own spec field
// and refuses what its schema refuses. Everything else in the file (comments, the OperationJob's
// own fields and rules) stays as written. The test suite fails while the file is out of date.
//
// From the registered actions (src/actions/index.ts) it writes:
// - `spec.action`: an enum of the action names;
// - `spec.<field>`: each action's own field, with the schema the action declares;
// - for a required field, the rule "action X needs spec.<field>".
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isMap, isScalar, isSeq, parseDocument, visit, type Document, type Node } from 'yaml'
import { defaultActions, OPERATIONJOB_SPEC_FIELDS, type RegisteredAction } from '../actions/index.js'
import { packageRoot } from '../scripts/library.js'

export const OPERATIONJOB_CRD = join(packageRoot(), 'manifests', 'crds', 'operationjob.yaml')

const SPEC = ['spec', 'versions', 0, 'schema', 'openAPIV3Schema', 'properties', 'spec']
/** A rule this file writes: `self.action != 'X' || has(self.x)`. */
const GENERATED_RULE = /^self\.action != '[A-Za-z][A-Za-z0-9]*' \|\| has\(self\.[a-z][A-Za-z0-9]*\)$/

function requiredRule (action: RegisteredAction, field: string): { rule: string, message: string } {
  return {
    rule: `self.action != '${action.name}' || has(self.${field})`,
    message: `action ${action.name} needs spec.${field}`
  }
}

/** A schema as YAML nodes, written the way the rest of the file is: short lists of scalars on one line. */
function schemaNode (doc: Document, schema: unknown): Node {
  // Through JSON: the schema as data, nothing a YAML writer could read differently.
  const node = doc.createNode(JSON.parse(JSON.stringify(schema))) as Node
  visit(node, { Seq: (_, seq) => { if (seq.items.every(isScalar)) seq.flow = true } })
  return node
}

/** Drops what an earlier run wrote: action fields and their rules. */
function clearActions (doc: Document): void {
  const properties = doc.getIn([...SPEC, 'properties'])
  if (!isMap(properties)) throw new Error('the OperationJob CRD has no spec.properties')
  properties.items = properties.items.filter(pair => OPERATIONJOB_SPEC_FIELDS.includes(String(pair.key)))
  const rules = doc.getIn([...SPEC, 'x-kubernetes-validations'])
  if (isSeq(rules)) {
    rules.items = rules.items.filter(rule => !(isMap(rule) && GENERATED_RULE.test(String(rule.get('rule')))))
  }
}

/** The CRD text `text` with `actions` written in. Rendering twice gives the same text. */
export function renderOperationJobCrd (text: string, actions: readonly RegisteredAction[]): string {
  const doc = parseDocument(text)
  clearActions(doc)
  const sorted = [...actions].sort((a, b) => (a.name < b.name ? -1 : 1))
  const names = sorted.map(a => a.name)
  doc.setIn([...SPEC, 'properties', 'action', 'enum'], doc.createNode(names, { flow: true }))
  doc.setIn([...SPEC, 'properties', 'action', 'description'], `The action to run: ${names.join(', ')}.`)
  const properties = doc.getIn([...SPEC, 'properties'])
  for (const action of sorted) {
    const field = action.specField
    if (field === undefined) continue
    doc.setIn([...SPEC, 'properties', field.name], schemaNode(doc, field.schema))
    const written = isMap(properties) ? properties.items.find(pair => String(pair.key) === field.name) : undefined
    if (written !== undefined) {
      written.key = doc.createNode(field.name)
      const comment = ` The ${action.name} action's own field, written by npm run crds from the registered actions.`
      ;(written.key as Node).commentBefore = comment
    }
    if (field.required) {
      const rules = doc.getIn([...SPEC, 'x-kubernetes-validations'])
      if (isSeq(rules)) rules.add(doc.createNode(requiredRule(action, field.name)))
      else doc.setIn([...SPEC, 'x-kubernetes-validations'], doc.createNode([requiredRule(action, field.name)]))
    }
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false })
}

function main (): void {
  const before = readFileSync(OPERATIONJOB_CRD, 'utf8')
  const after = renderOperationJobCrd(before, defaultActions.list())
  if (after === before) {
    process.stdout.write(`${OPERATIONJOB_CRD}: up to date (${defaultActions.names().join(', ')})\n`)
    return
  }
  writeFileSync(OPERATIONJOB_CRD, after)
  process.stdout.write(`${OPERATIONJOB_CRD}: written (${defaultActions.names().join(', ')})\n`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
