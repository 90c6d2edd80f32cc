// `npm run simulate` over the retry and rerun examples: a Job's own activeDeadlineSeconds fails
// every attempt it is shorter than, as on a cluster; `--fail flow:N` fails a flow's first N
// attempts; `--set` edits a list's item by its index and makes a rerun's annotation.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse, stringify } from 'yaml'
import { creations, run } from '../helpers/simulate-cli.js'

const RETRY = fileURLToPath(new URL('../../manifests/examples/jobflow-retry.yaml', import.meta.url))
const RERUN = fileURLToPath(new URL('../../manifests/examples/jobflow-rerun.yaml', import.meta.url))
const DEADLINE = 'DeadlineExceeded: Job was active longer than specified deadline'

/** The retry example without its upload's deadline: a step that fails only when --fail says so. */
function retryWithoutDeadline (t: { testdir: (files: Record<string, string>) => string }): string {
  const flow = parse(readFileSync(RETRY, 'utf8'))
  delete flow.spec.flows.find((f: { name: string }) => f.name === 'upload').jobTemplate.activeDeadlineSeconds
  return join(t.testdir({ 'retry.yaml': stringify(flow) }), 'retry.yaml')
}

t.test('the retry example as on a cluster: its 1 s deadline fails every attempt, DeadlineExceeded', async t => {
  const { code, out, err } = await run([RETRY])
  t.equal(code, 0)
  t.same(err, [])
  t.same(creations(out), [
    'jobflow-retry-fetch', 'jobflow-retry-upload', 'jobflow-retry-upload-2', 'jobflow-retry-upload-3',
    'jobflow-retry-notify'
  ])
  t.match(out.filter(l => /^\s+upload\s/.test(l)), [
    new RegExp(`jobflow-retry-upload\\s+Failed\\s+t=10s\\s+t=11s\\s+${DEADLINE}`),
    new RegExp(`jobflow-retry-upload-2\\s+Failed\\s+t=16s\\s+t=17s\\s+${DEADLINE}`),
    new RegExp(`jobflow-retry-upload-3\\s+Failed\\s+t=27s\\s+t=28s\\s+${DEADLINE}`)
  ], '1 s into each attempt, the backoff counted from there')
  const final = /jobflow-retry\s+Failed at t=38s \(2\/4 jobs succeeded, 1 failed, 1 skipped, 2 earlier attempts\)/
  t.ok(out.some(l => final.test(l)), 'notify runs, publish is skipped')
  const flaky = await run([RETRY, '--fail', 'upload:1'])
  t.ok(flaky.out.some(l => final.test(l)), '--fail upload:1 cannot help: the deadline ends the attempt first')
})

t.test(
  '--fail flow:N fails the first N attempts of a flow: with retries left the flow recovers, ' +
    'the earlier attempts stay in the table',
  async t => {
    const retry = retryWithoutDeadline(t)
    const recovered = await run([retry, '--fail', 'upload:1'])
    t.equal(recovered.code, 0)
    t.same(recovered.err, [])
    t.same(creations(recovered.out), [
      'jobflow-retry-fetch', 'jobflow-retry-upload', 'jobflow-retry-upload-2', 'jobflow-retry-publish'
    ])
    t.ok(
      recovered.out.some(l =>
        /jobflow-retry\s+Succeeded at t=45s \(3\/4 jobs succeeded, 1 skipped, 1 earlier attempt\)/.test(l)
      ),
      'the flows count, the earlier attempt is told apart'
    )
    t.match(recovered.out.filter(l => /^\s+upload\s/.test(l)), [
      /jobflow-retry-upload\s+Failed\s+t=10s\s+t=20s\s+BackoffLimitExceeded/,
      /jobflow-retry-upload-2\s+Succeeded\s+t=25s/
    ])

    const spent = await run([retry, '--fail', 'upload:3'])
    t.same(
      creations(spent.out).filter(n => n.includes('upload')),
      ['jobflow-retry-upload', 'jobflow-retry-upload-2', 'jobflow-retry-upload-3'],
      'two retries, then no more'
    )
    t.ok(spent.out.some(l => /jobflow-retry\s+Failed at t=65s/.test(l)))
  }
)

t.test('--set names a list item by its index: the rerun example raises check\'s deadline, then reruns', async t => {
  const fix = 'spec.flows[1].jobTemplate.activeDeadlineSeconds=600'
  const rerun = 'metadata.annotations[jobhooks.io/rerun]=1'
  const { code, out, err } = await run([RERUN, '--set', fix, '--set', rerun, '--at', '60'])
  t.equal(code, 0)
  t.same(err, [])
  t.equal(
    out.find(l => l.startsWith('t=60s'))?.replace(/^t=60s\s+jobflow-rerun\s+Running\s+/, ''),
    `edited (set ${fix}); edited (set ${rerun}); created Job jobflow-rerun-check-2; started jobflow-rerun-check-2`
  )
  t.ok(out.some(l => /jobflow-rerun\s+Succeeded at t=80s \(3\/3 jobs succeeded, 2 earlier attempts\)/.test(l)))

  const unfixed = await run([RERUN, '--set', rerun, '--at', '60'])
  t.ok(
    unfixed.out.some(l => new RegExp(`jobflow-rerun-check-2\\s+Failed\\s+t=60s\\s+t=61s\\s+${DEADLINE}`).test(l)),
    'a rerun of the spec as it was fails the same way'
  )
  const bad = await run([RERUN, '--set', 'metadata.annotations[=1', '--at', '5'])
  t.equal(bad.code, 2, 'an unclosed bracket is a usage error')
  const unnamed = await run([RERUN, '--set', 'spec.flows.name=x', '--at', '5'])
  t.equal(unnamed.code, 1)
  t.match(unnamed.err.join('\n'), /spec\.flows is a list of 3 items; name one by its index: spec\.flows\[0\]/)
})
