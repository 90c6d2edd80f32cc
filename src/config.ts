// Settings come from the environment, read once at start-up. The README lists every one.
import { defaultHooksDir } from './scripts/library.js'

export interface Config {
  port: number
  host: string
  logLevel: string
  /** Largest hook request accepted, in bytes: requests carry every child whole. */
  bodyLimit: number
  hooksDir: string
  /** How long SIGTERM waits for in-flight hooks before the process exits anyway. */
  shutdownGraceMs: number
  /** Most effect requests in flight at once, per hook call. */
  effectsConcurrency: number
  /** Time the effects of one hook call may take (Metacontroller gives a hook 10 s by default). */
  effectsBudgetMs: number
}

export function readConfig (env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST ?? '0.0.0.0',
    logLevel: env.LOG_LEVEL ?? 'info',
    bodyLimit: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024 * 1024),
    hooksDir: env.HOOKS_DIR ?? defaultHooksDir(),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 15_000),
    effectsConcurrency: integer(env, 'EFFECTS_CONCURRENCY', 8, 1),
    effectsBudgetMs: integer(env, 'EFFECTS_BUDGET_MS', 5_000, 1)
  }
}

function integer (env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${JSON.stringify(raw)}`)
  if (value < min) throw new Error(`${name} must be at least ${min}, not ${value}`)
  return value
}
