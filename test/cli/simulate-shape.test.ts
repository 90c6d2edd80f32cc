// What `npm run simulate` shows of a flow's shape: the dependencies in the timeline and the table,
// and the row `kubectl get` would show at the end of every parent's report.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/simulate.js'

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))

async function run (argv: string[]): Promise<string[]> {
  const out: string[] = []
  const code = await main(argv, line => out.push(...line.split('\n')), () => {})
  if (code !== 0) throw new Error(`simulate ${argv.join(' ')} exited ${code}`)
  return out
}

/** The rows of the table whose header starts with `first`, split on its runs of blanks, up to `$ kubectl`. */
function tableAfter (lines: string[], first: string): string[][] {
  const start = lines.findIndex(l => l.trim().startsWith(`${first} `))
  const rows: string[][] = []
  for (const line of lines.slice(start)) {
    if (!line.startsWith('  ') || line.trim().startsWith('$ ')) break
    rows.push(line.trim().split(/\s{2,}/))
  }
  return rows
}

/** The `kubectl get` lines a report ends with: the command, the header and the row. */
function kubectlRow (lines: string[], command: string): string[] {
  const at = lines.findIndex(l => l.trim() === `$ ${command}`)
  return at < 0 ? [] : lines.slice(at + 1, at + 3).map(l => l.trim())
}

t.test('the JobFlow table lists each step with its dependencies, `-` for none', async t => {
  const out = await run([`${EXAMPLES}jobflow.yaml`])
  const rows = tableAfter(out, 'FLOW')
  t.same(rows[0]?.slice(0, 3), ['FLOW', 'AFTER', 'JOB'])
  t.same(rows.slice(1).map(r => r.slice(0, 2)), [
    ['job1', '-'], ['job2', 'job1'], ['job3', 'job1, job2'], ['job4', '-'], ['job5', 'job4, job2']
  ])
})

t.test('the timeline says what a step came after where its Job is created', async t => {
  const out = await run([`${EXAMPLES}jobflow.yaml`])
  t.match(out.find(l => l.startsWith('t=10s')), /created Job jobflow-example-job2; job2 after job1;/)
  t.match(out.find(l => l.startsWith('t=20s')), /job3 after job1, job2; job5 after job4, job2/)
  t.notMatch(out.find(l => l.startsWith('t=0s')), /after/, 'the roots come after nothing')
})

t.test('a when shows in its own column and in the timeline; the column is there only when needed', async t => {
  const out = await run([`${EXAMPLES}jobflow-when.yaml`])
  const rows = tableAfter(out, 'FLOW')
  t.same(rows[0]?.slice(0, 4), ['FLOW', 'AFTER', 'WHEN', 'JOB'])
  t.same(rows.find(r => r[0] === 'publish')?.slice(0, 3), ['publish', 'build', "flows.build.phase == 'Succeeded'"])
  t.same(rows.find(r => r[0] === 'build')?.slice(0, 3), ['build', '-', '-'])
  t.match(out.find(l => l.startsWith('t=10s')), /publish after build \(when held\)/)
  const plain = tableAfter(await run([`${EXAMPLES}jobflow.yaml`]), 'FLOW')
  t.notOk(plain[0]?.includes('WHEN'), 'no WHEN column for a flow without one')
})

t.test('a template group\'s steps follow it, after the steps their template names; the group runs no Job', async t => {
  const out = await run([`${EXAMPLES}jobflow-template.yaml`])
  const rows = tableAfter(out, 'FLOW')
  t.same(rows[0]?.slice(0, 4), ['FLOW', 'AFTER', 'WHEN', 'JOB'])
  const steps = (group: string, phase: string): string[][] => [
    [`${group}.compile`, '-', `jobflow-template-${group}.compile`, 'Succeeded'],
    [`${group}.unit`, 'compile', `jobflow-template-${group}.unit`, 'Succeeded'],
    [`${group}.lint`, 'compile', `jobflow-template-${group}.lint`, 'Succeeded'],
    [`${group}.package`, 'unit, lint', `jobflow-template-${group}.package`, phase]
  ]
  t.same(rows.slice(1).map(r => [r[0], r[1], r[3], r[4]]), [
    ['linux', '-', '(group)', 'Succeeded'], ...steps('linux', 'Succeeded'),
    ['mac', 'linux', '(group)', 'Succeeded'], ...steps('mac', 'Skipped'),
    ['release', 'mac', 'jobflow-template-release', 'Succeeded']
  ])
  t.match(out.find(l => l.startsWith('t=10s')), /linux\.unit after compile; linux\.lint after compile/,
    'the timeline names their dependencies so too')
})

t.test('many dependencies name the first two and count the rest', async t => {
  const out = await run([`${EXAMPLES}jobflow-kueue.yaml`, '--kueue-quota', '2'])
  t.same(tableAfter(out, 'FLOW').find(r => r[0] === 'merge')?.slice(0, 2), ['merge', 'shard-1, shard-2, +4 more'])
})

t.test('a JobFlow report ends with the row kubectl get shows, aged as simulated', async t => {
  const out = await run([`${EXAMPLES}jobflow.yaml`, '--fail', 'job2'])
  const [header, row] = kubectlRow(out, 'kubectl get jf jobflow-example')
  t.match(header, /^NAME\s+STATUS\s+JOBS\s+QUEUED\s+AGE$/)
  t.match(row, /^jobflow-example\s+Failed\s+2\/5\s+20s$/, 'the age is when the run settled')
})

t.test('a DaemonJob report ends with the row kubectl get shows', async t => {
  const out = await run([`${EXAMPLES}daemonjob.yaml`])
  const [header, row] = kubectlRow(out, 'kubectl get dj daemonjob-example')
  t.match(header, /^NAME\s+STATUS\s+DESIRED\s+ACTIVE\s+QUEUED\s+SUCCEEDED\s+FAILED\s+AGE$/)
  t.match(row, /^daemonjob-example\s+Succeeded\s+1\s+0\s+1\s+0\s+10s$/)
  t.equal(out.at(-1)?.trim(), row, 'the last line of the report')
})

t.test('every kind of report ends with its kubectl get row', async t => {
  const out = await run([`${EXAMPLES}collaset.yaml`, `${EXAMPLES}operationjob-replace.yaml`])
  t.equal(kubectlRow(out, 'kubectl get opj opj-replace').length, 2)
  t.equal(kubectlRow(out, 'kubectl get cls foo').length, 2)
  const ejob = await run([`${EXAMPLES}ephemeraljob-batch.yaml`])
  t.equal(kubectlRow(ejob, 'kubectl get ejob hello-world-ephemeral-job').length, 2)
})
