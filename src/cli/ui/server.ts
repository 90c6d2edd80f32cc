// The server behind `kubectl jobhooks ui`: the page's three files, the live streams and the writes,
// on one address (127.0.0.1 unless --address says otherwise), for one user, through that user's
// kubeconfig, as `kubectl proxy` works. Nothing runs in the cluster; the server stops with the command.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { networkInterfaces } from 'node:os'
import { packageText } from '../../scripts/package-files.js'
import { kindNamed } from '../kubectl/kinds.js'
import type { Session } from '../kubectl/session.js'
import { act } from './acts.js'
import { allowedHosts, newToken, PAGE_HEADERS, refuse, requestToken, tokenMatches } from './guard.js'
import { openEventStream } from './sse.js'
import { listStream, logsStream, objectStream } from './streams.js'

/** The page's files, by path, with their types (read from the package, or the single executable). */
const FILES: Record<string, { file: string, type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui.js': { file: 'ui.js', type: 'text/javascript; charset=utf-8' },
  '/ui.css': { file: 'ui.css', type: 'text/css; charset=utf-8' }
}
export const PAGE_FOLDER = 'src/cli/ui/page'
/** The largest write body read: an action is a few names. */
const MAX_BODY = 16 * 1024
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/
const DIGITS = /^\d{1,9}$/

export interface Ui {
  url: string
  close: () => Promise<void>
}

interface UiState {
  session: Session
  /** The namespace the page shows; undefined with -A. */
  scope: string | undefined
  token: string
  hosts: Set<string>
  files: Map<string, string>
  stopping: AbortController
}

async function readBody (request: IncomingMessage): Promise<unknown> {
  let body = ''
  for await (const chunk of request) {
    body += (chunk as Buffer).toString('utf8')
    if (body.length > MAX_BODY) throw new RangeError('body too large')
  }
  return JSON.parse(body)
}

function serveFile (state: UiState, res: ServerResponse, path: string): void {
  const { file, type } = FILES[path] as { file: string, type: string }
  res.writeHead(200, { 'content-type': type, ...PAGE_HEADERS })
  res.end(state.files.get(file) ?? '')
}

/** A query parameter that must be a name (or digits); undefined where absent, null where malformed. */
function param (url: URL, key: string, pattern = NAME): string | undefined | null {
  const value = url.searchParams.get(key)
  if (value === null) return undefined
  return pattern.test(value) ? value : null
}

function stream (state: UiState, res: ServerResponse, url: URL): void {
  const events = openEventStream(res, state.stopping.signal)
  const [namespace, name] = [param(url, 'namespace'), param(url, 'name')]
  // EventSource opens a stream again by itself when it ends: `end` tells the page not to.
  const ended = (): void => {
    events.send('end', {})
    events.close()
  }
  if (url.pathname === '/api/stream/list') {
    void listStream(state.session, events, state.scope).finally(ended)
    return
  }
  const kind = kindNamed(url.searchParams.get('kind') ?? '')
  if (typeof namespace !== 'string' || typeof name !== 'string') {
    events.send('failure', { message: 'error: a stream needs a namespace and a name' })
    return ended()
  }
  if (url.pathname === '/api/stream/object' && kind !== undefined) {
    void objectStream(state.session, events, kind, namespace, name).finally(ended)
    return
  }
  const [step, attempt, item] = [param(url, 'step'), param(url, 'attempt', DIGITS), param(url, 'item', DIGITS)]
  if (url.pathname === '/api/stream/logs' && typeof step === 'string' && attempt !== null && item !== null) {
    const asked = { namespace, name, step, follow: url.searchParams.get('follow') === '1' }
    void logsStream(state.session, events, {
      ...asked, ...attempt !== undefined ? { attempt } : {}, ...item !== undefined ? { item } : {}
    }).finally(ended)
    return
  }
  events.send('failure', { message: 'error: no such stream, or a parameter that is not a name' })
  ended()
}

async function write (state: UiState, request: IncomingMessage, res: ServerResponse): Promise<void> {
  const origin = request.headers.origin
  if (origin !== undefined && !state.hosts.has(origin.replace(/^https?:\/\//, ''))) {
    return refuse(res, 403, 'error: a write from another origin')
  }
  if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
    return refuse(res, 415, 'error: a write is JSON')
  }
  let body: unknown
  try {
    body = await readBody(request)
  } catch {
    return refuse(res, 400, 'error: not a JSON body of at most 16 KiB')
  }
  const answer = await act(state.session, body)
  refuse(res, answer.status, answer.message)
}

async function handle (state: UiState, request: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!state.hosts.has(request.headers.host ?? '')) {
    return refuse(res, 421, 'error: this page answers on its own address only')
  }
  const url = new URL(request.url ?? '/', 'http://page')
  const isWrite = request.method === 'POST'
  if (!isWrite && request.method !== 'GET') return refuse(res, 405, 'error: GET or POST')
  if (!isWrite && url.pathname in FILES) return serveFile(state, res, url.pathname)
  if (!url.pathname.startsWith('/api/')) return refuse(res, 404, 'error: not found')
  if (!tokenMatches(requestToken(request, url, isWrite), state.token)) {
    return refuse(res, 401, "error: this session's token is missing or wrong: open the URL the command printed")
  }
  if (isWrite && url.pathname === '/api/act') return await write(state, request, res)
  if (!isWrite && url.pathname.startsWith('/api/stream/')) return stream(state, res, url)
  refuse(res, 404, 'error: not found')
}

/** Starts the page's server: `scope` is the namespace listed (undefined: every namespace). */
export async function startUi (session: Session, scope: string | undefined): Promise<Ui> {
  const address = session.options.address ?? '127.0.0.1'
  const files = new Map(Object.values(FILES).map(({ file }) => [file, packageText(`${PAGE_FOLDER}/${file}`)]))
  const stopping = new AbortController()
  const state: UiState = { session, scope, token: newToken(), hosts: new Set(), files, stopping }
  const server: Server = createServer((request, res) => {
    handle(state, request, res).catch(error => {
      if (!res.headersSent) refuse(res, 500, `error: ${error instanceof Error ? error.message : String(error)}`)
      else res.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(session.options.port ?? 0, address, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const interfaces = Object.values(networkInterfaces()).flatMap(list => (list ?? []).map(i => i.address))
  state.hosts = allowedHosts(address, port, interfaces)
  const host = address.includes(':') ? `[${address}]` : address
  return {
    url: `http://${host}:${port}/#token=${state.token}`,
    close: async () => {
      stopping.abort()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}
