// The house, read from its own imports: layers only point down, a kind never imports another
// kind, an action never imports a kind or another action, and src/k8s/ imports nothing above it.
// Every relative import of every file under src/ counts, type-only imports too: a layer that needs
// a type from above has its design upside down.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

const SRC = join(import.meta.dirname, '..', 'src')

function files (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? files(path) : entry.name.endsWith('.ts') ? [relative(SRC, path)] : []
  })
}

/** The files under src/ that `file` imports (relative imports, resolved; `.js` names the `.ts`). */
function importsOf (file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8')
  const specifiers = [...text.matchAll(/^(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/gm)].map(m => m[1] as string)
  return specifiers.map(s => normalize(join(dirname(file), s)).replace(/\.js$/, '.ts'))
}

const ACTION_PARTS = new Set([
  'actions/types.ts',
  'actions/registry.ts',
  'actions/lifecycle.ts',
  'actions/pods.ts',
  'actions/index.ts'
])
/** An action plugin: a file of src/actions/ that is not the actions' shared machinery. */
const isPlugin = (file: string): boolean => file.startsWith('actions/') && !ACTION_PARTS.has(file)
/** The kind folder a file belongs to (controllers/<kind>/), if any; `common` is shared by the kinds. */
const kindOf = (file: string): string | undefined => /^controllers\/([^/]+)\//.exec(file)?.[1]

/**
 * How high each part of the house stands: a file may import only files of its own rank or below.
 * the CLI → the server, the hook thread's entry and the simulator (which plays Metacontroller around
 * the app) → app and its plugins → config and the hook thread as the app drives it →
 * the kinds' registry and runner → the kinds → the actions, what the kinds share and the formats
 * others read (a JobFlow's status) → the wire → effects, scripts, trust → the API client → k8s.
 */
function rank (file: string): number {
  if (file.startsWith('k8s/')) return 0
  if (file.startsWith('kube/')) return 1
  if (/^(effects|scripts|trust)\//.test(file)) return 2
  if (file.startsWith('protocol/')) return 3
  if (file.startsWith('actions/') || file.startsWith('controllers/common/') || file.startsWith('formats/')) return 4
  if (kindOf(file) !== undefined) return 5
  if (file.startsWith('controllers/')) return 6
  if (file === 'config.ts' || file.startsWith('thread/')) return 7
  if (file === 'app.ts' || file.startsWith('plugins/')) return 8
  if (file === 'server.ts' || file === 'thread-main.ts' || file.startsWith('simulator/')) return 9
  if (file.startsWith('cli/')) return 10
  return -1
}

const all = files(SRC)
const graph = new Map(all.map(file => [file, importsOf(file)]))

t.test('every file of src/ has a place in the house', async t => {
  t.same(
    all.filter(f => rank(f) < 0),
    [],
    'files outside every layer'
  )
  for (const [file, imports] of graph) {
    t.same(
      imports.filter(i => !all.includes(i)),
      [],
      `${file} imports only files that exist`
    )
  }
})

t.test('layers only point down', async t => {
  const upward = [...graph].flatMap(([file, imports]) =>
    imports.filter(i => rank(i) > rank(file)).map(i => `${file} → ${i}`)
  )
  t.same(upward, [], 'no import reaches a higher layer')
})

t.test('src/k8s/ imports nothing above it', async t => {
  const outside = [...graph]
    .filter(([file]) => file.startsWith('k8s/'))
    .flatMap(([file, imports]) => imports.filter(i => !i.startsWith('k8s/')).map(i => `${file} → ${i}`))
  t.same(outside, [])
})

t.test('a kind never imports another kind', async t => {
  const crossing = [...graph].flatMap(([file, imports]) => {
    const kind = kindOf(file)
    return kind === undefined
      ? []
      : imports
        .filter(i => {
          const other = kindOf(i)
          return other !== undefined && other !== kind && other !== 'common'
        })
        .map(i => `${file} → ${i}`)
  })
  t.same(crossing, [])
})

t.test('an action never imports a kind, and a plugin never imports another plugin', async t => {
  const intoKinds = [...graph]
    .filter(([file]) => file.startsWith('actions/'))
    .flatMap(([file, imports]) => imports.filter(i => i.startsWith('controllers/')).map(i => `${file} → ${i}`))
  t.same(intoKinds, [], 'actions do not reach into controllers/')
  const pluginToPlugin = [...graph]
    .filter(([file]) => isPlugin(file) && file !== 'actions/index.ts')
    .flatMap(([file, imports]) => imports.filter(i => isPlugin(i) && i !== file).map(i => `${file} → ${i}`))
  t.same(pluginToPlugin, [], 'plugins stand alone')
})

t.test('no two folders import each other', async t => {
  const folder = (file: string): string =>
    kindOf(file) !== undefined ? `controllers/${kindOf(file) as string}` : dirname(file)
  const edges = new Set(
    [...graph].flatMap(([file, imports]) =>
      imports.map(i => `${folder(file)} → ${folder(i)}`).filter(e => !/^(.+) → \1$/.test(e))
    )
  )
  const loops = [...edges]
    .filter(e => {
      const [a, b] = e.split(' → ')
      return edges.has(`${b as string} → ${a as string}`)
    })
    .sort()
  t.same(loops, [])
})

/** Every import circle between files, each named once by its path from its smallest file back to it. */
function cycles (imports: ReadonlyMap<string, string[]>): string[] {
  const found = new Set<string>()
  const visit = (path: string[]): void => {
    const file = path[path.length - 1] as string
    for (const next of imports.get(file) ?? []) {
      const at = path.indexOf(next)
      if (at >= 0) {
        const loop = path.slice(at)
        const start = loop.indexOf([...loop].sort()[0] as string)
        found.add([...loop.slice(start), ...loop.slice(0, start), loop[start] as string].join(' → '))
      } else if (!done.has(next)) {
        visit([...path, next])
      }
    }
  }
  // A file whose every path has been walked can lead into no circle not already found.
  const done = new Set<string>()
  for (const file of [...imports.keys()].sort()) {
    visit([file])
    done.add(file)
  }
  return [...found].sort()
}

t.test('no import circle between files, type-only imports included', async t => {
  t.same(cycles(graph), [], 'files that import each other, directly or around a circle')
})

t.test('no file of src/ is over 500 lines', async t => {
  const long = all
    .map(file => ({ file, lines: readFileSync(join(SRC, file), 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > 500)
    .map(({ file, lines }) => `${file}: ${lines} lines`)
  t.same(long, [], 'files to split')
})
