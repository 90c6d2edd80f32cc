// Server-sent events (the HTML standard's `text/event-stream`): how the page's live parts reach it.
// One response held open; each message is an event name and one JSON line; a comment every 15 s
// keeps proxies and the browser from taking a quiet stream for a dead one. EventSource reconnects
// by itself when the stream ends, so a stream the server ends says `end` first.
import { setMaxListeners } from 'node:events'
import type { ServerResponse } from 'node:http'

const HEARTBEAT_MS = 15_000

export interface EventStream {
  send: (event: string, data: unknown) => void
  /** Aborted once the page went away (or the server stopped): every watch behind the stream stops. */
  signal: AbortSignal
  close: () => void
}

export function openEventStream (res: ServerResponse, stopping: AbortSignal): EventStream {
  const done = new AbortController()
  // Every watch and read behind the stream listens to it (the list's six kinds, each request's own).
  setMaxListeners(64, done.signal)
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff'
  })
  res.flushHeaders()
  const heartbeat = setInterval(() => res.write(': still here\n\n'), HEARTBEAT_MS)
  heartbeat.unref()
  const close = (): void => {
    clearInterval(heartbeat)
    stopping.removeEventListener('abort', close)
    done.abort()
    res.end()
  }
  res.on('close', close)
  if (stopping.aborted) close()
  else stopping.addEventListener('abort', close, { once: true })
  return {
    signal: done.signal,
    close,
    send: (event, data) => {
      if (done.signal.aborted) return
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    }
  }
}

/**
 * `run(value)` for the last value given, at most once per `delayMs` and never two at once: a burst
 * of watch events draws once, and draws arrive in order.
 */
export function coalesce<T> (delayMs: number, run: (value: T) => Promise<void>): (value: T) => void {
  let latest: { value: T } | undefined
  let busy = false
  const fire = async (): Promise<void> => {
    while (latest !== undefined) {
      const { value } = latest
      latest = undefined
      await run(value)
    }
    busy = false
  }
  return value => {
    latest = { value }
    if (busy) return
    busy = true
    setTimeout(() => { void fire() }, delayMs)
  }
}
