// Who may make the service act: the check every hook call passes before its body is read.
// A call is Metacontroller's when it carries the bearer token of AUTH_TOKEN_FILE and, with
// mutual TLS, a client certificate signed by TLS_CLIENT_CA_FILE's CA; both when both are set.
import type { IncomingHttpHeaders } from 'node:http'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { checkBearer, parseToken, type Refusal } from './token.js'
import { watchFiles, type WatchedFiles } from './watched-file.js'

export type { Refusal } from './token.js'

/** What the guard reads of a request: nothing of its body. */
export interface CallerEvidence {
  headers: IncomingHttpHeaders
  socket: Socket
}

export interface HookGuard {
  /** Why the call is refused, or undefined when it may go on. */
  check: (caller: CallerEvidence) => Refusal | undefined
  /** For the start-up log: what is checked. */
  readonly description: string
  /** Stops re-reading the token file. */
  close: () => void
}

export interface GuardOptions {
  /** The file holding the token; none: no token is asked for. */
  tokenFile?: string
  /** Ask for a client certificate the server's TLS layer verified (mutual TLS). */
  clientCertificate: boolean
  /** How often the token file is read again. */
  reloadMs: number
  log?: { info: (msg: string) => void, error: (msg: string) => void }
}

/** Reads the token file (an unusable one is a start-up error) and keeps it current. */
export function createHookGuard (options: GuardOptions): HookGuard {
  const { tokenFile, clientCertificate, log } = options
  let token: WatchedFiles<Buffer> | undefined
  if (tokenFile !== undefined) {
    token = watchFiles({
      files: [tokenFile],
      parse: ([contents]) => parseToken(contents as Buffer, tokenFile),
      intervalMs: options.reloadMs,
      onChange: () => log?.info(`the token in ${tokenFile} changed: calls must carry the new one`),
      onError: error =>
        log?.error(`cannot use ${tokenFile} any more, the previous token stays in force: ${error.message}`)
    })
  }
  const checks = [token !== undefined ? 'a bearer token' : '', clientCertificate ? 'a client certificate' : ''].filter(
    s => s !== ''
  )
  return {
    description:
      checks.length > 0 ? `hook calls must carry ${checks.join(' and ')}` : 'hook calls are not authenticated',
    check (caller) {
      // Verified by the TLS layer against the client CA; the handshake itself admits callers
      // without one, so that the kubelet's probes reach /healthz and /readyz.
      if (clientCertificate && (caller.socket as TLSSocket).authorized !== true) return 'no_client_certificate'
      if (token === undefined) return undefined
      return checkBearer(caller.headers.authorization, token.current)
    },
    close: () => token?.stop()
  }
}

/**
 * One log line per source per interval, however many calls it makes: a caller that keeps trying
 * (or floods) must not flood the log. The line says how many refusals it stood for.
 */
export class RefusalLog {
  private readonly sources = new Map<string, { until: number, suppressed: number }>()

  constructor (
    private readonly intervalMs = 60_000,
    private readonly maxSources = 10_000,
    private readonly now: () => number = Date.now
  ) {}

  /** The number of refusals from `source` since its last line when one is due now, else undefined. */
  due (source: string): number | undefined {
    const now = this.now()
    const entry = this.sources.get(source)
    if (entry !== undefined && now < entry.until) {
      entry.suppressed++
      return undefined
    }
    if (this.sources.size >= this.maxSources) this.forgetExpired(now)
    this.sources.set(source, { until: now + this.intervalMs, suppressed: 0 })
    return entry?.suppressed ?? 0
  }

  private forgetExpired (now: number): void {
    for (const [source, entry] of this.sources) if (now >= entry.until) this.sources.delete(source)
    // Still full: many sources at once. Start over rather than grow without bound.
    if (this.sources.size >= this.maxSources) this.sources.clear()
  }
}
