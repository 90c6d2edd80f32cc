// `kubectl jobhooks … --as USER --as-group GROUP`: kubectl's impersonation flags, sent as its
// Impersonate-User and Impersonate-Group headers on every request of the command.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { parseOptions } from '../../../src/cli/kubectl/options.js'
import { FAKE_TOKEN } from '../../helpers/fake-api-server.js'
import { plugin, runningFlow } from '../../helpers/plugin.js'
import { exampleJobFlow } from '../../helpers/examples.js'

t.test('--as and --as-group go on every request, with the kubeconfig\'s own credentials', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  const done = await run(['get', 'jf', 'jobflow-example', '--as', 'jane', '--as-group', 'dev', '--as-group', 'ops'])
  t.equal(done.code, 0, done.err)
  t.ok(fake.wire.length > 0)
  for (const request of fake.wire) {
    t.same(request.headersDistinct['impersonate-user'], ['jane'], request.url)
    t.same(request.headersDistinct['impersonate-group'], ['dev', 'ops'])
    t.equal(request.headers.authorization, `Bearer ${FAKE_TOKEN}`)
  }
  const plain = fake.wire.length
  t.equal((await run(['get', 'jf', 'jobflow-example'])).code, 0)
  t.ok(fake.wire.slice(plain).every(r => r.headers['impersonate-user'] === undefined), 'none without the flags')
})

t.test('preview reads as --as and --as-group too', async t => {
  const { run, fake } = await plugin(t, [runningFlow()])
  const dir = t.testdir({ 'flow.yaml': stringify(exampleJobFlow('team-a')) })
  const done = await run(['preview', '-f', join(dir, 'flow.yaml'), '--as', 'jane', '--as-group', 'dev'])
  t.equal(done.code, 0, done.err)
  t.ok(fake.wire.length > 0)
  t.ok(fake.wire.every(r => r.method === 'GET' && r.headers['impersonate-user'] === 'jane' &&
    r.headers['impersonate-group'] === 'dev'), 'every read')
})

t.test('--as-group needs --as, as kubectl says', async t => {
  t.same(parseOptions(['get', 'jf', '--as', 'jane', '--as-group', 'dev']).asGroups, ['dev'])
  t.equal(parseOptions(['get', 'jf', '--as', 'jane']).as, 'jane')
  const { run } = await plugin(t, [])
  t.same(await run(['get', 'jf', '--as-group', 'dev']), {
    code: 1,
    out: '',
    err: 'error: requesting groups without impersonating a user: give --as with --as-group\n' +
      "See 'kubectl jobhooks --help' for usage.\n"
  })
})
