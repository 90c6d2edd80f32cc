// The simulator's HTML picture in a real browser: headless Chromium (Debian's `chromium`, or the
// binary CHROMIUM names) loads each example's page, and the DOM it built holds every step as a
// node and every dependency as an edge; its screenshot is a picture. CI installs Chromium; where
// there is none, this file says it skipped.
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { main } from '../../src/cli/simulate.js'
import { CHROMIUM_FLAGS, chromiumBinary, NO_CHROMIUM } from '../../bench/chromium.js'
import { exampleObjects, stepDependencies } from '../helpers/example-promises.js'

const EXAMPLES = fileURLToPath(new URL('../../manifests/examples/', import.meta.url))
const PNG_SIGNATURE = '89504e470d0a1a0a'

/** Runs Chromium headless on `args`: its stdout and stderr. A container's root has no sandbox. */
async function browse (binary: string, args: string[]): Promise<{ stdout: string, stderr: string }> {
  const flags = ['--headless', ...CHROMIUM_FLAGS, '--hide-scrollbars', '--window-size=1200,800']
  return await new Promise((resolve, reject) => {
    execFile(binary, [...flags, ...args], { timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${binary} failed: ${error.message}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })
}

async function htmlOf (file: string): Promise<string> {
  const out: string[] = []
  const code = await main([`${EXAMPLES}${file}`, '--kueue-quota', '2', '--output', 'html'], l => out.push(l), () => {})
  if (code !== 0) throw new Error(`simulate ${file} exited ${code}`)
  return out.join('\n')
}

const binary = chromiumBinary()
const skip = binary === undefined ? NO_CHROMIUM : false

for (const file of ['jobflow.yaml', 'jobflow-when.yaml', 'jobflow-kueue.yaml']) {
  t.test(`Chromium draws ${file}: every step a node, every dependency an edge, a picture`, { skip }, async t => {
    const dir = mkdtempSync(join(tmpdir(), 'jobhooks-picture-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const page = join(dir, 'flow.html')
    writeFileSync(page, await htmlOf(file))
    const flow = exampleObjects(file).find(o => o.kind === 'JobFlow')
    const flows: Array<{ name: string, dependencies?: string[], depends?: string }> = flow.spec.flows
    const { stdout: dom, stderr } = await browse(binary as string, ['--dump-dom', `file://${page}`])
    const dag = /<svg class="dag"[\s\S]*?<\/svg>/.exec(dom)?.[0] ?? ''
    t.same([...dag.matchAll(/<g class="step" data-step="([^"]+)"/g)].map(m => m[1]).sort(),
      flows.map(f => f.name).sort(), 'the DOM the browser built has every step')
    t.same([...dag.matchAll(/class="edge" data-from="([^"]+)" data-to="([^"]+)"/g)].map(m => `${m[1]}->${m[2]}`).sort(),
      flows.flatMap(f => stepDependencies(f).map(d => `${d}->${f.name}`)).sort(), 'and every dependency')
    t.match(dom, /<svg class="gantt"/, 'and the Gantt chart')
    t.notMatch(stderr, /Uncaught|SyntaxError|Failed to load|parsing error/i, 'no error while loading the page')
    const shot = join(dir, 'flow.png')
    await browse(binary as string, [`--screenshot=${shot}`, `file://${page}`])
    const png = readFileSync(shot)
    t.equal(png.subarray(0, 8).toString('hex'), PNG_SIGNATURE, 'a PNG')
    t.ok(png.length > 10_000, `a picture, not a blank page (${png.length} bytes)`)
  })
}
