// The one fake Kubernetes API server of the tests: plain HTTP on 127.0.0.1 at a free port, every
// request recorded (method, path, headers, body), each answered by the test's handler, closed at
// the test's teardown. The fakes with behaviour of their own build on it: the executor's
// (executor.ts), the plugin's (fake-kubectl-server.ts), the live preview's (fake-read-api.ts).
// With it, the kubeconfig a client needs to reach it (kubeconfigFor).
import {
  createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { stringify } from 'yaml'

export interface SeenRequest {
  method: string
  /** The path and query. */
  url: string
  headers: IncomingHttpHeaders
  /** Every header as sent, repeated ones apart (two Impersonate-Group headers are two entries). */
  headersDistinct: Record<string, string[]>
  body: string
}

/**
 * An answer: a status with a JSON body (a string is sent as text), after `delayMs`; `hang` never
 * answers; `handled` means the handler wrote the response itself (a stream, a log).
 */
export type Reply =
  | { status: number, body?: unknown, headers?: Record<string, string>, delayMs?: number }
  | 'hang'
  | 'handled'

export type Handler = (request: SeenRequest, res: ServerResponse) => Reply | Promise<Reply>

export interface FakeApiServer {
  url: string
  requests: SeenRequest[]
  /** Most requests in flight at once. */
  maxInFlight: number
  /** What answers the next request (may be replaced by the test). */
  handler: Handler
  server: Server
}

interface Teardown {
  teardown: (fn: () => unknown) => void
}

export const FAKE_TOKEN = 'preview-token'

/** A Status answer of the API server. */
export function failure (code: number, message: string, reason?: string): Record<string, unknown> {
  const withReason = reason !== undefined ? { reason } : {}
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, ...withReason, code }
}

/**
 * Starts the server (stopped at the test's teardown), answering with `handler` (200 `{}` unless
 * given); over HTTPS with `tls`'s certificate and key.
 */
export async function fakeApiServer (
  t: Teardown, handler: Handler = () => ({ status: 200, body: {} }), tls?: { cert: string, key: string }
): Promise<FakeApiServer> {
  let inFlight = 0
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight++
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight)
    let answered = false
    // Counted out as its answer is written, or when the client gives up on it.
    const out = (): void => {
      if (!answered) inFlight--
      answered = true
    }
    res.on('close', out)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        headersDistinct: req.headersDistinct as Record<string, string[]>,
        body: Buffer.concat(chunks).toString('utf8')
      }
      fake.requests.push(seen)
      void Promise.resolve(fake.handler(seen, res)).then(reply => send(res, reply, out))
    })
  }
  const server = tls === undefined ? createServer(listener) : createHttpsServer(tls, listener)
  const fake: FakeApiServer = { url: '', requests: [], maxInFlight: 0, handler, server }
  const url = await listenUntilTeardown(t, server)
  fake.url = tls === undefined ? url : url.replace(/^http:/, 'https:')
  return fake
}

function send (res: ServerResponse, reply: Reply, out: () => void): void {
  if (reply === 'hang' || reply === 'handled') return
  setTimeout(() => {
    out()
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {})
    res.writeHead(reply.status, {
      'content-type': typeof reply.body === 'string' ? 'text/plain' : 'application/json',
      ...reply.headers
    })
    res.end(text)
  }, reply.delayMs ?? 0)
}

/** Listens on a free port of 127.0.0.1 until the test's teardown; the server's base URL. */
export async function listenUntilTeardown (t: Teardown, server: Server): Promise<string> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** What kubeconfigFor may add: more of the cluster's and the user's fields (`proxy-url`, `as`, `exec`). */
export interface KubeconfigExtras {
  namespace?: string
  cluster?: Record<string, unknown>
  /** Replaces the token user. */
  user?: Record<string, unknown>
  /** The file's name in `dir`. */
  file?: string
}

/**
 * A kubeconfig file in `dir` for `server`: context `fake`, a token user and, if given, a context
 * namespace (a string, or the extras).
 */
export function kubeconfigFor (dir: string, server: string, extras: string | KubeconfigExtras = {}): string {
  const { namespace, cluster = {}, user = { token: FAKE_TOKEN }, file = 'kubeconfig' } =
    typeof extras === 'string' ? { namespace: extras } : extras
  const path = join(dir, file)
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server, 'insecure-skip-tls-verify': true, ...cluster } }],
      users: [{ name: 'tester', user }],
      contexts: [
        {
          name: 'fake',
          context: { cluster: 'fake', user: 'tester', ...(namespace !== undefined ? { namespace } : {}) }
        }
      ],
      'current-context': 'fake'
    })
  )
  return path
}
