// What `npm ci --omit=dev` installs (the image, the plugin) is exactly what the service and the
// CLI import at run time: a package imported for its values is a dependency, one imported only for
// its types or by tests and tools is a devDependency.
import t from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sources(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** The package a specifier names: `@scope/name` or `name`, without a path inside it. */
function packageOf (specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] as string
}

/** The packages a file imports for their values (`import type` and `import { type x }` alone are not). */
export function runtimeImports (text: string): Set<string> {
  const found = new Set<string>()
  const statements = /^(?:import|export)\s+(?!type\s)([^;]*?)\s+from\s+'([^'.][^']*)'/gm
  for (const [, clause, specifier] of text.matchAll(statements)) {
    const names = /^\{([^}]*)\}$/.exec((clause as string).trim())?.[1]
    const typesOnly = names !== undefined && names.split(',').every(n => /^\s*(type\s|$)/.test(n))
    if (!typesOnly) found.add(specifier as string)
  }
  for (const [, specifier] of text.matchAll(/\bimport\('([^'.][^']*)'\)/g)) found.add(specifier as string)
  return new Set([...found].filter(s => !s.startsWith('node:')).map(packageOf))
}

t.test('type-only imports are told apart from imports of values', async t => {
  const text = [
    "import type { Job } from 'kubernetes-types/batch/v1.js'",
    "import { type Pod } from 'kubernetes-types/core/v1.js'",
    "import { parse } from 'yaml'",
    "import t from 'tap'",
    "export { Type } from '@sinclair/typebox/type'",
    "import { x } from './local.js'",
    "import { readFileSync } from 'node:fs'",
    "  const { KubeConfig } = await import('@kubernetes/client-node')"
  ].join('\n')
  t.same([...runtimeImports(text)].sort(), ['@kubernetes/client-node', '@sinclair/typebox', 'tap', 'yaml'])
})

t.test('the dependencies are what src/ imports at run time, and nothing else', async t => {
  const imported = new Set(sources(join(ROOT, 'src')).flatMap(file => [...runtimeImports(readFileSync(file, 'utf8'))]))
  t.same([...imported].sort(), Object.keys(pkg.dependencies).sort())
  for (const name of imported) t.notOk(name in pkg.devDependencies, `${name} is not a devDependency as well`)
})
