import t from 'tap'
import { ActionRegistry, defaultActions, registerAction, type ActionHandler } from '../../src/actions/index.js'
import { execAction } from '../../src/actions/exec.js'

const noop: ActionHandler = {
  operate: () => ({ effects: [] }),
  progress: () => ({ progress: 'Succeeded' }),
  release: () => ({ effects: [] })
}

t.test('the service\'s registry has Exec built in', async t => {
  t.equal(defaultActions.get('Exec')?.handler, execAction)
  t.equal(defaultActions.get('Exec')?.podOpsLifecycle, false)
  t.ok(defaultActions.names().includes('Exec'))
})

t.test('registerAction adds an action spec.action can name; names are unique', async t => {
  registerAction('RegistryTestNoop', noop)
  t.equal(defaultActions.get('RegistryTestNoop')?.handler, noop)
  t.throws(() => registerAction('RegistryTestNoop', noop), /already registered/)
  t.throws(() => registerAction('Exec', noop), /already registered/, 'a built-in cannot be replaced silently')
})

t.test('podOpsLifecycle: true wraps the handler in the lifecycle; false leaves it as given', async t => {
  const registry = new ActionRegistry()
  registry.register('Drain', noop, { podOpsLifecycle: true })
  t.equal(registry.get('Drain')?.podOpsLifecycle, true)
  t.not(registry.get('Drain')?.handler, noop, 'wrapped: the lifecycle runs around operate/progress/release')
  registry.register('Plain', noop, { podOpsLifecycle: false })
  t.equal(registry.get('Plain')?.podOpsLifecycle, false)
  t.equal(registry.get('Plain')?.handler, noop)
})

t.test('the built-ins: Exec and Replace without a lifecycle, Recreate with one', async t => {
  t.equal(defaultActions.get('Replace')?.podOpsLifecycle, false)
  t.equal(defaultActions.get('Recreate')?.podOpsLifecycle, true)
  t.same(defaultActions.names().filter(n => ['Exec', 'Recreate', 'Replace'].includes(n)), ['Exec', 'Recreate', 'Replace'])
})

t.test('bad names and incomplete handlers are refused at registration', async t => {
  const registry = new ActionRegistry()
  for (const name of ['', 'has space', '9lives', 'a/b']) t.throws(() => registry.register(name, noop), /action name/, JSON.stringify(name))
  t.throws(() => registry.register('Half', { operate: noop.operate, progress: noop.progress } as unknown as ActionHandler), /no release function/)
  t.same(registry.names(), [])
  registry.register('B', noop)
  registry.register('A', noop)
  t.same(registry.names(), ['A', 'B'], 'sorted')
})
