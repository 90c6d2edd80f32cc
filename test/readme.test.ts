// Every curl example of the README, run as printed against the service as `npm start` serves it
// (no cluster credentials, the real clock) with the output compared to the README's: they pin the
// fixture's clock, so they stay true whatever the date. Needs curl and jq, as the examples do
// (.ci/run installs them); without them the test says so and skips.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import { defaultHooksDir, loadScriptLibrary } from '../src/scripts/library.js'

const ROOT = join(import.meta.dirname, '..')
const run = promisify(execFile)

interface Example { command: string, output: string, line: number }

/** Each ```sh block whose commands are curl calls, with the fenced block right after it (what it prints). */
function curlExamples (readme: string): Example[] {
  const examples: Example[] = []
  const block = /```sh\n((?:(?!```)[\s\S])*)```\n```[a-z]*\n((?:(?!```)[\s\S])*)```/g
  for (const match of readme.matchAll(block)) {
    const [, command = '', output = ''] = match
    if (!command.trimStart().startsWith('curl ')) continue
    examples.push({ command: command.trim(), output: output.trim(), line: readme.slice(0, match.index).split('\n').length })
  }
  return examples
}

async function has (tool: string): Promise<boolean> {
  return await run('sh', ['-c', `command -v ${tool}`]).then(() => true, () => false)
}

const tools = await has('curl') && await has('jq')
t.test('every curl example of the README prints what the README shows', { skip: tools ? false : 'curl and jq are needed to run the README\'s examples' }, async t => {
  const examples = curlExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  t.ok(examples.length >= 2, `${examples.length} curl examples`)
  const app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), logger: false })
  t.teardown(async () => await app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  for (const example of examples) {
    t.match(example.command, /x-jobhooks-now: \d{4}-/, `README line ${example.line}: the example pins the fixture's clock`)
    const command = example.command.replaceAll('localhost:8080', `127.0.0.1:${port}`)
    const { stdout } = await run('sh', ['-c', command], { cwd: ROOT })
    t.equal(stdout.trim(), example.output, `README line ${example.line}: the printed answer`)
  }
})

/** Each ```sh block of one `npm run simulate -- …` line (not --live), with the block after it. */
function simulateExamples (readme: string): Example[] {
  const examples: Example[] = []
  const block = /```sh\n(npm run simulate -- [^\n]*)\n```\n```[a-z]*\n((?:(?!```)[\s\S])*)```/g
  for (const match of readme.matchAll(block)) {
    const [, command = '', output = ''] = match
    if (command.includes('--live') || command.includes('--kubeconfig')) continue
    examples.push({ command: command.trim(), output: output.replace(/\s+$/, ''), line: readme.slice(0, match.index).split('\n').length })
  }
  return examples
}

/** Whether `excerpt`'s lines appear in `lines` in order, each run between `...` lines contiguous. */
function isExcerpt (excerpt: string, lines: string[]): boolean {
  let from = 0
  for (const chunk of excerpt.split(/^\.\.\.$/m).map(c => c.split('\n').map(l => l.trimEnd()).filter((l, i, all) => !(l === '' && (i === 0 || i === all.length - 1))))) {
    if (chunk.length === 0) continue
    let found = -1
    for (let i = from; i + chunk.length <= lines.length && found < 0; i++) if (chunk.every((l, j) => lines[i + j] === l)) found = i
    if (found < 0) return false
    from = found + chunk.length
  }
  return true
}

t.test('every simulate example of the README prints what the README shows', async t => {
  const { main } = await import('../src/cli/simulate.js')
  const examples = simulateExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  t.ok(examples.length >= 5, `${examples.length} simulate examples`)
  const cwd = process.cwd()
  process.chdir(ROOT)
  t.teardown(() => process.chdir(cwd))
  for (const example of examples) {
    const out: string[] = []
    const code = await main(example.command.split(/\s+/).slice(4), line => out.push(...line.split('\n')), () => {})
    t.equal(code, 0, `README line ${example.line}: ${example.command}`)
    const lines = out.map(l => l.trimEnd())
    t.ok(isExcerpt(example.output, lines), `README line ${example.line}: the printed output is what it prints`, { found: lines.join('\n'), wanted: example.output })
  }
})
