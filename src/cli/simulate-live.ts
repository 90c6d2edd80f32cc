// `npm run simulate -- --live -f <manifest>`: a read-only preview against a real cluster.
import type { Write } from './simulate.js'

export async function liveMain (_argv: string[], _write: Write, writeError: Write): Promise<number> {
  writeError('simulate: --live is not built yet')
  return 2
}
