// `npm run simulate -- … --output-of STEP=VALUE`: a step's succeeded pod carries that termination
// message, over what its command would write; without it, the message its command writes stands.
import t from 'tap'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { stringify } from 'yaml'
import { main } from '../../src/cli/simulate.js'

const OUTPUTS = fileURLToPath(new URL('../../manifests/examples/jobflow-outputs.yaml', import.meta.url))
const FOREACH = fileURLToPath(new URL('../../manifests/examples/jobflow-foreach.yaml', import.meta.url))

interface Run { code: number, out: string[], err: string[] }

async function run (argv: string[]): Promise<Run> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, line => out.push(line), line => err.push(line))
  return { code, out, err }
}

/** The JobFlow's records at the end, by flow name, from `--output json`. */
async function records (argv: string[]): Promise<Map<string, any>> {
  const { code, out } = await run([...argv, '--output', 'json'])
  if (code !== 0) throw new Error(`simulate exited ${code}`)
  const flow = JSON.parse(out.join('\n')).objects.find((o: any) => o.kind === 'JobFlow')
  return new Map(flow.status.jobs.map((r: any) => [r.name, r]))
}

t.test('without --output-of, a step\'s output is what its command writes to /dev/termination-log', async t => {
  const jobs = await records([OUTPUTS])
  t.equal(jobs.get('build')?.output, 'v1.2.3')
  t.equal(jobs.get('test')?.output, '{"passed": 42, "failed": 0}')
  t.match(jobs.get('deploy'), { phase: 'Succeeded' })
  t.match(jobs.get('triage'), { phase: 'Skipped' })
  const { out } = await run([OUTPUTS])
  t.match(out.join('\n'), /OUTPUT +MESSAGE/, 'the table shows the outputs')
})

t.test('--output-of gives the step that output instead: the other branch runs', async t => {
  const argv = [OUTPUTS, '--output-of', 'test={"passed": 40, "failed": 2}']
  const jobs = await records(argv)
  t.equal(jobs.get('build')?.output, 'v1.2.3', 'the other steps keep their own')
  t.equal(jobs.get('test')?.output, '{"passed": 40, "failed": 2}')
  t.match(jobs.get('deploy'), { phase: 'Skipped' })
  t.match(jobs.get('triage'), { phase: 'Succeeded' })
  const { code, out, err } = await run(argv)
  t.equal(code, 0)
  t.ok(out[0]?.includes('every Job runs 10s, test outputs \'{"passed": 40, "failed": 2}\''), 'the intro says so')
  t.same(err, [])
})

t.test('--output-of a forEachFrom\'s dependency sets the items; repeated, each step its own', async t => {
  const jobs = await records([FOREACH, '--output-of', 'list=["a","b","c"]', '--output-of=merge=done'])
  t.same([...jobs.keys()].filter(name => name.startsWith('shard')), ['shard[0]', 'shard[1]', 'shard[2]'])
  t.equal(jobs.get('merge')?.output, 'done')
  const { out } = await run([FOREACH, '--output-of', 'list=["a","b","c"]'])
  t.match(out.join('\n'), /jobflow-foreach +Succeeded +7\/7/)
})

t.test('--output-of reaches the container outputFrom names, and a Job by its name', async t => {
  const containers = [
    { name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'echo mine > /dev/termination-log'] },
    { name: 'report', image: 'busybox:1.36' }
  ]
  const flow = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'side' },
    spec: {
      flows: [
        { name: 'a', outputFrom: 'report', jobTemplate: { template: { spec: { containers } } } },
        { name: 'b', jobTemplate: { template: { spec: { containers } } } }
      ]
    }
  }
  const file = join(t.testdir({ 'side.yaml': stringify(flow) }), 'side.yaml')
  const jobs = await records([file, '--output-of', 'a=given', '--output-of', 'side-b=named'])
  t.equal(jobs.get('a')?.output, 'given')
  t.equal(jobs.get('b')?.output, 'named', 'over what its command writes')
  const plain = await records([file])
  t.equal(plain.get('a')?.output, '', 'the report container wrote nothing')
  t.equal(plain.get('b')?.output, 'mine')
})

t.test('--output-of takes STEP=VALUE, and says when no Job answered to it', async t => {
  for (const value of ['build', '=v1']) {
    const bad = await run([OUTPUTS, '--output-of', value])
    t.equal(bad.code, 2, `exit 2 for --output-of ${value}`)
    t.match(bad.err.join('\n'), /--output-of takes STEP=VALUE/)
  }
  const empty = await records([OUTPUTS, '--output-of', 'build='])
  t.equal(empty.get('build')?.output, '', 'an empty message is an empty output')
  t.match(empty.get('test'), { phase: 'Skipped' }, 'its when reads the empty output')
  const none = await run([OUTPUTS, '--output-of', 'nosuchstep=x'])
  t.equal(none.code, 0)
  t.match(none.err.join('\n'), /no Job answered to --output-of nosuchstep/)
})
