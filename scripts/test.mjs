// npm test: the tests run as JavaScript. Every TypeScript file of src/, test/ and bench/ is
// transpiled by esbuild (types stripped, nothing checked: `npm run typecheck` and `npm run lint`
// do that) into .test-build/, the same tree, in about a second; tap then runs the compiled test
// files. Loading the sources through a TypeScript loader instead cost about two seconds of CPU in
// every test process, most of the suite's time on a 2-core machine.
//
// Paths stay the sources' own: each file's import.meta.url, dirname and filename are those of
// its .ts file, so a test that reads a fixture, an example or src/ itself finds it where it is.
// Each test file is a program (tap's API runs standalone): this script runs them two at a time
// (one per core; `--jobs N` to change), each in a plain `node`, those that took longest last time
// first, and reads their TAP. tap's own
// runner added a module loader of its own to every test process, for coverage and its process
// database, which cost most of a second more per file; `npm run coverage` still uses it, on the
// sources through tsx, for coverage by source line.
//
// `npm test -- test/app.test.ts …` runs the tests named (by their sources' paths). A file that
// fails, or runs longer than TIMEOUT_MS, has its whole output printed; the last line is tap's
// summary, `# { total: N, pass: N, fail: N }`, counting every assertion as tap does.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { transform } from 'esbuild'
import { Parser } from 'tap-parser'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, '.test-build')
const SOURCES = ['src', 'test', 'bench']
const SKIPPED = new Set(['fixtures', 'node_modules'])
/**
 * tap's own limit for a test file (its TAP_TIMEOUT, 30 s unless set); ours kills a file 10 s later.
 * The 10,000-item JobFlow of test/scenarios/jobflow-size.test.ts takes about 50 s alone and up to
 * 125 s beside another busy file on 2 cores: the limit is for a file that hangs, not a slow one.
 */
const TIMEOUT_SECONDS = 240
const TIMEOUT_MS = (TIMEOUT_SECONDS + 10) * 1000
/** How long each file took last time: the longest start first, so no long file is left for the end. */
const DURATIONS = join(root, 'node_modules', '.cache', 'jobhooks-test', 'durations.json')

/** The .ts files under `dir`, fixtures left out. */
function typescriptFiles (dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : typescriptFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** One file transpiled as tsx would run it, its import.meta pointing at the source. */
async function transpile (source) {
  const { code } = await transform(readFileSync(source, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: source,
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
    define: {
      'import.meta.url': JSON.stringify(pathToFileURL(source).href),
      'import.meta.dirname': JSON.stringify(dirname(source)),
      'import.meta.filename': JSON.stringify(source)
    }
  })
  const target = join(out, relative(root, source)).replace(/\.ts$/, '.js')
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, code)
}

/** The test files to run, by their sources' paths: those named, else every unit test. */
function testFiles (named) {
  const files = named.length > 0 ? named : typescriptFiles(join(root, 'test'))
  return files
    .map(file => relative(root, resolve(root, file)))
    .filter(file => file.endsWith('.test.ts'))
    .filter(file => named.length > 0 || !/^test\/(e2e|image|helpers)\//.test(file))
    .sort()
}

/** The files, those that took longest last time first (a file not seen before counts as longest). */
function longestFirst (files) {
  const last = lastDurations()
  const duration = file => last[file] ?? Infinity
  return [...files].sort((a, b) => duration(b) - duration(a))
}

/** The durations of the last run, by file; none before the first. */
function lastDurations () {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8'))
  } catch {
    return {}
  }
}

function saveDurations (results) {
  const last = lastDurations()
  for (const { file, ms } of results) last[file] = ms
  mkdirSync(dirname(DURATIONS), { recursive: true })
  writeFileSync(DURATIONS, JSON.stringify(last, null, 2))
}

