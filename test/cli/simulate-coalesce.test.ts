// `npm run simulate -- … --coalesce`: every event of one instant is handled before the next sync,
// as Metacontroller's queue folds a burst, so a fan-out of hundreds of items plays in seconds.
import t from 'tap'
import { join } from 'node:path'
import { stringify } from 'yaml'
import { main } from '../../src/cli/simulate.js'
import { parseSimulateArguments, UsageError } from '../../src/cli/arguments.js'

async function run (argv: string[]): Promise<{ code: number, out: string[], err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, line => out.push(line), line => err.push(line))
  return { code, out, err }
}

t.test('--coalesce is a flag without a value; off unless given', async t => {
  t.match(parseSimulateArguments(['a.yaml', '--coalesce']), { coalesce: true })
  t.match(parseSimulateArguments(['a.yaml']), { coalesce: false })
  t.throws(() => parseSimulateArguments(['a.yaml', '--coalesce=yes']), new UsageError('--coalesce takes no value'))
})

t.test('a fan-out of 600 items plays to the end, its records grouped as the hook writes them', async t => {
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  const flow = {
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'wide' },
    spec: {
      flows: [
        {
          name: 'process',
          forEach: Array.from({ length: 600 }, (_, i) => `shard-${i}`),
          parallelism: 300,
          jobTemplate: { ttlSecondsAfterFinished: 0, template: { spec: { containers } } }
        },
        { name: 'merge', dependencies: ['process'], jobTemplate: { template: { spec: { containers } } } }
      ]
    }
  }
  const file = join(t.testdir({ 'wide.yaml': stringify(flow) }), 'wide.yaml')
  const { code, out, err } = await run([file, '--coalesce', '--output', 'json'])
  t.equal(code, 0, err.join('\n'))
  t.same(err, [], 'no hint: --coalesce is given')
  const report = JSON.parse(out.join('\n'))
  t.match(report.summary, /the events of one instant handled in one sync/)
  const status = report.objects.find((o: any) => o.kind === 'JobFlow').status
  t.equal(status.phase, 'Succeeded')
  t.same(status.jobGroups, [{ names: ['process[0-599]', 'merge'], phase: 'Succeeded' }], 'merge has no output')
  t.same(status.jobs, [])
  t.equal(status.jobsSucceeded, '601/601')
  const waves = report.timeline.filter((e: any) => e.actions.some((a: string) => a.startsWith('created Jobs')))
  t.equal(waves.length, 2, 'two waves of 300 items, each created in one sync')
})

t.test('without --coalesce, a fan-out of 100 items or more gets a hint first', async t => {
  const flow = (items: number): string => stringify({
    apiVersion: 'jobhooks.io/v1alpha1',
    kind: 'JobFlow',
    metadata: { name: 'some' },
    spec: {
      flows: [{
        name: 'a',
        forEach: Array.from({ length: items }, (_, i) => `x${i}`),
        parallelism: items,
        jobTemplate: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] } } }
      }]
    }
  })
  const dir = t.testdir({ 'few.yaml': flow(99), 'many.yaml': flow(100) })
  const many = await run([join(dir, 'many.yaml'), '--until', '1'])
  t.same(many.err, ['simulate: note: 100 fan-out items; --coalesce plays them in seconds rather than minutes'])
  const few = await run([join(dir, 'few.yaml'), '--until', '1'])
  t.same(few.err, [])
})
