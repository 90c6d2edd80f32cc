// `kubectl jobhooks ui [--port N] [--address A] [-n NS | -A]`: serves the live page (server.ts) and
// prints its URL, the session's token in it, until Ctrl-C.
import type { Session } from '../kubectl/session.js'
import { startUi } from './server.js'

export async function uiCommand (session: Session): Promise<void> {
  const scope = session.options.allNamespaces ? undefined : session.namespace
  const ui = await startUi(session, scope)
  const { io } = session
  io.out(`Serving the jobhooks page for ${scope === undefined ? 'every namespace' : `namespace ${scope}`} ` +
    `at ${ui.url}\n`)
  if (session.options.address !== undefined && !['127.0.0.1', 'localhost', '::1'].includes(session.options.address)) {
    io.err(`warning: listening on ${session.options.address}: whoever reaches it with the URL acts as you\n`)
  }
  io.out('Open it in a browser; Ctrl-C stops it.\n')
  await new Promise<void>(resolve => {
    if (io.signal === undefined || io.signal.aborted) resolve()
    else io.signal.addEventListener('abort', () => resolve(), { once: true })
  })
  await ui.close()
}
