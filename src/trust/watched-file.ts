// A file the service keeps reading while it runs: a mounted Secret (a token, a certificate) that
// the kubelet replaces when the Secret changes. Secret volumes are updated by swapping a symlink
// (`..data`), which file watchers on the old path never see, so the file is re-read on an
// interval instead, and a change is noticed by content.
import { readFileSync } from 'node:fs'

export interface WatchedFiles<T> {
  /** What the files held at the last successful read. */
  readonly current: T
  /** Stops re-reading. */
  stop: () => void
}

export interface WatchOptions<T> {
  files: readonly string[]
  /** Turns the files' contents into the value; throws when they are unusable. */
  parse: (contents: readonly Buffer[]) => T
  /** How often to read again; 0 reads once. */
  intervalMs: number
  onChange?: (value: T) => void
  /** A read or parse that failed after the first: the last good value stays in force. */
  onError?: (error: Error) => void
}

/**
 * Reads `files` now (throwing when they cannot be read or parsed: a start-up error) and again
 * every `intervalMs`; when their bytes changed and parse, the new value replaces the old one.
 */
export function watchFiles<T> (options: WatchOptions<T>): WatchedFiles<T> {
  const read = (): Buffer[] => options.files.map(file => readFileSync(file))
  let contents = read()
  let current = options.parse(contents)
  let timer: NodeJS.Timeout | undefined
  if (options.intervalMs > 0) {
    timer = setInterval(() => {
      try {
        const next = read()
        if (next.length === contents.length && next.every((bytes, i) => bytes.equals(contents[i] as Buffer))) return
        const value = options.parse(next)
        contents = next
        current = value
        options.onChange?.(value)
      } catch (error) {
        options.onError?.(error instanceof Error ? error : new Error(String(error)))
      }
    }, options.intervalMs)
    timer.unref()
  }
  return {
    get current () { return current },
    stop: () => { if (timer !== undefined) clearInterval(timer) }
  }
}
