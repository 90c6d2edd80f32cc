// Settings come from the environment, read once at start-up. docs/operations.md, "Settings", lists every one.
import { defaultHooksDir } from './scripts/library.js'
import { DEFAULT_BODY_LIMIT } from './protocol/body-reader.js'
import { DEFAULT_WAIT_BUDGET_MS } from './protocol/work-queue.js'
import { DEFAULT_DEADLINE_MS } from './thread/hook-thread.js'

export interface Config {
  port: number
  host: string
  logLevel: string
  /** Largest hook request accepted, in bytes: requests carry every child whole. */
  bodyLimit: number
  /**
   * Bytes of sync and finalize requests in flight at most; beyond, calls are shed with 429.
   * Undefined: three quarters of the heap limit.
   */
  inflightBudget?: number
  /**
   * Expected milliseconds of hook work queued ahead of a call, plus its own, at most; beyond, it is
   * shed with 429 (src/protocol/work-queue.ts).
   */
  waitBudgetMs: number
  /** Whether sync and finalize hooks run on a thread of their own (src/thread/hook-thread.ts). */
  hookThread: boolean
  /** How long that thread's event loop may go unanswered while calls are in it before it is replaced. */
  hookDeadlineMs: number
  /**
   * Bytes the memo of built objects may hold (src/protocol/object-memo.ts); 0 turns it off.
   * Undefined: a sixteenth of the heap limit, at most 64 MiB.
   */
  objectMemoBytes?: number
  hooksDir: string
  /** How long SIGTERM waits for in-flight hooks before the process exits anyway. */
  shutdownGraceMs: number
  /** Most effect requests in flight at once, per hook call. */
  effectsConcurrency: number
  /** Time the effects of one hook call may take (Metacontroller gives a hook 10 s by default). */
  effectsBudgetMs: number
  /** `none`: serve hooks without a credential check, on purpose (AUTH=none). */
  auth: 'required' | 'none'
  /** The bearer token hook calls must carry (a mounted Secret). */
  authTokenFile?: string
  /** HTTPS: certificate and key. */
  tlsCertFile?: string
  tlsKeyFile?: string
  /** Mutual TLS: the CA that signs the callers' client certificates. */
  tlsClientCaFile?: string
  /** How often the token and TLS files are read again (a rotated Secret needs no restart). */
  credentialsReloadMs: number
}

export function readConfig (env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST ?? defaultHost(env),
    logLevel: env.LOG_LEVEL ?? 'info',
    bodyLimit: integer(env, 'BODY_LIMIT_BYTES', DEFAULT_BODY_LIMIT),
    ...(present(env, 'INFLIGHT_BUDGET_BYTES') ? { inflightBudget: integer(env, 'INFLIGHT_BUDGET_BYTES', 0, 1) } : {}),
    waitBudgetMs: integer(env, 'WAIT_BUDGET_MS', DEFAULT_WAIT_BUDGET_MS, 1),
    hookThread: env.HOOK_THREAD !== '0',
    hookDeadlineMs: integer(env, 'HOOK_DEADLINE_MS', DEFAULT_DEADLINE_MS, 1),
    ...(present(env, 'OBJECT_MEMO_BYTES') ? { objectMemoBytes: integer(env, 'OBJECT_MEMO_BYTES', 0) } : {}),
    hooksDir: env.HOOKS_DIR ?? defaultHooksDir(),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 15_000),
    effectsConcurrency: integer(env, 'EFFECTS_CONCURRENCY', 8, 1),
    effectsBudgetMs: integer(env, 'EFFECTS_BUDGET_MS', 5_000, 1),
    ...trustSettings(env),
    credentialsReloadMs: integer(env, 'CREDENTIALS_RELOAD_MS', 10_000, 1)
  }
}

function trustSettings (
  env: NodeJS.ProcessEnv
): Pick<Config, 'auth' | 'authTokenFile' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsClientCaFile'> {
  const auth = env.AUTH ?? ''
  if (auth !== '' && auth !== 'none') {
    throw new Error(`AUTH may only be "none" (serve without a credential check), not ${JSON.stringify(auth)}`)
  }
  const settings = {
    auth: auth === 'none' ? 'none' as const : 'required' as const,
    authTokenFile: path(env, 'AUTH_TOKEN_FILE'),
    tlsCertFile: path(env, 'TLS_CERT_FILE'),
    tlsKeyFile: path(env, 'TLS_KEY_FILE'),
    tlsClientCaFile: path(env, 'TLS_CLIENT_CA_FILE')
  }
  if ((settings.tlsCertFile === undefined) !== (settings.tlsKeyFile === undefined)) {
    throw new Error('TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither')
  }
  if (settings.tlsClientCaFile !== undefined && settings.tlsCertFile === undefined) {
    throw new Error('TLS_CLIENT_CA_FILE (mutual TLS) needs HTTPS: set TLS_CERT_FILE and TLS_KEY_FILE too')
  }
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) as ReturnType<
    typeof trustSettings
  >
}

/**
 * Every interface in a cluster (the kubelet sets KUBERNETES_SERVICE_HOST; the Service and the
 * probes reach the pod by its IP), loopback elsewhere: a service started on a laptop is not
 * offered to the network it happens to sit on.
 */
function defaultHost (env: NodeJS.ProcessEnv): string {
  return present(env, 'KUBERNETES_SERVICE_HOST') ? '0.0.0.0' : '127.0.0.1'
}

function present (env: NodeJS.ProcessEnv, name: string): boolean {
  return env[name] !== undefined && env[name] !== ''
}

function path (env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name]
  return value === undefined || value === '' ? undefined : value
}

function integer (env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number, not ${JSON.stringify(raw)}`)
  }
  if (value < min) throw new Error(`${name} must be at least ${min}, not ${value}`)
  return value
}