/** Counts a test's assertions at every depth, as tap's summary does; a subtest's closing point is not one. */
function tally (parser, counts) {
  let closing = false
  parser.on('child', child => {
    tally(child, counts)
    child.on('complete', () => { closing = true })
  })
  parser.on('assert', result => {
    if (closing) {
      closing = false
      return
    }
    counts.total++
    if (result.skip) counts.skip++
    else if (result.todo) counts.todo++
    else if (result.ok) counts.pass++
    else counts.fail++
  })
}

/** Runs one compiled test file; resolves with its counts, whether it passed, and its output. */
function runTest (file) {
  const compiled = join(out, file.replace(/\.ts$/, '.js'))
  const started = Date.now()
  const child = spawn(process.execPath, [compiled], {
    cwd: root,
    env: {
      ...process.env,
      TAP_TIMEOUT: String(TIMEOUT_SECONDS),
      NODE_COMPILE_CACHE: join(root, 'node_modules', '.cache', 'node-compile-cache')
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const counts = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
  const parser = new Parser()
  tally(parser, counts)
  const output = []
  child.stdout.on('data', chunk => { output.push(chunk); parser.write(chunk) })
  child.stderr.on('data', chunk => output.push(chunk))
  let timedOut = false
  const timer = setTimeout(() => { timedOut = true; process.kill(-child.pid, 'SIGKILL') }, TIMEOUT_MS)
  return new Promise(resolve => child.on('close', (code, signal) => {
    clearTimeout(timer)
    parser.end()
    const passed = code === 0 && !timedOut && counts.fail === 0 && parser.ok
    if (!passed && counts.fail === 0) counts.fail++
    const why = timedOut ? `timed out after ${TIMEOUT_MS / 1000} s` : signal ?? `exit ${code}`
    resolve({ file, counts, passed, why, ms: Date.now() - started, output: Buffer.concat(output).toString() })
  }))
}

/** Runs the files `jobs` at a time, printing a line per file as it ends. */
async function runAll (files, jobs) {
  const results = []
  let next = 0
  async function worker () {
    while (next < files.length) {
      const result = await runTest(files[next++])
      results.push(result)
      const { counts, ms } = result
      console.log(`${result.passed ? 'ok' : 'not ok'} ${results.length} - ${result.file} # time=${ms}ms` +
        ` (${counts.pass}/${counts.total})`)
      if (!result.passed) console.log(`  # ${result.file}: ${result.why}\n${indent(result.output)}`)
    }
  }
  await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, worker))
  return results
}

/** A failed file's output, set off from the run's own lines. */
function indent (text) {
  return text.trimEnd().split('\n').map(line => `    ${line}`).join('\n')
}

/** tap's closing line, zero counts left out. */
function summary (results) {
  const total = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
  for (const { counts } of results) for (const key of Object.keys(total)) total[key] += counts[key]
  const shown = Object.entries(total).filter(([key, value]) => key === 'total' || value > 0)
  return `# { ${shown.map(([key, value]) => `${key}: ${value}`).join(', ')} }`
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { jobs: { type: 'string', default: String(availableParallelism()) } }
})
const jobs = Number(values.jobs)
if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs must be a positive integer, not ${values.jobs}`)
const files = testFiles(positionals)
if (files.length === 0) throw new Error(`no test files among ${positionals.join(' ')}`)

const started = Date.now()
// The WebAssembly skip, compiled beside its .wat where the sources load it (scripts/wasm.mjs).
const wasm = spawnSync(process.execPath, [join(root, 'scripts', 'wasm.mjs')], { stdio: 'inherit' })
if (wasm.status !== 0) throw new Error('scripts/wasm.mjs could not compile src/protocol/skip.wat')
rmSync(out, { recursive: true, force: true })
await Promise.all(SOURCES.flatMap(dir => typescriptFiles(join(root, dir))).map(transpile))
console.log(`TAP version 14\n# ${files.length} test files, transpiled in ${Date.now() - started} ms`)
const results = await runAll(longestFirst(files), jobs)
saveDurations(results)
console.log(`1..${results.length}`)
console.log(summary(results))
console.log(`# time=${Date.now() - started}ms`)
process.exitCode = results.every(result => result.passed) ? 0 : 1
