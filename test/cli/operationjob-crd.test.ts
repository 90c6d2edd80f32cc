// The OperationJob CRD carries the registered actions: `npm run crds` writes them, and this test
// fails while the checked-in file is stale.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { OPERATIONJOB_CRD, renderOperationJobCrd } from '../../src/cli/operationjob-crd.js'
import { ActionRegistry, defaultActions, type ActionPlugin } from '../../src/actions/index.js'
import { execAction } from '../../src/actions/exec.js'

const text = readFileSync(OPERATIONJOB_CRD, 'utf8')
const specOf = (yaml: string): any => parse(yaml).spec.versions[0].schema.openAPIV3Schema.properties.spec
const rulesOf = (yaml: string): string[] => specOf(yaml)['x-kubernetes-validations'].map((r: any) => r.rule)

const drain: ActionPlugin = {
  name: 'Drain',
  handler: {
    operate: () => ({ effects: [] }),
    progress: () => ({ progress: 'Succeeded' }),
    release: () => ({ effects: [] })
  },
  specField: {
    name: 'drain',
    required: true,
    schema: { type: 'object', properties: { grace: { type: 'integer', minimum: 0 } } }
  }
}

t.test(
  'manifests/crds/operationjob.yaml is up to date with the registered actions (run `npm run crds` when this fails)',
  async (t) => {
    t.equal(renderOperationJobCrd(text, defaultActions.list()), text)
  }
)

t.test(
  'the CRD holds each action: the enum, its own field with its schema, the rule for a required field',
  async (t) => {
    const spec = specOf(text)
    t.same(spec.properties.action.enum, defaultActions.names())
    for (const action of defaultActions.list()) {
      if (action.specField === undefined) continue
      t.same(
        spec.properties[action.specField.name],
        JSON.parse(JSON.stringify(action.specField.schema)),
        `spec.${action.specField.name} is ${action.name}'s schema`
      )
      t.ok(
        rulesOf(text).includes(`self.action != '${action.name}' || has(self.${action.specField.name})`),
        `${action.name} needs spec.${action.specField.name}`
      )
    }
  }
)

t.test('a new action appears, and one taken out of the list disappears, with nothing else touched', async (t) => {
  const added = renderOperationJobCrd(text, [...defaultActions.list(), ...new ActionRegistry([drain]).list()])
  t.same(specOf(added).properties.drain, drain.specField?.schema)
  t.same(specOf(added).properties.action.enum, ['Drain', 'Exec', 'Label', 'Recreate', 'Replace'])
  t.ok(rulesOf(added).includes("self.action != 'Drain' || has(self.drain)"))
  t.equal(renderOperationJobCrd(added, defaultActions.list()), text, 'back to the file as it is')

  const onlyExec = renderOperationJobCrd(text, new ActionRegistry([execAction]).list())
  t.notOk('label' in specOf(onlyExec).properties, 'Label gone: its field goes')
  t.same(
    rulesOf(onlyExec).filter((r) => r.startsWith('self.action !=')),
    ["self.action != 'Exec' || has(self.exec)"]
  )
  const own = [
    'action',
    'targets',
    'partition',
    'operationDelaySeconds',
    'activeDeadlineSeconds',
    'TTLSecondsAfterFinished',
    'scripts'
  ]
  t.same(
    Object.keys(specOf(onlyExec).properties).filter((k) => own.includes(k)),
    own,
    "the OperationJob's own fields stay, in their order"
  )
  t.ok(rulesOf(onlyExec).includes('self.action == oldSelf.action'), 'and its own rules')
  t.match(onlyExec, /^# OperationJob: one-shot operations/, 'and the comments')
})
