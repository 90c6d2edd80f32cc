// Hook requests from test/fixtures/, as Metacontroller sends them. Each call returns a fresh copy.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HookContext, SyncRequest } from '../../src/protocol/hooks.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { loadScriptLibrary, defaultHooksDir } from '../../src/scripts/library.js'

/** The clock every fixture was recorded at. */
export const FIXED_NOW = new Date('2026-01-02T03:04:05.000Z')

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')

export function fixture<T = SyncRequest> (path: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as T
}

export const SHIPPED_SCRIPTS = loadScriptLibrary(defaultHooksDir())

export function context (now: Date = FIXED_NOW): HookContext {
  return { now, scripts: SHIPPED_SCRIPTS }
}

/** The desired children of a kind, by name. */
export function childrenOf (children: KubeObject[], kind: string): Map<string, KubeObject> {
  return new Map(children.filter(c => c.kind === kind).map(c => [c.metadata.name, c]))
}

/** Reads a nested field of an object for assertions: path('spec.template.spec', job). */
export function at (value: unknown, path: string): any {
  return path.split('.').reduce<any>((v, key) => (v === undefined || v === null ? undefined : v[key]), value)
}
