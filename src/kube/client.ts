// The one client of the Kubernetes API: the effects executor, the kubectl plugin and the live
// preview all send their requests through it, with one timeout and one retry policy, and read
// its errors as kubectl's (errors.ts).
//
// Built on @kubernetes/client-node's KubeConfig for everything a kubeconfig says (kubeconfig.ts):
// `applyToHTTPSOptions` gives the Authorization header (a token, a token file read again as it
// rotates, an exec credential plugin run again once its credential expires, an auth provider),
// client certificates, the CA, insecure-skip-tls-verify, tls-server-name and an agent for the
// cluster's `proxy-url` (hpagent's CONNECT tunnel for http(s), socks-proxy-agent for socks://).
// client-node 1.4 reads no HTTPS_PROXY or NO_PROXY: the client reads them as kubectl does
// (proxy-env.ts) and hands client-node the proxy as the cluster's proxy-url.
// The requests themselves are plain node:http(s) requests, not client-node's generated API. What
// we checked in 1.4: that API picks a patch's content type (merge, strategic merge) and takes an
// abort signal only through per-call middleware (setHeaderOptions, RequestContext.setSignal),
// throws an ApiException for every status but 2xx where the executor classifies each answer by
// its status and text, and has watch and log helpers of its own. Here each request carries its
// exact content type and body, one abort signal (the caller's budget and the timeout), comes back
// as status, headers and text whatever the status, or as a stream. Loading client-node took
// 0.8-1.3 s here (2026-12-07, a busy 2-core machine), so it is loaded only with a kubeconfig.
import { IncomingMessage, request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { KubeConfig } from '@kubernetes/client-node'
import { isRecord } from '../k8s/types.js'
import { ConnectionError, KubeError, connectionError, statusError, systemCode, timeoutError } from './errors.js'
import { loadKubeconfig, serverOf, type KubeconfigChoice } from './kubeconfig.js'
import { proxyFromEnvironment } from './proxy-env.js'

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/** One request to the API server. */
export interface ApiRequest {
  method: Method
  /** The path and query: `/api/v1/namespaces/a/pods/b`. */
  path: string
  /** The body's content type (a JSON body without one is `application/json`). */
  contentType?: string
  /** Sent as JSON; none for undefined. */
  body?: unknown
  /** Ends the request (and any retry) early. */
  signal?: AbortSignal
}

/** The answer, whatever its status. */
export interface ApiAnswer {
  statusCode: number
  body: string
  headers: IncomingHttpHeaders
}

/** Who to act as: kubectl's --as and --as-group (the Impersonate-User and Impersonate-Group headers). */
export interface Impersonation {
  user?: string
  groups?: readonly string[]
}

export interface ApiClientOptions {
  /**
   * How long one call may take, retries included: for a stream, until its answer starts (kubectl's
   * --request-timeout).
   */
  timeoutMs: number
  /** The User-Agent header. */
  userAgent: string
  impersonate?: Impersonation
  /** The retry policy; RETRY_POLICY unless given. */
  retry?: RetryPolicy
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read (the process's environment unless given). */
  env?: NodeJS.ProcessEnv
}

/**
 * When a call is sent again. Only reads (GET) are: on a connection that failed (refused, reset) and
 * on 429 or a 5xx other than 501, at most `retries` times, after the answer's Retry-After when it
 * has one, else `baseDelayMs` doubled each time; never past the call's timeout or signal. A write
 * is never sent twice by this client: whether a failed one took effect is the caller's to find out.
 */
export interface RetryPolicy {
  retries: number
  baseDelayMs: number
  /** The longest wait, whatever Retry-After asks. */
  maxDelayMs: number
}

export const RETRY_POLICY: Readonly<RetryPolicy> = { retries: 2, baseDelayMs: 250, maxDelayMs: 5000 }

/** Node's codes of a connection that failed before any answer: safe to try a read again. */
const RETRIED_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'EHOSTUNREACH'])

/** Whether a read that got `statusCode` (or failed with `error`) is tried again. */
export function retriable (statusCode: number | undefined, error?: unknown): boolean {
  if (statusCode === undefined) return RETRIED_CODES.has(systemCode(error))
  return statusCode === 429 || (statusCode >= 500 && statusCode !== 501)
}

