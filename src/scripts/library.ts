// Scripts shipped with the service: every file of the top-level `hooks/` folder, read once at
// start-up (the way go:embed ships scripts inside an operator binary).
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Script name → content. */
export type ScriptLibrary = ReadonlyMap<string, string>

/** What a script name looks like, as a pattern a schema can carry too. */
export const SCRIPT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*$'
export const MAX_SCRIPT_NAME = 253
const SCRIPT_NAME = new RegExp(SCRIPT_NAME_PATTERN)

/**
 * A script name is a plain file name: it becomes a ConfigMap key and a path under /scripts, so
 * no slashes, no leading dot, nothing a shell or the API server would read differently.
 */
export function isScriptName (name: string): boolean {
  return name.length <= MAX_SCRIPT_NAME && SCRIPT_NAME.test(name)
}

/** Loads every script file of `dir`. Documentation (`*.md`) is not a script. */
export function loadScriptLibrary (dir: string): ScriptLibrary {
  const scripts = new Map<string, string>()
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry)
    if (entry.endsWith('.md') || !statSync(path).isFile()) continue
    if (!isScriptName(entry)) throw new Error(`hooks/${entry}: a shipped script needs a plain file name`)
    scripts.set(entry, readFileSync(path, 'utf8'))
  }
  return scripts
}

/** The folder of this package's package.json, found by walking up from this module (src/ or dist/src/). */
export function packageRoot (): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the package root (package.json)')
    dir = parent
  }
  return dir
}

/** The `hooks/` folder of this package. */
export function defaultHooksDir (): string {
  return join(packageRoot(), 'hooks')
}
