// Every fixture records the clock it was made for (test/fixtures/clocks.json), and the tests run
// it at that clock: curled with `x-jobhooks-now: <clock>`, it answers what the tests expect.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { FIXTURES } from './helpers/fixtures.js'
import { FIXED_NOW } from './helpers/app.js'

const recorded = (JSON.parse(readFileSync(join(FIXTURES, 'clocks.json'), 'utf8')) as { clocks: Record<string, string> })
  .clocks

t.test('clocks.json names every fixture and nothing else, each with an RFC 3339 clock', async t => {
  const files = readdirSync(FIXTURES)
    .filter(d => statSync(join(FIXTURES, d)).isDirectory())
    .flatMap(d =>
      readdirSync(join(FIXTURES, d))
        .filter(f => f.endsWith('.json'))
        .map(f => `${d}/${f}`)
    )
    .sort()
  t.same(Object.keys(recorded).sort(), files)
  for (const [file, clock] of Object.entries(recorded)) {
    t.match(clock, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, `${file}: ${clock}`)
  }
})

t.test('the tests run the fixtures at the clock they record', async t => {
  t.same(
    new Set(Object.values(recorded)),
    new Set([FIXED_NOW.toISOString().replace('.000Z', 'Z')]),
    "one clock, the tests' FIXED_NOW"
  )
})
