// `kubectl jobhooks version`: the package's version, how it ships and the Node it runs on, with no
// cluster and whatever flags come before it.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { plugin } from '../../helpers/plugin.js'

const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
  version: string
}).version

t.test('version: one line, from the package folder here, no request', async t => {
  const { run, fake } = await plugin(t, [])
  const printed = await run(['-n', 'team-a', 'version'])
  t.same(printed, {
    code: 0,
    out: `kubectl-jobhooks ${VERSION} (from the package folder, Node ${process.version}, ` +
      `${process.platform}/${process.arch})\n`,
    err: ''
  })
  t.same(fake.requests, [], 'no request reached a cluster')
  t.match((await run(['--help'])).out, /\n {2}kubectl jobhooks version +this plugin's version/)
})
