// What keeps the page the user's own: it answers only under the names of the address it listens on
// (a page elsewhere that points a DNS name at 127.0.0.1 is refused), every API request carries the
// session's token (in the URL the command printed, after `#`: never sent to a server, so neither
// another site nor another user of the machine who reads the page has it), and a write carries it
// in a header a cross-site form cannot send. The page loads nothing from elsewhere (its CSP says so).
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

export const TOKEN_HEADER = 'x-jobhooks-token'

/** A fresh token for one run of `ui`. */
export function newToken (): string {
  return randomBytes(24).toString('base64url')
}

/**
 * The Host values a request may carry: the address and port listened on, and loopback's names;
 * listening on every interface (0.0.0.0, ::), each interface's address (`interfaces`).
 */
export function allowedHosts (address: string, port: number, interfaces: readonly string[] = []): Set<string> {
  const everywhere = address === '0.0.0.0' || address === '::'
  const hosts = [address, '127.0.0.1', 'localhost', '[::1]', ...everywhere ? interfaces : []]
  return new Set(hosts.map(host => `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`))
}

export function tokenMatches (given: string | undefined, token: string): boolean {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The token of a request: the header for a write, the header or `?token=` for a read (EventSource sends no header). */
export function requestToken (request: IncomingMessage, url: URL, write: boolean): string | undefined {
  const header = request.headers[TOKEN_HEADER]
  if (typeof header === 'string') return header
  return write ? undefined : url.searchParams.get('token') ?? undefined
}

/** The page and its files, and what they may load: themselves only. */
export const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store'
}

export function refuse (res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json', ...PAGE_HEADERS })
  res.end(JSON.stringify({ message }))
}
