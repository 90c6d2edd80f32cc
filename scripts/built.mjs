// node scripts/built.mjs <dist entry> [args]: runs a compiled entry point (npm run simulate, npm
// run crds; `--build` as the entry only builds, for bin/kubectl-jobhooks.mjs), building the
// project first (as npm run build: tsc, then scripts/wasm.mjs) only when a
// source file or a tsconfig is newer than the last build. A full `tsc` takes about 26 s here; the
// check takes milliseconds.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const stamp = join(root, 'dist', '.built')

/** The latest modification time of the sources (.ts, .wat) under `dir` (0 when there are none). */
function newest (dir) {
  if (!existsSync(dir)) return 0
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) latest = Math.max(latest, newest(path))
    else if (/\.(ts|wat)$/.test(entry.name)) latest = Math.max(latest, statSync(path).mtimeMs)
  }
  return latest
}

function sourcesChanged () {
  if (!existsSync(stamp)) return true
  const built = statSync(stamp).mtimeMs
  const configs = ['tsconfig.json', 'tsconfig.build.json', 'package.json']
    .map(file => statSync(join(root, file)).mtimeMs)
  return Math.max(newest(join(root, 'src')), newest(join(root, 'bench')), ...configs) > built
}

function run (command, args) {
  const { status, signal } = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (signal !== null) process.kill(process.pid, signal)
  return status ?? 1
}

const [entry, ...args] = process.argv.slice(2)
if (entry === undefined) {
  console.error('usage: node scripts/built.mjs <dist entry> [args]')
  process.exit(2)
}
if (sourcesChanged()) {
  // On stderr, so that what the entry writes to stdout stays exactly its document.
  process.stderr.write('building… (a source changed since the last build; about half a minute)\n')
  // The stamp is taken before compiling: a file saved while tsc runs is compiled next time.
  const started = new Date()
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const status = run(process.execPath, [tsc, '-p', 'tsconfig.build.json'])
  if (status !== 0) process.exit(status)
  const wasm = join(root, 'dist', 'src', 'protocol', 'skip.wasm')
  const compiled = run(process.execPath, [join(root, 'scripts', 'wasm.mjs'), wasm])
  if (compiled !== 0) process.exit(compiled)
  writeFileSync(stamp, `${started.toISOString()}\n`)
  utimesSync(stamp, started, started)
}
if (entry !== '--build') process.exitCode = run(process.execPath, [join(root, entry), ...args])
