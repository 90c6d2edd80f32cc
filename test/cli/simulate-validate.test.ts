// The simulator checks the manifests as the API server would before it plays them (exit 1, nothing
// run, when it would refuse one) and exits 3 when an object ended Invalid.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { main } from '../../src/cli/simulate.js'
import { pluginMain } from '../../src/cli/kubectl/main.js'
import { exampleJobFlow } from '../helpers/examples.js'

async function run (argv: string[]): Promise<{ code: number, out: string[], err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, line => out.push(line), line => err.push(line))
  return { code, out, err }
}

t.test('a manifest the API server would refuse is not played: its refusal, exit 1', async t => {
  const flow = exampleJobFlow() as unknown as { spec: { flows: Array<Record<string, unknown>> } }
  const second = flow.spec.flows[1] as Record<string, unknown>
  second.dependecies = second.dependencies
  delete second.dependencies
  const dir = t.testdir({ 'flow.yaml': stringify(flow) })
  const { code, out, err } = await run([join(dir, 'flow.yaml')])
  t.equal(code, 1)
  t.same(out, [], 'nothing simulated')
  t.same(err, [
    `Error from server (BadRequest): error when creating "${join(dir, 'flow.yaml')}": JobFlow in version "v1alpha1" ` +
      'cannot be handled as a JobFlow: strict decoding error: unknown field "spec.flows[1].dependecies"',
    'simulate: the API server would refuse the manifests; nothing was simulated'
  ])
})

t.test('an object that ends Invalid: the run is printed, exit 3, and why', async t => {
  const flow = exampleJobFlow() as unknown as { spec: { flows: Array<Record<string, unknown>> } }
  ;(flow.spec.flows[0] as Record<string, unknown>).dependencies = ['nosuch']
  const dir = t.testdir({ 'flow.yaml': stringify(flow) })
  const { code, out, err } = await run([join(dir, 'flow.yaml')])
  t.equal(code, 3)
  t.match(out.join('\n'), /Invalid/)
  t.match(err.at(-1), /^simulate: JobFlow jobflow-example ended Invalid: .*nosuch/)
})

t.test('through the plugin: a refusal exits 1 with kubectl\'s error prefix, an Invalid object 3', async t => {
  const flow = exampleJobFlow() as unknown as { spec: { flows: Array<Record<string, unknown>> } }
  ;(flow.spec.flows[0] as Record<string, unknown>).dependencies = ['nosuch']
  const refused = { ...flow, spec: { ...flow.spec, failurePolicy: 'Stop' } }
  const dir = t.testdir({ 'invalid.yaml': stringify(flow), 'refused.yaml': stringify(refused) })
  const plugin = async (file: string): Promise<{ code: number, err: string }> => {
    let err = ''
    const code = await pluginMain(['simulate', '-f', join(dir, file)], {
      out: () => {}, err: text => { err += text }, tty: false, now: () => new Date(0)
    })
    return { code, err }
  }
  const invalid = await plugin('invalid.yaml')
  t.equal(invalid.code, 3)
  t.match(invalid.err, /^error: JobFlow jobflow-example ended Invalid/m)
  const no = await plugin('refused.yaml')
  t.equal(no.code, 1)
  t.match(no.err, /^The JobFlow "jobflow-example" is invalid: \n\* spec\.failurePolicy: Unsupported value: "Stop"/)
  t.match(no.err, /^error: the API server would refuse the manifests; nothing was simulated$/m)
})
