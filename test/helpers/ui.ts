// `kubectl jobhooks ui` in the test process against the fake API server: the command started as a
// user starts it, its URL read from what it printed, and a reader of its server-sent events.
import type { Test } from 'tap'
import { request } from 'node:http'
import type { KubeObject } from '../../src/k8s/types.js'
import { plugin, type Plugin } from './plugin.js'

export interface RunningUi extends Plugin {
  /** The page's origin, `http://127.0.0.1:<port>`. */
  origin: string
  token: string
  /** What the command printed. */
  printed: string
}

/** The pod of the running flow's second attempt of job2 (runningFlow in plugin.ts), whose logs the tests read. */
export function job2Pod (): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'job2-2-abc', namespace: 'team-a', labels: { 'batch.kubernetes.io/job-name': 'jobflow-example-job2-2' }
    },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36' }] }
  }
}

export interface SseEvent { event: string, data: Record<string, unknown> }

export async function runningUi (t: Test, objects: KubeObject[], flags: string[] = []): Promise<RunningUi> {
  const started = await plugin(t, objects)
  const stop = new AbortController()
  let printed = ''
  const ready = new Promise<void>(resolve => {
    const ran = started.run(['ui', ...flags], {
      signal: stop.signal,
      onOut: all => {
        printed = all
        if (all.includes('#token=')) resolve()
      }
    })
    t.teardown(async () => {
      stop.abort()
      await ran
    })
  })
  await ready
  const url = /(http:\/\/\S+)\/#token=(\S+)/.exec(printed)
  if (url === null) throw new Error(`no URL in ${printed}`)
  return { ...started, origin: url[1] as string, token: url[2] as string, printed }
}

/** The events of a stream as they come; `next` waits for the first one `matches` accepts. */
export interface SseReader {
  events: SseEvent[]
  next: (matches: (event: SseEvent) => boolean, timeoutMs?: number) => Promise<SseEvent>
  status: number
  close: () => void
}

export async function readEvents (url: string): Promise<SseReader> {
  const events: SseEvent[] = []
  // Where the next `next` starts looking: each event is found once.
  let cursor = 0
  let wake = (): void => {}
  const take = (matches: (e: SseEvent) => boolean): SseEvent | undefined => {
    const at = events.findIndex((e, i) => i >= cursor && matches(e))
    if (at < 0) return undefined
    cursor = at + 1
    return events[at]
  }
  return await new Promise((resolve, reject) => {
    const req = request(url, res => {
      let buffered = ''
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8')
        let end: number
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) })
        }
        wake()
      })
      res.on('error', () => {})
      resolve({
        events,
        status: res.statusCode ?? 0,
        close: () => req.destroy(),
        next: async (matches, timeoutMs = 5000) => await new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no such event in ${timeoutMs} ms: ` +
            JSON.stringify(events.slice(cursor)).slice(0, 2000))), timeoutMs)
          const look = (): void => {
            const found = take(matches)
            if (found === undefined) return
            clearTimeout(timer)
            wake = () => {}
            resolve(found)
          }
          wake = look
          look()
        })
      })
    })
    req.on('error', reject)
    req.end()
  })
}
