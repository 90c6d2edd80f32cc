// Building the app for a test: a fixed clock, the shipped scripts, closed when the test ends.
import type { FastifyInstance } from 'fastify'
import type { AppOptions } from '../../src/app.js'
import { loadScriptLibrary, defaultHooksDir } from '../../src/scripts/library.js'
import { FIXED_NOW } from './fixtures.js'

export { FIXED_NOW }

interface Teardown { teardown: (fn: () => unknown) => void }

export async function testApp (t: Teardown, options: AppOptions = {}): Promise<FastifyInstance> {
  // Imported on first use: a test file that only wants FIXED_NOW does not load fastify (about 1 s of CPU).
  const { buildApp } = await import('../../src/app.js')
  const app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => FIXED_NOW, ...options })
  t.teardown(async () => await app.close())
  return app
}
