// Scripts shipped with the service: every file of the top-level `hooks/` folder, read once at
// start-up (the way go:embed ships scripts inside an operator binary).
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { packageFolder, packageRoot, packageText } from './package-files.js'

export { packageRoot } from './package-files.js'

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
  const files = readdirSync(dir).sort().filter(entry => statSync(join(dir, entry)).isFile())
  return scriptsOf(files, entry => readFileSync(join(dir, entry), 'utf8'))
}

/** The scripts of this package's own `hooks/` (embedded in the single-file plugin): the simulator's. */
export function shippedScriptLibrary (): ScriptLibrary {
  return scriptsOf(packageFolder('hooks'), entry => packageText(`hooks/${entry}`))
}

function scriptsOf (files: string[], read: (entry: string) => string): ScriptLibrary {
  const scripts = new Map<string, string>()
  for (const entry of files) {
    if (entry.endsWith('.md')) continue
    if (!isScriptName(entry)) throw new Error(`hooks/${entry}: a shipped script needs a plain file name`)
    scripts.set(entry, read(entry))
  }
  return scripts
}

/** The `hooks/` folder of this package. */
export function defaultHooksDir (): string {
  return join(packageRoot(), 'hooks')
}
