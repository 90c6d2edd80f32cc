// The browser the page tests and the page's benchmark run: Debian's `chromium` (CI installs it), or
// the binary CHROMIUM names; undefined where there is none, and what needs it says it skipped.
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

/**
 * Flags for a machine with a closed network, as root: no sandbox (a container's root has none),
 * and none of Chromium's own connections, which the network refuses many at a time.
 */
export const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']
