// The image's budgets (npm run image:test; CI runs it after npm run image): it holds no
// devDependency, no test, bench or fixture file and no CLI or simulator, every production
// dependency still loads, it runs as uid 1000, and what it adds on top of its base stays within
// 60 MB.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { BASE_LABEL, IMAGE, inImage, inspectImage, MISSING_IMAGE, ROOT } from './image.js'

const RUNTIME_LAYER_BUDGET = 60_000_000
/** Dependencies only the CLI and the simulator import: the Dockerfile leaves them out with them. */
const CLI_ONLY = ['yaml']

const image = await inspectImage(IMAGE)
if (image === undefined) t.fail(MISSING_IMAGE)
else {
  t.test('it runs as the node user, uid and gid 1000', async (t) => {
    t.equal(image.Config.User, 'node', "the image's USER")
    t.equal((await inImage('id', ['-u'])).trim(), '1000', 'a process inside runs as uid 1000')
    t.equal((await inImage('id', ['-g'])).trim(), '1000', 'and gid 1000')
  })

  t.test('no devDependency is in node_modules', async (t) => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>
    }
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.dev === true)
      .map(([path]) => path)
    t.ok(devOnly.length > 0, `${devOnly.length} dev-only packages in package-lock.json`)
    const installed = new Set(JSON.parse(await inImage('node', ['-e', LIST_PACKAGES])) as string[])
    t.ok(installed.has('node_modules/fastify'), `${installed.size} packages installed, fastify among them`)
    t.same(
      devOnly.filter((path) => installed.has(path)),
      [],
      'none of them is installed'
    )
  })

  t.test('no test, bench or fixture file is in /app, and only what the service runs on', async (t) => {
    const files = (await inImage('find', ['/app'])).split('\n').filter((line) => line !== '')
    t.ok(files.length > 100, `${files.length} paths`)
    const testish = /\/(test|tests|__tests__|bench|benchmarks?|fixtures|specs?)(\/|$)|\.(test|spec|bench)\.[^/]*$/
    t.same(
      files.filter((file) => testish.test(file)),
      [],
      "no test, bench, fixture or spec file, ours or our dependencies'"
    )
    const top = files.filter((file) => /^\/app\/[^/]+$/.test(file)).sort()
    t.same(
      top,
      ['/app/dist', '/app/hooks', '/app/node_modules', '/app/package.json'],
      'the compiled service, the shipped scripts and the production dependencies'
    )
    t.same(
      files.filter((file) => /^\/app\/dist\/[^/]+$/.test(file)),
      ['/app/dist/src'],
      'dist holds the service only'
    )
  })

  t.test('the CLI, the simulator and what only they use stay out', async (t) => {
    const paths = (await inImage('find', ['/app/dist', '/app/node_modules', '-maxdepth', '2'])).split('\n')
    const absent = [
      '/app/dist/src/cli', '/app/dist/src/simulator', '/app/dist/bench',
      '/app/node_modules/wabt', ...CLI_ONLY.map(name => `/app/node_modules/${name}`)
    ]
    t.same(
      absent.filter((path) => paths.includes(path)),
      [],
      absent.join(', ')
    )
    t.ok(paths.includes('/app/dist/src/server.js'), 'the server is there')
    const wasm = await inImage('find', ['/app/dist/src/protocol', '-name', 'skip.wasm'])
    t.equal(wasm.trim(), '/app/dist/src/protocol/skip.wasm', 'the WebAssembly skip, compiled at build, is there')
  })

  t.test('every production dependency loads (nothing it needs was pruned)', async (t) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    const names = Object.keys(pkg.dependencies).filter(name => !CLI_ONLY.includes(name))
    const script = `for (const name of ${JSON.stringify(names)}) await import(name); console.log('loaded')`
    t.equal((await inImage('node', ['--input-type=module', '-e', script])).trim(), 'loaded', names.join(', '))
  })

  t.test(`what the image adds on top of its base is at most ${RUNTIME_LAYER_BUDGET / 1e6} MB`, async (t) => {
    const base = image.Config.Labels?.[BASE_LABEL]
    if (base === undefined) return t.fail(`${IMAGE} has no ${BASE_LABEL} label: build it with npm run image`)
    const baseImage = await inspectImage(base)
    if (baseImage === undefined) return t.fail(`its base ${base} is not here`)
    const added = image.Size - baseImage.Size
    t.comment(`${IMAGE}: ${mb(image.Size)}; ${mb(added)} on top of ${base} (${mb(baseImage.Size)})`)
    t.ok(added > 0, 'the image has layers of its own')
    t.ok(added <= RUNTIME_LAYER_BUDGET, `${mb(added)} ≤ ${mb(RUNTIME_LAYER_BUDGET)}`)
  })
}

function mb (bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

/** Run inside the image: every installed package as its package-lock path (node_modules/a/node_modules/@s/b). */
const LIST_PACKAGES = `
const { readdirSync, existsSync } = require('node:fs')
const found = []
function walk (dir, prefix) {
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('.')) continue
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(dir + '/' + entry)) visit(dir, prefix, entry + '/' + scoped); continue
    }
    visit(dir, prefix, entry)
  }
}
function visit (dir, prefix, name) {
  const path = prefix + name
  if (!existsSync(dir + '/' + name + '/package.json')) return
  found.push(path)
  if (existsSync(dir + '/' + name + '/node_modules')) walk(dir + '/' + name + '/node_modules', path + '/node_modules/')
}
walk('/app/node_modules', 'node_modules/')
console.log(JSON.stringify(found))
`
