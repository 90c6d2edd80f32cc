// scripts/built.mjs (npm run simulate, npm run crds, the plugin): it builds only when a source is
// newer than the last build, says so on stderr, and leaves stdout to the entry, so that output
// redirected to a file is exactly the document. Played in a folder of its own with stand-ins for
// tsc and the wasm step, so no real build runs.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')

/** A project of one source whose "build" writes the entry. */
function project (): string {
  const root = mkdtempSync(join(tmpdir(), 'built-'))
  for (const dir of ['scripts', 'src', 'dist/src/protocol', 'node_modules/typescript/bin']) {
    mkdirSync(join(root, dir), { recursive: true })
  }
  copyFileSync(join(ROOT, 'scripts', 'built.mjs'), join(root, 'scripts', 'built.mjs'))
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) writeFileSync(join(root, file), '{}')
  writeFileSync(join(root, 'src', 'entry.ts'), '')
  writeFileSync(join(root, 'node_modules/typescript/bin/tsc'), [
    "const { writeFileSync } = require('node:fs')",
    "writeFileSync('dist/entry.cjs', \"process.stdout.write('<!DOCTYPE html>' + process.argv.slice(2).join(' '))\")"
  ].join('\n'))
  writeFileSync(join(root, 'scripts', 'wasm.mjs'), '')
  return root
}

function simulate (root: string): { stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, ['scripts/built.mjs', 'dist/entry.cjs', '--output', 'html'], {
    cwd: root, encoding: 'utf8', timeout: 30_000
  })
  return { stdout: result.stdout, stderr: result.stderr }
}

t.test('a build is said on stderr, only when a source changed, and stdout is the document', async t => {
  const root = project()
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  const first = simulate(root)
  t.equal(first.stdout, '<!DOCTYPE html>--output html', 'stdout is exactly what the entry wrote')
  t.match(first.stderr, /^building… /, 'the first run builds, and says so')
  const second = simulate(root)
  t.same(second, { stdout: '<!DOCTYPE html>--output html', stderr: '' }, 'nothing changed: no build, not a word')
  const later = new Date(Date.now() + 60_000)
  utimesSync(join(root, 'src', 'entry.ts'), later, later)
  t.match(simulate(root).stderr, /^building… /, 'a source saved after the build: built again')
})