/** How long to wait before retry `attempt` (1, 2, ...): Retry-After in seconds or as a date, else backoff. */
export function retryDelay (
  attempt: number, retryAfter: string | undefined, policy: RetryPolicy, now = Date.now()
): number {
  let delay = policy.baseDelayMs * 2 ** (attempt - 1)
  if (retryAfter !== undefined && retryAfter.trim() !== '') {
    const seconds = Number(retryAfter)
    const at = Date.parse(retryAfter)
    if (Number.isFinite(seconds) && seconds >= 0) delay = seconds * 1000
    else if (!Number.isNaN(at)) delay = Math.max(0, at - now)
  }
  return Math.min(delay, policy.maxDelayMs)
}

export class ApiClient {
  readonly server: URL
  private readonly retry: RetryPolicy

  constructor (
    private readonly kubeConfig: KubeConfig,
    private readonly options: ApiClientOptions,
    /** The namespace of the kubeconfig's current context, if it names one. */
    readonly contextNamespace?: string
  ) {
    this.server = serverOf(kubeConfig)
    this.retry = options.retry ?? RETRY_POLICY
    useEnvironmentProxy(kubeConfig, this.server, options.env ?? process.env)
  }

  /** A client for the kubeconfig kubectl would read (kubeconfig.ts). */
  static async connect (choice: KubeconfigChoice, options: ApiClientOptions): Promise<ApiClient> {
    const loaded = await loadKubeconfig(choice)
    return new ApiClient(loaded.kubeConfig, options, loaded.contextNamespace)
  }

  /**
   * Sends a request and collects its answer, whatever its status; a read is retried as RETRY_POLICY
   * says. Throws a ConnectionError when the server cannot be reached or stays silent past the
   * timeout, and the signal's reason when the caller's signal ends it.
   */
  async send (request: ApiRequest): Promise<ApiAnswer> {
    return await this.withDeadline(request, async signal => {
      const response = await this.open(request, signal)
      return { statusCode: response.statusCode ?? 0, body: await readAll(response), headers: response.headers }
    })
  }

  /** A GET of `path`, parsed; a kubectl error for any other status than 200. */
  async get (path: string): Promise<Record<string, unknown>> {
    return await this.json({ method: 'GET', path })
  }

  /** A JSON merge patch of the object at `path`: what `kubectl patch --type merge` sends. */
  async mergePatch (path: string, body: unknown): Promise<Record<string, unknown>> {
    return await this.json({ method: 'PATCH', path, body, contentType: 'application/merge-patch+json' })
  }

  /** A POST of a new object to its collection, as `kubectl create` sends it: the object as created. */
  async create (collectionPath: string, body: unknown): Promise<Record<string, unknown>> {
    return await this.json({ method: 'POST', path: collectionPath, body })
  }

