// What goes wrong between a client and the API server, worded as kubectl words it, so that a user
// who knows one knows the other: `Error from server (NotFound): jobflows.jobhooks.io "x" not
// found`, `The connection to the server host:port was refused - ...`, `Unable to connect to the
// server: ...`.
import { isRecord } from '../k8s/types.js'

/** A failure kubectl would report: the message as it prints it, after `Error from server` or alone. */
export class KubeError extends Error {}

/**
 * The API server could not be reached, or gave no answer in time. `code` is Node's (`ECONNREFUSED`,
 * `ECONNRESET`, ...) or `TIMEOUT`; the error Node gave is the `cause`.
 */
export class ConnectionError extends KubeError {
  constructor (message: string, readonly code: string, options?: ErrorOptions) {
    super(message, options)
  }
}

/** Reasons of a Status without one, by HTTP code, as kubectl names them. */
const REASONS: Readonly<Record<number, string>> = {
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
  503: 'ServiceUnavailable',
  504: 'Timeout'
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

/** The HTTP code of a KubeError from the API server (404, 403, ...), if it came from one. */
export function errorCode (error: unknown): number | undefined {
  return isRecord(error) && typeof error.code === 'number' ? error.code : undefined
}

/** Node's code of a failed connection (`ECONNREFUSED`), if `error` has one. */
export function systemCode (error: unknown): string {
  return isRecord(error) && typeof error.code === 'string' ? error.code : ''
}

/** What kubectl says when the server does not answer: refused, or anything else Node reports. */
export function connectionError (server: URL, error: unknown): ConnectionError {
  const code = systemCode(error)
  if (code === 'ECONNREFUSED') {
    return new ConnectionError(`The connection to the server ${server.host} was refused - ` +
      'did you specify the right host or port?', code, { cause: error })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new ConnectionError(`Unable to connect to the server: ${message}`, code, { cause: error })
}

/** What kubectl says when the server stays silent past the request timeout. */
export function timeoutError (server: URL, timeoutMs: number): ConnectionError {
  return new ConnectionError(
    `Unable to connect to the server: ${server.host} gave no answer within ${timeoutMs / 1000} s`, 'TIMEOUT')
}

/** A message for a log line: kubectl's words, with Node's code when they do not say it. */
export function describe (error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = error instanceof ConnectionError ? error.code : systemCode(error)
  return code !== '' && code !== 'TIMEOUT' && !message.includes(code) ? `${message} (${code})` : message
}
