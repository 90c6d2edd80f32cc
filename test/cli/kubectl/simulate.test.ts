// `kubectl jobhooks simulate`: the simulator through the plugin, with no cluster (the cluster
// flags before the command are left out, so nothing is asked of one), its messages worded as
// kubectl's; and `preview`, the live one, saying so as kubectl does when no cluster can be read.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { pluginMain } from '../../../src/cli/kubectl/main.js'
import { plugin, NOW } from '../../helpers/plugin.js'
import { exampleJobFlow } from '../../helpers/examples.js'

t.test('simulate -f: plays the manifest with no cluster, its documents on stdout', async t => {
  const { run, fake } = await plugin(t, [])
  const dir = t.testdir({ 'flow.yaml': stringify(exampleJobFlow('team-a')) })
  const text = await run(['simulate', '-f', join(dir, 'flow.yaml')])
  t.equal(text.code, 0, text.err)
  t.match(text.out, /^Simulating .*flow\.yaml: 1 JobFlow;/)
  t.match(text.out, 'team-a/jobflow-example  Succeeded at t=30s (5/5 jobs succeeded)')
  const json = await run(['simulate', '-f', join(dir, 'flow.yaml'), '-o', 'json'])
  t.equal(json.code, 0)
  t.ok(typeof JSON.parse(json.out) === 'object', 'stdout is exactly one JSON document')
  const html = await run(['simulate', join(dir, 'flow.yaml'), '--output', 'html'])
  t.match(html.out, /^<!DOCTYPE html>/, 'stdout is exactly the page')
  t.same(fake.requests, [], 'no request reached a cluster')
})

t.test('simulate: usage errors as kubectl words them, exit 1', async t => {
  const { run } = await plugin(t, [])
  const missing = await run(['simulate'])
  t.equal(missing.code, 1)
  t.match(missing.err, /^error: name the manifest to simulate\n/)
  t.match(missing.err, /usage: kubectl jobhooks simulate -f <manifest\.yaml>/)
  const help = await run(['simulate', '--help'])
  t.equal(help.code, 0)
  t.match(help.out, /^usage: kubectl jobhooks simulate -f/)
  t.match((await run(['simulate', '-f', '/no/such/file.yaml'])).err, /^error: .*no\/such\/file\.yaml/)
})

t.test('preview with no cluster to read: an error as kubectl says it, pointing at simulate', async t => {
  const dir = t.testdir({ 'flow.yaml': stringify(exampleJobFlow('team-a')) })
  let err = ''
  const code = await pluginMain(['preview', '-f', join(dir, 'flow.yaml'), '--kubeconfig', join(dir, 'none')], {
    out: () => {}, err: text => { err += text }, tty: false, now: () => NOW
  })
  t.equal(code, 1)
  t.match(err, /^error: --kubeconfig .*none: no such file\n/)
  t.match(err, `To play it with no cluster: kubectl jobhooks simulate -f ${join(dir, 'flow.yaml')}\n`)
  t.notMatch(err, /simulate: /, 'never the npm script\'s own prefix')
})
