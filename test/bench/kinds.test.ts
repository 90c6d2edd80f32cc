// bench/kinds.ts judges each kind's goals from what it measured: p99, JSON.parse ÷ sync at the
// largest size, and growth no faster than the input or than JSON.parse of the same bodies.
import t from 'tap'
import { kindGoals, type KindRow } from '../../bench/kinds.js'

function rows (small: Partial<KindRow>, large: Partial<KindRow>): KindRow[] {
  const base = { kind: 'DaemonJob', unit: 'Nodes', bodyBytes: 1, responseBytes: 1, requests: 50, p99: 100 }
  return [
    { ...base, size: 500, p50: 8, parseMs: 20, ...small },
    { ...base, size: 5000, p50: 90, parseMs: 240, ...large }
  ]
}
const verdict = (lines: string[], about: RegExp): string | undefined =>
  lines.find(l => about.test(l))?.match(/^- (PASS|FAIL|INFO)/)?.[1]

t.test('growth up to 12× for 10× the objects passes, and up to what JSON.parse of the same bodies grew', async t => {
  t.equal(verdict(kindGoals(rows({}, { p50: 96 })), /grows/), 'PASS', '12×')
  t.equal(verdict(kindGoals(rows({}, { p50: 97 })), /grows/), 'FAIL', 'past 12×, JSON.parse grew 12×')
  t.equal(verdict(kindGoals(rows({}, { p50: 97, parseMs: 260 })), /grows/), 'PASS', '12.1×, JSON.parse grew 13×')
  t.equal(verdict(kindGoals(rows({}, { p50: 120, parseMs: 260 })), /grows/), 'FAIL', '15×: worse than linear')
  t.match(kindGoals(rows({}, { p50: 97, parseMs: 260 })).join('\n'), /JSON\.parse of the same bodies grows 13\.00×/)
})

t.test('the largest size: p99 under 1 s, and a sync at least 1.5 times as fast as JSON.parse', async t => {
  t.equal(verdict(kindGoals(rows({}, {})), /as fast as JSON\.parse/), 'PASS')
  t.equal(verdict(kindGoals(rows({}, { p50: 160 })), /as fast as JSON\.parse/), 'PASS', '1.5×')
  t.equal(verdict(kindGoals(rows({}, { p50: 161 })), /as fast as JSON\.parse/), 'FAIL', 'under 1.5×')
  t.equal(verdict(kindGoals(rows({}, { p99: 1000 })), /p99/), 'FAIL')
})
