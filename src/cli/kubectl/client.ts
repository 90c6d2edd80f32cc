// The plugin's line to the API server: JSON reads, its writes (merge patches of annotations and
// spec.suspend, and the JobFlow that submit creates), and the two streams kubectl keeps open (a
// watch, a pod's log).
// Credentials come from the kubeconfig as kubectl reads it (live-cluster.ts); errors read as
// kubectl's do, so that a user who knows one knows the other.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest, type RequestOptions } from 'node:https'
import type { KubeConfig } from '@kubernetes/client-node'
import { isRecord } from '../../k8s/types.js'
import { loadKubeconfig } from '../live-cluster.js'

/** A failure kubectl would report: the message as it prints it, after `Error from server` or alone. */
export class KubeError extends Error {}

/** Reasons of a Status without one, by HTTP code, as kubectl names them. */
const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable'
}

export interface ClientOptions {
  kubeconfig?: string
  context?: string
  /** How long a request may wait for its answer (kubectl's --request-timeout). */
  timeoutMs: number
  env?: NodeJS.ProcessEnv
}

export class KubeClient {
  private constructor (
    private readonly kubeConfig: KubeConfig,
    readonly server: URL,
    readonly contextNamespace: string | undefined,
    private readonly timeoutMs: number
  ) {}

  static async connect (options: ClientOptions): Promise<KubeClient> {
    let loaded: Awaited<ReturnType<typeof loadKubeconfig>>
    try {
      loaded = await loadKubeconfig(options.kubeconfig, options.env ?? process.env, options.context)
    } catch (error) {
      throw new KubeError(`error: ${error instanceof Error ? error.message : String(error)}`)
    }
    return new KubeClient(loaded.kubeConfig, loaded.server, loaded.contextNamespace, options.timeoutMs)
  }

  /** A GET of `path`, parsed. */
  async get (path: string): Promise<Record<string, unknown>> {
    return await this.json('GET', path)
  }

  /** A JSON merge patch of the object at `path`: what `kubectl patch --type merge` sends. */
  async mergePatch (path: string, body: unknown): Promise<Record<string, unknown>> {
    return await this.json('PATCH', path, body)
  }

  /** A POST of a new object to its collection, as `kubectl create` sends it: the object as created. */
  async create (collectionPath: string, body: unknown): Promise<Record<string, unknown>> {
    return await this.json('POST', collectionPath, body)
  }

  private async json (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const signal = AbortSignal.timeout(this.timeoutMs)
    const response = await this.open(method, path, signal, body)
    const text = await readAll(response, signal)
    // 201 Created answers a POST.
    const code = response.statusCode ?? 0
    if (code !== 200 && code !== 201) throw statusError(code, text)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (!isRecord(parsed)) throw new KubeError(`error: the answer to ${method} ${path} is not a JSON object`)
    return parsed
  }

  /**
   * A stream kept open (a watch, a followed log): the response once its headers came within the
   * timeout; `signal` ends it.
   */
  async stream (path: string, signal?: AbortSignal): Promise<IncomingMessage> {
    const connected = new AbortController()
    const timer = setTimeout(() => connected.abort(new DOMException('timeout', 'TimeoutError')), this.timeoutMs)
    const both = signal === undefined ? connected.signal : AbortSignal.any([signal, connected.signal])
    try {
      const response = await this.open('GET', path, both)
      if (response.statusCode !== 200) throw statusError(response.statusCode ?? 0, await readAll(response, both))
      return response
    } finally {
      clearTimeout(timer)
    }
  }

  private async open (method: string, path: string, signal: AbortSignal, body?: unknown): Promise<IncomingMessage> {
    const payload = body === undefined ? '' : JSON.stringify(body)
    const options: RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        'User-Agent': 'kubectl-jobhooks',
        ...(body === undefined
          ? {}
          : {
              'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
              'Content-Length': String(Buffer.byteLength(payload))
            })
      }
    }
    // Tokens, exec plugins, client certificates, the CA: all from the kubeconfig.
    await this.kubeConfig.applyToHTTPSOptions(options)
    const url = new URL(this.server.href.replace(/\/+$/, '') + path)
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest
    return await new Promise((resolve, reject) => {
      const req = send(url, { ...options, signal }, resolve)
      req.on('error', error => reject(connectionError(this.server, error, this.timeoutMs)))
      req.end(payload)
    })
  }
}

async function readAll (response: IncomingMessage, signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = []
  try {
    for await (const chunk of response) chunks.push(chunk as Buffer)
  } catch (error) {
    if (signal.aborted) throw new KubeError('Unable to connect to the server: the answer did not arrive in time')
    throw error
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** `Error from server (NotFound): jobflows.jobhooks.io "x" not found`, from a Status answer. */
export function statusError (code: number, body: string): KubeError {
  let status: unknown
  try {
    status = JSON.parse(body)
  } catch {
    status = undefined
  }
  const reason = isRecord(status) && typeof status.reason === 'string' && status.reason !== ''
    ? status.reason
    : REASONS[code] ?? `HTTP ${code}`
  const message = isRecord(status) && typeof status.message === 'string' ? status.message : body.trim().slice(0, 300)
  return Object.assign(new KubeError(`Error from server (${reason}): ${message}`), { code, reason })
}

/** What kubectl says when the server does not answer: refused, unknown host, or silent past the timeout. */
function connectionError (server: URL, error: unknown, timeoutMs: number): KubeError {
  const code = isRecord(error) && typeof error.code === 'string' ? error.code : ''
  if (code === 'ECONNREFUSED') {
    return new KubeError(`The connection to the server ${server.host} was refused - ` +
      'did you specify the right host or port?')
  }
  const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError' ||
    (isRecord(error.cause) && error.cause.name === 'TimeoutError'))
  if (timedOut) {
    return new KubeError(`Unable to connect to the server: ${server.host} gave no answer within ${timeoutMs / 1000} s`)
  }
  return new KubeError(`Unable to connect to the server: ${error instanceof Error ? error.message : String(error)}`)
}

/** The HTTP code of a KubeError from the API server (404, 403, ...), if it came from one. */
export function errorCode (error: unknown): number | undefined {
  return isRecord(error) && typeof error.code === 'number' ? error.code : undefined
}
