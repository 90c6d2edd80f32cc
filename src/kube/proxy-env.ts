// The proxy kubectl takes from the environment when the kubeconfig's cluster names none
// (client-go's transport uses Go's http.ProxyFromEnvironment): HTTPS_PROXY for an https server,
// HTTP_PROXY for an http one (the upper-case name first, then the lower-case one), none for a
// server NO_PROXY names, and never for localhost or a loopback address. client-node 1.4 reads only
// the kubeconfig's proxy-url, so the client sets that from here (client.ts).
import { isIP } from 'node:net'

/** The proxy URL for requests to `server`, or undefined for a direct connection. */
export function proxyFromEnvironment (server: URL, env: NodeJS.ProcessEnv): string | undefined {
  const names = server.protocol === 'https:' ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy']
  const proxy = firstSet(env, names)
  if (proxy === undefined) return undefined
  const host = bareHost(server.hostname)
  if (host === 'localhost' || isLoopback(host)) return undefined
  const port = server.port !== '' ? server.port : server.protocol === 'https:' ? '443' : '80'
  const exempt = (firstSet(env, ['NO_PROXY', 'no_proxy']) ?? '').split(',').map(e => e.trim()).filter(e => e !== '')
  if (exempt.some(entry => exempts(entry, host, port))) return undefined
  // As Go: a proxy written without a scheme is an http one.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`
}

function firstSet (env: NodeJS.ProcessEnv, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = env[name]
    if (value !== undefined && value !== '') return value
  }
  return undefined
}

/** A host without the brackets of an IPv6 literal, in lower case. */
function bareHost (host: string): string {
  return host.replace(/^\[(.*)\]$/, '$1').toLowerCase()
}

function isLoopback (host: string): boolean {
  if (isIP(host) === 4) return host.startsWith('127.')
  return isIP(host) === 6 && (host === '::1' || host === '0:0:0:0:0:0:0:1')
}

/**
 * Whether one NO_PROXY entry exempts `host:port`, as Go reads it: `*` every host; an IP address
 * or CIDR block; a domain, which exempts itself and its subdomains (a leading dot: the subdomains
 * only); any of them with `:port` for that port alone.
 */
function exempts (entry: string, host: string, port: string): boolean {
  if (entry === '*') return true
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry)
  if (cidr !== null) return inBlock(host, bareHost(cidr[1] as string), Number(cidr[2]))
  const [name, entryPort] = splitPort(entry.toLowerCase())
  if (entryPort !== undefined && entryPort !== port) return false
  if (isIP(name) !== 0) return name === host
  if (name.startsWith('.')) return host.endsWith(name)
  return host === name || host.endsWith(`.${name}`)
}

/** `host:port` apart: `[::1]:8080`, `example.com:443`; a bare IPv6 address has no port. */
function splitPort (entry: string): [string, string | undefined] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
  if (bracketed !== null) return [bracketed[1] as string, bracketed[2]]
  const parts = entry.split(':')
  return parts.length === 2 ? [parts[0] as string, parts[1]] : [entry, undefined]
}

/** Whether IPv4 address `host` lies in `base/bits` (an IPv6 block exempts only its own address). */
function inBlock (host: string, base: string, bits: number): boolean {
  if (isIP(host) !== 4 || isIP(base) !== 4) return host === base
  const value = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0)
  if (bits === 0) return true
  const size = 2 ** (32 - Math.min(bits, 32))
  return Math.floor(value(host) / size) === Math.floor(value(base) / size)
}
