// The files of this package that the code reads while it runs: the CRDs and CompositeControllers of
// manifests/, the scripts of hooks/, package.json. From the package's folder, or, in the single-file
// plugin (scripts/plugin-build.mjs), from the executable's own assets: the same files, embedded when
// it was built, with an index of each folder (node:sea has no listing on Node 22).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { getAsset, isSea } from 'node:sea'

/** The asset that lists the files of each embedded folder: `{ "manifests/crds": ["jobflow.yaml", …] }`. */
export const PACKAGE_INDEX_ASSET = 'package-files.json'

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

/** The regular files of a folder of the package (`manifests/crds`), by name, sorted. */
export function packageFolder (folder: string): string[] {
  if (isSea()) {
    const index = JSON.parse(getAsset(PACKAGE_INDEX_ASSET, 'utf8')) as Record<string, string[] | undefined>
    const names = index[folder]
    if (names === undefined) throw new Error(`${folder}: not embedded in this executable`)
    return [...names].sort()
  }
  const dir = join(packageRoot(), folder)
  return readdirSync(dir).filter(name => statSync(join(dir, name)).isFile()).sort()
}

/** A file of the package (`manifests/crds/jobflow.yaml`, `package.json`) as text. */
export function packageText (path: string): string {
  if (isSea()) return getAsset(path, 'utf8')
  return readFileSync(join(packageRoot(), path), 'utf8')
}

/** The version in package.json. */
export function packageVersion (): string {
  const json = JSON.parse(packageText('package.json')) as { version?: unknown }
  return String(json.version ?? 'unknown')
}
