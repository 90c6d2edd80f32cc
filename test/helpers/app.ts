// Building the app for a test: a fixed clock, the shipped scripts, closed when the test ends.
import type { FastifyInstance } from 'fastify'
import { buildApp, type AppOptions } from '../../src/app.js'
import { loadScriptLibrary, defaultHooksDir } from '../../src/scripts/library.js'

export const FIXED_NOW = new Date('2026-01-02T03:04:05.000Z')

interface Teardown { teardown: (fn: () => unknown) => void }

export async function testApp (t: Teardown, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp({ scripts: loadScriptLibrary(defaultHooksDir()), clock: () => FIXED_NOW, ...options })
  t.teardown(async () => await app.close())
  return app
}