  private async json (request: ApiRequest): Promise<Record<string, unknown>> {
    const { statusCode, body } = await this.send(request)
    // 201 Created answers a POST.
    if (statusCode !== 200 && statusCode !== 201) throw statusError(statusCode, body)
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      parsed = undefined
    }
    if (!isRecord(parsed)) {
      throw new KubeError(`error: the answer to ${request.method} ${request.path} is not a JSON object`)
    }
    return parsed
  }

  /**
   * A stream kept open (a watch, a followed log): the response once its headers came within the
   * timeout (its start is retried as a read's); `signal` ends it. A kubectl error for a status
   * other than 200.
   */
  async stream (path: string, signal?: AbortSignal): Promise<IncomingMessage> {
    const request: ApiRequest = { method: 'GET', path, ...(signal !== undefined ? { signal } : {}) }
    const response = await this.withDeadline<ApiAnswer | IncomingMessage>(request, async startSignal => {
      // The stream outlives the timeout: once it has started, only the caller's signal ends it.
      const response = await this.open(request, signal ?? new AbortController().signal, startSignal)
      if (response.statusCode === 200) return response
      return { statusCode: response.statusCode ?? 0, body: await readAll(response), headers: response.headers }
    })
    if (response instanceof IncomingMessage) return response
    throw statusError(response.statusCode, response.body)
  }

  /**
   * Runs `attempt` under the call's deadline (the timeout and the caller's signal), again as the
   * retry policy allows for a read. An attempt answers (an ApiAnswer or a stream) or throws.
   */
  private async withDeadline<T extends ApiAnswer | IncomingMessage> (
    request: ApiRequest, attempt: (signal: AbortSignal) => Promise<T>
  ): Promise<T> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs)
    const signal = request.signal === undefined ? timeout : AbortSignal.any([request.signal, timeout])
    const deadline = Date.now() + this.options.timeoutMs
    const failure = (error: unknown): unknown => {
      if (request.signal?.aborted === true) return request.signal.reason
      if (timeout.aborted) return timeoutError(this.server, this.options.timeoutMs)
      return error instanceof KubeError ? error : connectionError(this.server, error)
    }
    for (let tries = 1; ; tries++) {
      let answer: T | undefined
      let error: unknown
      try {
        answer = await attempt(signal)
      } catch (thrown) {
        // Ended by the caller or past the timeout: no retry.
        if (request.signal?.aborted === true || timeout.aborted) throw failure(thrown)
        error = failure(thrown)
      }
      const again = request.method === 'GET' && tries <= this.retry.retries && retriable(answer?.statusCode, error)
      const wait = again ? retryDelay(tries, retryAfterOf(answer), this.retry) : 0
      if (!again || Date.now() + wait >= deadline) {
        if (answer === undefined) throw error
        return answer
      }
      try {
        await sleep(wait, signal)
      } catch (thrown) {
        throw failure(thrown)
      }
    }
  }

  /** Opens the request: the response once its headers arrived. `connectSignal` ends it until then. */
  private async open (request: ApiRequest, signal: AbortSignal, connectSignal = signal): Promise<IncomingMessage> {
    let options: RequestOptions & { payload: string }
    try {
      options = await this.requestOptions(request)
    } catch (error) {
      // A credential plugin that failed, a CA file that cannot be read: not a connection to retry.
      throw new KubeError(`error: getting credentials: ${error instanceof Error ? error.message.trim() : error}`)
    }
    const url = new URL(this.server.href.replace(/\/+$/, '') + request.path)
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest
    connectSignal.throwIfAborted()
    return await new Promise((resolve, reject) => {
      const req = send(url, { ...options, signal }, response => {
        connectSignal.removeEventListener('abort', stop)
        resolve(response)
      })
      const stop = (): void => { req.destroy(connectSignal.reason) }
      if (connectSignal !== signal) connectSignal.addEventListener('abort', stop, { once: true })
      req.on('error', error => {
        connectSignal.removeEventListener('abort', stop)
        reject(error)
      })
      req.end(options.payload)
    })
  }

  /** The headers, credentials and agent of a request, from the kubeconfig and the impersonation asked. */
  private async requestOptions (request: ApiRequest): Promise<RequestOptions & { payload: string }> {
    const payload = request.body === undefined ? '' : JSON.stringify(request.body)
    const options: RequestOptions = {
      method: request.method,
      headers: {
        Accept: 'application/json',
        'User-Agent': this.options.userAgent,
        ...(request.body === undefined
          ? {}
          : {
              'Content-Type': request.contentType ?? 'application/json',
              'Content-Length': String(Buffer.byteLength(payload))
            })
      }
    }
    // Authorization (tokens, token files, exec and auth plugins), client certificates, the CA,
    // insecure-skip-tls-verify and proxy-url: all from the kubeconfig, as an agent plus headers.
    await this.kubeConfig.applyToHTTPSOptions(options)
    const { user, groups = [] } = this.options.impersonate ?? {}
    const headers = options.headers as Record<string, string | string[]>
    // As kubectl: --as replaces the kubeconfig's `as`; each --as-group is a header of its own.
    if (user !== undefined) headers['Impersonate-User'] = user
    if (groups.length > 0) headers['Impersonate-Group'] = [...groups]
    return { ...options, payload }
  }
}

/**
 * The environment's proxy (proxy-env.ts) as the current cluster's proxy-url when the kubeconfig
 * names none, so that client-node builds the same tunnel for it. The KubeConfig is this client's.
 */
function useEnvironmentProxy (kubeConfig: KubeConfig, server: URL, env: NodeJS.ProcessEnv): void {
  const cluster = kubeConfig.getCurrentCluster()
  if (cluster === null || (cluster.proxyUrl ?? '') !== '') return
  const proxyUrl = proxyFromEnvironment(server, env)
  if (proxyUrl !== undefined) Object.assign(cluster, { proxyUrl })
}

function retryAfterOf (answer: ApiAnswer | IncomingMessage | undefined): string | undefined {
  const value = answer?.headers['retry-after']
  return Array.isArray(value) ? value[0] : value
}

async function sleep (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop)
      resolve()
    }, ms)
    const stop = (): void => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    signal.addEventListener('abort', stop, { once: true })
  })
}

async function readAll (response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export { ConnectionError, KubeError }
