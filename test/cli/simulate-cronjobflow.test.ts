// `simulate` over a CronJobFlow: `--until` (in seconds, or 15m, 3h) fast-forwards its schedule,
// and the report lists every run it started, how each ended, and which the history limits took.
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { run } from '../helpers/simulate-cli.js'

const EXAMPLE = fileURLToPath(new URL('../../manifests/examples/cronjobflow.yaml', import.meta.url))

/** The report's rows of runs: name, then the rest of the row. */
function runRows (out: string[]): string[][] {
  return out.filter(l => /^\s+report-\d+\s+t=/.test(l)).map(l => l.trim().split(/\s{2,}/))
}

t.test('--until 1h plays an hour of a schedule: a run a minute, the two newest successes kept', async t => {
  const { code, out, err } = await run([EXAMPLE, '--until', '1h'])
  t.equal(code, 0)
  t.same(err, [])
  const rows = runRows(out)
  t.equal(rows.length, 60, 'one run for each minute from 00:01 to 01:00')
  const first = `report-${Date.parse('2026-01-01T00:01:00Z') / 60_000}`
  t.same(rows[0], [first, 't=60s', 't=60s', '-', '-', 'deleted at t=200s'])
  t.same(rows.filter(r => r.at(-1)?.startsWith('deleted') === true).length, 57, 'all but the newest three deleted')
  t.same(rows.slice(-3).map(r => r[3]), ['Succeeded', 'Succeeded', 'Running'])
  t.ok(out.some(l => /^default\/report {2}Active \(60 runs, 57 deleted, next at t=3660s\)$/.test(l)), 'the headline')
  t.ok(out.some(l => l.includes('stopped at t=3600s (--until 3600)')))
})

t.test('--until takes seconds or a unit, and refuses anything else', async t => {
  const bad = await run([EXAMPLE, '--until', '3x'])
  t.not(bad.code, 0)
  t.match(bad.err.join('\n'), /--until must be a positive number of seconds \(or with m, h, d: 15m, 3h\), not "3x"/)
  const minutes = await run([EXAMPLE, '--until', '3m'])
  t.equal(runRows(minutes.out).length, 3, '3m: three runs')
})
