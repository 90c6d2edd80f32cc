import t from 'tap'
import {
  ACTIONS,
  ActionRegistry,
  defaultActions,
  type ActionHandler,
  type ActionPlugin
} from '../../src/actions/index.js'
import { execAction } from '../../src/actions/exec.js'
import { labelAction } from '../../src/actions/label.js'
import { mergeShapes, POD_READS } from '../../src/k8s/reads.js'
import { operationJobHooks } from '../../src/controllers/operationjob/index.js'
import { valueAt } from '../helpers/objects.js'

const noop: ActionHandler = {
  operate: () => ({ effects: [] }),
  progress: () => ({ progress: 'Succeeded' }),
  release: () => ({ effects: [] })
}
const plugin = (name: string, extra: Partial<ActionPlugin> = {}): ActionPlugin => ({ name, handler: noop, ...extra })

t.test('the service runs the actions of the one list, and no others', async t => {
  t.same(defaultActions.names(), ['Exec', 'Label', 'Recreate', 'Replace'])
  t.same(ACTIONS.map(a => a.name).sort(), defaultActions.names())
  t.equal(defaultActions.get('Exec')?.handler, execAction.handler)
  t.equal(defaultActions.get('Exec')?.specField?.name, 'exec')
  t.equal(defaultActions.get('Label')?.specField?.name, 'label')
  t.equal(defaultActions.get('Label')?.handler, labelAction.handler)
})

t.test('the built-ins: Exec, Label and Replace without a lifecycle, Recreate with one', async t => {
  t.same(
    defaultActions.list().map(a => [a.name, a.podOpsLifecycle]),
    [
      ['Exec', false],
      ['Label', false],
      ['Recreate', true],
      ['Replace', false]
    ]
  )
})

t.test('podOpsLifecycle: true wraps the handler in the lifecycle; otherwise the handler is used as given', async t => {
  const registry = new ActionRegistry([plugin('Drain', { podOpsLifecycle: true }), plugin('Plain')])
  t.equal(registry.get('Drain')?.podOpsLifecycle, true)
  t.not(registry.get('Drain')?.handler, noop, 'wrapped: the lifecycle runs around operate/progress/release')
  t.equal(registry.get('Plain')?.podOpsLifecycle, false)
  t.equal(registry.get('Plain')?.handler, noop)
})

t.test('a list that cannot be registered stops the start, with the reason', async t => {
  for (const name of ['', 'has space', '9lives', 'a/b']) {
    t.throws(() => new ActionRegistry([plugin(name)]), /action name/, JSON.stringify(name))
  }
  t.throws(
    () =>
      new ActionRegistry([
        { name: 'Half', handler: { operate: noop.operate, progress: noop.progress } as unknown as ActionHandler }
      ]),
    /no release function/
  )
  t.throws(() => new ActionRegistry([plugin('A'), plugin('A')]), /action A is listed twice/)
  const field = (name: string, schema: any = { type: 'object' }): Partial<ActionPlugin> => ({
    specField: { name, required: false, schema }
  })
  t.throws(
    () => new ActionRegistry([plugin('A', field('partition'))]),
    /spec.partition is the OperationJob's own field/
  )
  t.throws(() => new ActionRegistry([plugin('A', field('Bad-Name'))]), /lower camel case/)
  t.throws(() => new ActionRegistry([plugin('A', field('a', { type: 'string' }))]), /must be an object schema/)
  t.throws(
    () => new ActionRegistry([plugin('A', field('shared')), plugin('B', field('shared'))]),
    /actions A and B both claim spec.shared/
  )
  t.throws(
    () => new ActionRegistry([...ACTIONS, plugin('Exec')]),
    /listed twice/,
    'a built-in cannot be replaced silently'
  )
})

t.test('names are listed sorted', async t => {
  const registry = new ActionRegistry([plugin('B'), plugin('A')])
  t.same(registry.names(), ['A', 'B'])
  t.same(new ActionRegistry([]).names(), [])
})

t.test('what the actions read of a Pod is built besides what the OperationJob hooks read', async t => {
  t.same(new ActionRegistry([plugin('A')]).podReads(), POD_READS, 'nothing more by default')
  const plugins = [
    plugin('A', { podReads: { spec: { nodeName: true } } }),
    plugin('B', { podReads: { status: { hostIP: true } } })
  ]
  const reads = new ActionRegistry(plugins).podReads()
  t.equal(valueAt(reads, 'spec', 'nodeName'), true)
  t.equal(valueAt(reads, 'status', 'hostIP'), true)
  t.same(valueAt(reads, 'spec', 'containers'), { name: true }, 'and what the hooks read still')
  t.same(
    operationJobHooks(new ActionRegistry([plugin('A', { podReads: { spec: { nodeName: true } } })])).reads?.related?.[
      'Pod.v1'
    ],
    mergeShapes(POD_READS, { spec: { nodeName: true } }),
    'the OperationJob routes build it'
  )
})
