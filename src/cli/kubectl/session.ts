// What a command of the plugin works with: where it writes, the clock, the client and the
// namespace it acts in.
import type { KubeClient } from './client.js'
import type { Options } from './options.js'

export interface Io {
  /** Standard output, written as given (lines carry their newline). */
  out: (text: string) => void
  /** Standard error. */
  err: (text: string) => void
  /** Whether standard output is a terminal: a watch redraws in place there. */
  tty: boolean
  now: () => Date
  /** Ends a watch or a followed log (Ctrl-C, or a test). */
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

export interface Session {
  io: Io
  options: Options
  client: KubeClient
  /** -n, else the context's namespace, else default. */
  namespace: string
}

/** Lines as one text, each with its newline. */
export function text (lines: string[]): string {
  return lines.map(line => `${line}\n`).join('')
}
