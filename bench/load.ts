// Load through autocannon, and what the servers' thread did meanwhile: event-loop busy time and
// GC pauses per slice, and latency percentiles merged over several runs.
import { performance, PerformanceObserver, type EventLoopUtilization } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { connections, inlineClient } from './settings.js'

const SAMPLE_MS = 25

/** One autocannon run and what the servers' thread did meanwhile. */
export interface Slice {
  result: autocannon.Result
  /** Event-loop busy time of the main thread (both servers live there), ms. */
  busyMs: number
  /** Garbage collection pauses on the main thread, ms. */
  gcMs: number
}

export interface Measure {
  reqPerSec: number
  p50: number
  p99: number
  /** Mean time per request in ms under load (1000 / req/s): the single-threaded server's service time. */
  perRequestMs: number
  requests: number
  /** Main-thread busy time per request, ms: what the server spent, waiting on nothing. */
  busyPerRequestMs: number
  gcPerRequestMs: number
}

/** Every GC pause of the main thread, to attribute to the slice it fell in. */
const gcPauses: Array<{ start: number; end: number }> = []
export const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration })
  }
})

export async function load (
  url: string,
  body: string,
  run: { seconds: number } | { amount: number },
  title: string
): Promise<autocannon.Result> {
  const result = await autocannon({
    url,
    title,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    pipelining: 1,
    ...('amount' in run ? { amount: run.amount } : { duration: run.seconds }),
    // autocannon notices the end of a run at its next sample tick: sample often, so that a
    // run's duration is its real length to within SAMPLE_MS.
    sampleInt: SAMPLE_MS,
    timeout: 30,
    ...(inlineClient ? {} : { workers: 1 }),
  })
  const problems = [
    result.errors > 0 ? `${result.errors} errors` : '',
    result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
    result.non2xx > 0 ? `${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats)})` : '',
    result.requests.total === 0 ? 'no request completed' : '',
  ].filter((p) => p !== '')
  if (problems.length > 0) throw new Error(`${title}: ${problems.join(', ')}`)
  return result
}

const PERCENTILES: Array<[number, string]> = [
  [0.001, 'p0_001'],
  [0.01, 'p0_01'],
  [0.1, 'p0_1'],
  [1, 'p1'],
  [2.5, 'p2_5'],
  [10, 'p10'],
  [25, 'p25'],
  [50, 'p50'],
  [75, 'p75'],
  [90, 'p90'],
  [97.5, 'p97_5'],
  [99, 'p99'],
  [99.9, 'p99_9'],
  [99.99, 'p99_99'],
  [99.999, 'p99_999'],
]

/**
 * The latency percentile `q` (0–1) of several autocannon runs together: each run's distribution
 * is rebuilt from its reported percentiles (linear between them), the runs are weighted by their
 * request counts, and the mixture is inverted by bisection. With one run this returns its own
 * percentile.
 */
function mergedPercentile (results: autocannon.Result[], q: number): number {
  const runs = results.map((r) => ({
    weight: r.latency.totalCount ?? r.requests.total,
    points: [
      [0, r.latency.min],
      ...PERCENTILES.map(([p, key]) => [p / 100, r.latency[key] ?? r.latency.max]),
      [1, r.latency.max],
    ] as Array<[number, number]>,
  }))
  const total = runs.reduce((sum, r) => sum + r.weight, 0)
  const cdf = (x: number): number =>
    runs.reduce((sum, run) => {
      const { points } = run
      let k = -1
      for (let i = 0; i < points.length; i++) if ((points[i] as [number, number])[1] <= x) k = i
      let f: number
      if (k < 0) f = 0
      else if (k === points.length - 1) f = 1
      else {
        const [q0, x0] = points[k] as [number, number]
        const [q1, x1] = points[k + 1] as [number, number]
        f = x1 > x0 ? q0 + ((q1 - q0) * (x - x0)) / (x1 - x0) : q0
      }
      return sum + run.weight * f
    }, 0) / total
  let lo = Math.min(...results.map((r) => r.latency.min))
  let hi = Math.max(...results.map((r) => r.latency.max))
  if (cdf(lo) >= q) return lo
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2
    if (cdf(mid) >= q) hi = mid
    else lo = mid
  }
  return hi
}

/** A measured slice: `amount` requests, with the main thread's busy and GC time meanwhile. */
export async function measureSlice (url: string, body: string, amount: number, title: string): Promise<Slice> {
  const from = performance.now()
  const before: EventLoopUtilization = performance.eventLoopUtilization()
  const result = await load(url, body, { amount }, title)
  const busyMs = performance.eventLoopUtilization(before).active
  const to = performance.now()
  // GC entries arrive a little after the pause: let them in before reading them.
  await new Promise((resolve) => setTimeout(resolve, 20))
  const gcMs = gcPauses.filter((p) => p.start >= from && p.end <= to).reduce((sum, p) => sum + p.end - p.start, 0)
  return { result, busyMs, gcMs }
}

export function rate (result: autocannon.Result | undefined): number {
  return result === undefined ? 0 : result.requests.total / result.duration
}

export function measure (slices: Slice[]): Measure {
  const results = slices.map((s) => s.result)
  const requests = results.reduce((sum, r) => sum + r.requests.total, 0)
  const seconds = results.reduce((sum, r) => sum + r.duration, 0)
  const reqPerSec = requests / seconds
  return {
    reqPerSec,
    p50: mergedPercentile(results, 0.5),
    p99: mergedPercentile(results, 0.99),
    perRequestMs: 1000 / reqPerSec,
    requests,
    busyPerRequestMs: slices.reduce((sum, s) => sum + s.busyMs, 0) / requests,
    gcPerRequestMs: slices.reduce((sum, s) => sum + s.gcMs, 0) / requests,
  }
}

/** Mean ms of `fn` over repeated calls, for about `budgetMs` (at least 3 calls). */
export async function timeIt (fn: () => unknown, budgetMs: number): Promise<number> {
  await fn()
  let calls = 0
  const start = performance.now()
  let elapsed = 0
  while (calls < 3 || (elapsed < budgetMs && calls < 1000)) {
    await fn()
    calls++
    elapsed = performance.now() - start
  }
  return elapsed / calls
}
