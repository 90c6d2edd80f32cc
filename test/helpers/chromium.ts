// The browser the page tests run: Debian's `chromium` (CI installs it), or the binary CHROMIUM
// names; undefined where there is none, and the tests that need it say they skipped.
import { accessSync, constants } from 'node:fs'
import { join } from 'node:path'

export function chromiumBinary (): string | undefined {
  if (process.env.CHROMIUM !== undefined && process.env.CHROMIUM !== '') return process.env.CHROMIUM
  for (const dir of (process.env.PATH ?? '').split(':')) {
    for (const name of ['chromium', 'chromium-browser']) {
      try {
        accessSync(join(dir, name), constants.X_OK)
        return join(dir, name)
      } catch {}
    }
  }
  return undefined
}

export const NO_CHROMIUM = 'no chromium on the PATH (apt-get install chromium, or set CHROMIUM)'
