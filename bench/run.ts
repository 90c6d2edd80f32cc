// `npm run bench`: POST /hooks/jobflow/sync on JobFlows of 10, 100 and 1,000 Jobs, against an
// echo route that only parses the same body and serialises it back, in the same process.
//
// The hook app is built by buildApp; since it is ready (sealed) when built, the echo route lives
// on a second fastify instance configured like it (same bodyLimit, JSON parser, logging; it keeps the
// objects' managedFields, which the hook routes skip unparsed, since it must give the body back). The
// load comes from autocannon in a worker thread, so that writing the requests and reading the
// answers does not run on the servers' event loop.
//
// Each route of each size is measured for about BENCH_DURATION seconds in total, split into
// BENCH_ROUNDS slices; the slices of all sizes and both routes are interleaved (hook before echo
// in one round, echo before hook in the next), so that a neighbour loading the machine for a
// while hits every case about equally and the ratios stay fair. A slice sends a fixed number of
// requests (the warm-up's rate times the slice length) and waits for every answer, so no work
// the server did is left uncounted when a slice ends: with 7 MB bodies and four connections a
// timed slice would drop up to four requests' worth of server time.
//
// Environment: BENCH_DURATION (seconds per route and size, default 5), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 4), BENCH_SIZES (default "10,100,1000"), BENCH_CLIENT=inline to
// run autocannon on the main thread, BENCH_BREAKDOWN=0 to skip the in-process breakdown.
// BENCH_KIND_SIZES and BENCH_KINDS choose what bench/kinds.ts times of the other kinds;
// BENCH_SCALE=0 skips the largest cluster and the burst (bench/scale.ts). BENCH_PARENTS=0 skips
// the memo's hit rate over 50 parents of each kind synced in turn (bench/parents.ts).
import { performance, PerformanceObserver, type EventLoopUtilization } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import autocannon from 'autocannon'
import type { FastifyInstance } from 'fastify'
import { buildApp, createFastify, DEFAULT_BODY_LIMIT } from '../src/app.js'
import { syncJobFlow } from '../src/controllers/jobflow/sync.js'
import type { SyncRequest, SyncResponse } from '../src/protocol/hooks.js'
import { jobFlowRequestBody, type FixtureExpectation } from './fixtures.js'
import { benchKinds, CASES, deploymentMemoLimit, kindGoals, kindTable, type KindCase } from './kinds.js'
import { benchScale, BURST_CALLS, BURST_NODES, LARGEST_NODES, scaleReport } from './scale.js'
import { hitRateGoals, hitRateTable, memoHitRates, PARENTS } from './parents.js'

const SAMPLE_MS = 25
const HOOK_PATH = '/hooks/jobflow/sync'
const ECHO_PATH = '/bench/echo'

const duration = positiveNumber('BENCH_DURATION', 5)
const rounds = Math.round(positiveNumber('BENCH_ROUNDS', 3))
const connections = Math.round(positiveNumber('BENCH_CONNECTIONS', 4))
const sizes = (process.env.BENCH_SIZES ?? '10,100,1000')
  .split(',')
  .filter((s) => s.trim() !== '')
  .map((s) => Number(s.trim()))
/**
 * Objects of the other kinds (Nodes, Pods, targets): unset, each kind's own two sizes (bench/kinds.ts);
 * a list, those sizes for every kind; BENCH_KIND_SIZES= (empty) skips them. BENCH_KINDS (a
 * comma-separated list of kinds, e.g. "DaemonJob,CollaSet") times only those; BENCH_SIZES= (empty)
 * skips the JobFlow part.
 */
const kindSizes =
  process.env.BENCH_KIND_SIZES === undefined
    ? undefined
    : process.env.BENCH_KIND_SIZES.split(',')
      .filter((s) => s.trim() !== '')
      .map((s) => Number(s.trim()))
const kindNames = (process.env.BENCH_KINDS ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter((s) => s !== '')
const inlineClient = process.env.BENCH_CLIENT === 'inline'
/** BENCH_SCALE=0 skips the largest cluster and the burst (bench/scale.ts). */
const scale = process.env.BENCH_SCALE !== '0'
const breakdown = process.env.BENCH_BREAKDOWN !== '0'
const parents = process.env.BENCH_PARENTS !== '0'
const slice = duration / rounds
const warmup = Math.max(0.5, Math.min(2, duration / 4))

function positiveNumber (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`)
  }
  return value
}

type Route = 'hook' | 'echo'

/** One JobFlow size: the request body and what the hook's answer must contain. */
interface Case {
  jobs: number
  body: string
  bodyBytes: number
  expected: FixtureExpectation
  observedJobNames: string[]
  hookResponseBytes: number
  slices: Record<Route, Slice[]>
  /** Requests per slice, from the warm-up's rate. */
  amount: Record<Route, number>
}

/** One autocannon run and what the servers' thread did meanwhile. */
interface Slice {
  result: autocannon.Result
  /** Event-loop busy time of the main thread (both servers live there), ms. */
  busyMs: number
  /** Garbage collection pauses on the main thread, ms. */
  gcMs: number
}

interface Measure {
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

/** The service's own fastify setup (createFastify), with one route that echoes the parsed body. */
async function buildEchoApp (): Promise<FastifyInstance> {
  const app = createFastify({ bodyLimit: DEFAULT_BODY_LIMIT, keepWhole: true })
  // No response schema: fastify serialises the parsed body with JSON.stringify.
  app.post(ECHO_PATH, async (request) => request.body)
  await app.ready()
  return app
}

async function listen (app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address() as AddressInfo
  return `http://127.0.0.1:${address.port}`
}

function fail (c: Case, message: string): never {
  throw new Error(`verification failed at ${c.jobs} jobs: ${message}`)
}

async function post (url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return { status: response.status, text: await response.text() }
}

/**
 * One real request to each route before any timing. The hook must do the real work: answer 200
 * with a well-formed response, keep every observed Job, create the Jobs whose dependencies
 * succeeded, record every flow, and report phase Running.
 */
async function verify (hookUrl: string, echoUrl: string, c: Case): Promise<void> {
  const { expected } = c
  const hook = await post(hookUrl + HOOK_PATH, c.body)
  if (hook.status !== 200) fail(c, `hook answered ${hook.status}: ${hook.text.slice(0, 500)}`)
  const answer = JSON.parse(hook.text) as SyncResponse & Record<string, unknown>
  const extra = Object.keys(answer).filter(
    (k) => !['status', 'children', 'resyncAfterSeconds', 'finalized'].includes(k)
  )
  if (extra.length > 0) fail(c, `unexpected top-level fields ${extra.join(', ')}`)
  const status = answer.status as {
    phase?: unknown
    jobs?: Array<{ phase?: unknown }>
    conditions?: Array<{ type?: unknown; status?: unknown }>
  }
  if (status.phase !== expected.phase) fail(c, `status.phase is ${String(status.phase)}, want ${expected.phase}`)
  const valid = status.conditions?.find((x) => x.type === 'Valid')
  if (valid?.status !== 'True') fail(c, `Valid condition is ${JSON.stringify(valid)}`)
  const returned = new Set(
    answer.children.filter((ch) => ch.kind === 'Job' && ch.apiVersion === 'batch/v1').map((ch) => ch.metadata.name)
  )
  const dropped = c.observedJobNames.filter((name) => !returned.has(name))
  if (dropped.length > 0) {
    fail(c, `the hook would delete ${dropped.length} Jobs, e.g. ${dropped.slice(0, 3).join(', ')}`)
  }
  const created = returned.size - c.observedJobNames.length
  if (created !== expected.toCreate) fail(c, `the hook creates ${created} Jobs, want ${expected.toCreate}`)
  if (answer.children.length !== returned.size) {
    fail(c, `${answer.children.length - returned.size} children that are not Jobs`)
  }
  const records = status.jobs ?? []
  if (records.length !== expected.flows) fail(c, `status.jobs has ${records.length} records, want ${expected.flows}`)
  const want = {
    Succeeded: expected.succeeded,
    Running: expected.running,
    Pending: expected.toCreate + expected.waiting,
  }
  for (const [phase, count] of Object.entries(want)) {
    const got = records.filter((r) => r.phase === phase).length
    if (got !== count) fail(c, `${got} ${phase} records in status.jobs, want ${count}`)
  }
  // The same request at the same time gives the same answer (law 3).
  const again = await post(hookUrl + HOOK_PATH, c.body)
  if (again.text !== hook.text) fail(c, 'two identical requests got different answers')
  c.hookResponseBytes = Buffer.byteLength(hook.text)

  const echo = await post(echoUrl + ECHO_PATH, c.body)
  if (echo.status !== 200) fail(c, `echo answered ${echo.status}`)
  if (echo.text !== c.body) fail(c, `echo did not give the body back (${echo.text.length} of ${c.body.length} bytes)`)
}

/** Every GC pause of the main thread, to attribute to the slice it fell in. */
const gcPauses: Array<{ start: number; end: number }> = []
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration })
  }
})

async function load (
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
async function measureSlice (url: string, body: string, amount: number, title: string): Promise<Slice> {
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

function rate (result: autocannon.Result | undefined): number {
  return result === undefined ? 0 : result.requests.total / result.duration
}

function measure (slices: Slice[]): Measure {
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
async function timeIt (fn: () => unknown, budgetMs: number): Promise<number> {
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

interface Breakdown {
  jobs: number
  parse: number
  sync: number
  stringifyResponse: number
  stringifyEcho: number
  injectHook: number
  injectEcho: number
}

/** Where a request's time goes, one call at a time, without sockets. */
async function measureBreakdown (
  hookApp: FastifyInstance,
  echoApp: FastifyInstance,
  c: Case,
  now: Date
): Promise<Breakdown> {
  const budget = 500
  const parsed = JSON.parse(c.body) as SyncRequest
  const context = { now, scripts: new Map<string, string>() }
  const { response } = syncJobFlow(parsed, context)
  const inject = (app: FastifyInstance, url: string) => async () => {
    const reply = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: c.body,
    })
    if (reply.statusCode !== 200) throw new Error(`${url} answered ${reply.statusCode}`)
  }
  return {
    jobs: c.jobs,
    parse: await timeIt(() => JSON.parse(c.body), budget),
    sync: await timeIt(() => syncJobFlow(parsed, context), budget),
    stringifyResponse: await timeIt(() => JSON.stringify(response), budget),
    stringifyEcho: await timeIt(() => JSON.stringify(parsed), budget),
    injectHook: await timeIt(inject(hookApp, HOOK_PATH), budget),
    injectEcho: await timeIt(inject(echoApp, ECHO_PATH), budget),
  }
}

function fixed (value: number, digits: number): string {
  return value.toFixed(digits)
}

function ms (value: number): string {
  return value >= 100 ? fixed(value, 0) : value >= 10 ? fixed(value, 1) : fixed(value, 2)
}

function size (bytes: number): string {
  return bytes >= 1024 * 1024 ? `${fixed(bytes / 1024 / 1024, 2)} MiB` : `${fixed(bytes / 1024, 1)} KiB`
}

interface Row {
  c: Case
  hook: Measure
  echo: Measure
}

function table (rows: Row[]): string {
  const lines = [
    '| jobs | hook req/s | hook p50 ms | hook p99 ms | echo req/s | echo p50 ms | echo p99 ms | ratio | request body ' +
      '| hook response |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const { c, hook, echo } of rows) {
    lines.push(
      `| ${c.jobs} | ${fixed(hook.reqPerSec, 1)} | ${ms(hook.p50)} | ${ms(hook.p99)} | ${fixed(echo.reqPerSec, 1)} | ` +
        `${ms(echo.p50)} | ${ms(echo.p99)} | ${fixed(hook.reqPerSec / echo.reqPerSec, 2)} | ${size(c.bodyBytes)} | ` +
        `${size(c.hookResponseBytes)} |`
    )
  }
  return lines.join('\n')
}

function serverTable (rows: Row[]): string {
  const lines = [
    '| jobs | hook ms/req (1 ÷ req/s) | hook busy ms/req | hook GC ms/req | echo ms/req (1 ÷ req/s) | echo busy ' +
      'ms/req | echo GC ms/req |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const { c, hook, echo } of rows) {
    lines.push(
      `| ${c.jobs} | ${ms(hook.perRequestMs)} | ${ms(hook.busyPerRequestMs)} | ${ms(hook.gcPerRequestMs)} | ` +
        `${ms(echo.perRequestMs)} | ${ms(echo.busyPerRequestMs)} | ${ms(echo.gcPerRequestMs)} |`
    )
  }
  return lines.join('\n')
}

function breakdownTable (rows: Breakdown[]): string {
  const lines = [
    '| jobs | JSON.parse body | syncJobFlow | JSON.stringify hook response | JSON.stringify body (echo) | inject ' +
      'hook route | inject echo route |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const b of rows) {
    lines.push(
      `| ${b.jobs} | ${ms(b.parse)} | ${ms(b.sync)} | ${ms(b.stringifyResponse)} | ${ms(b.stringifyEcho)} | ` +
        `${ms(b.injectHook)} | ${ms(b.injectEcho)} |`
    )
  }
  return lines.join('\n')
}

function goals (rows: Row[]): string[] {
  const lines: string[] = []
  const at = (jobs: number): Row | undefined => rows.find((r) => r.c.jobs === jobs)
  const big = at(1000)
  const mid = at(100)
  if (big !== undefined) {
    const ratio = big.hook.reqPerSec / big.echo.reqPerSec
    lines.push(
      `- ${ratio >= 0.7 ? 'PASS' : 'FAIL'}: at 1,000 Jobs hook req/s ÷ echo req/s = ${fixed(ratio, 2)} (goal ≥ 0.70)`
    )
  } else {
    lines.push('- SKIP: ratio goal (no 1,000-Job case in BENCH_SIZES)')
  }
  if (big !== undefined && mid !== undefined) {
    // Time per request = 1 / throughput: with a fixed number of connections and one thread, it is
    // the server's mean service time. p50 latency also holds the queueing behind the other
    // connections and is recorded in whole milliseconds, so it is shown only for comparison.
    const factor = big.hook.perRequestMs / mid.hook.perRequestMs
    lines.push(
      `- ${factor <= 12 ? 'PASS' : 'FAIL'}: time per hook request, measured as 1 ÷ req/s, at 1,000 Jobs = ` +
        `${ms(big.hook.perRequestMs)} ms = ${fixed(factor, 2)}× the ${ms(mid.hook.perRequestMs)} ms at 100 Jobs ` +
        '(goal ≤ 12×)'
    )
    lines.push(
      `  - for comparison: by p50 latency ${fixed(big.hook.p50 / mid.hook.p50, 2)}× (${ms(big.hook.p50)} ÷ ` +
        `${ms(mid.hook.p50)} ms); ` +
        `by main-thread busy time ${fixed(big.hook.busyPerRequestMs / mid.hook.busyPerRequestMs, 2)}×, of which GC ` +
        `${ms(big.hook.gcPerRequestMs)} vs ${ms(mid.hook.gcPerRequestMs)} ms/req, ` +
        `busy time without GC ${fixed(
          (big.hook.busyPerRequestMs - big.hook.gcPerRequestMs) / (mid.hook.busyPerRequestMs - mid.hook.gcPerRequestMs),
          2
        )}×; ` +
        `echo by 1 ÷ req/s ${fixed(big.echo.perRequestMs / mid.echo.perRequestMs, 2)}×; request bodies grow ` +
        `${fixed(big.c.bodyBytes / mid.c.bodyBytes, 2)}×`
    )
  } else {
    lines.push('- SKIP: scaling goal (needs the 100- and 1,000-Job cases)')
  }
  return lines
}

async function main (): Promise<void> {
  if (sizes.length > 0) await benchJobFlow()
  if (kindSizes === undefined || kindSizes.length > 0) {
    const cases = kindCases()
    console.log(
      `\n# ${cases.map((c) => c.kind).join(', ')}: one sync at a time over HTTP, about ${duration} s per kind and ` +
        `size, the memo of built objects ${(deploymentMemoLimit() / 1024 / 1024).toFixed(0)} MiB (as large as the ` +
        'Deployment\'s process has it)\n'
    )
    const rows = await benchKinds(kindSizes, duration, cases)
    console.log(kindTable(rows))
    console.log('\nGoals:')
    console.log(kindGoals(rows).join('\n'))
  }
  if (parents) await benchParents()
  if (scale) {
    console.log(
      `\n# The largest cluster and a burst: DaemonJob at ${LARGEST_NODES.toLocaleString('en')} Nodes, and ` +
        `${BURST_CALLS} syncs of ${BURST_NODES.toLocaleString('en')} Nodes at once, against the service as the ` +
        'Deployment runs it\n'
    )
    console.log(scaleReport(await benchScale()))
  }
}

/**
 * The memo's hit rate over PARENTS parents of each kind, of 100 objects each (what every fixture allows), synced in
 * turn twice.
 */
async function benchParents (): Promise<void> {
  const memo = deploymentMemoLimit()
  console.log(
    `\n# The memo over ${PARENTS} parents of each kind, synced in turn, then again (memo ` +
      `${(memo / 1024 / 1024).toFixed(0)} MiB)\n`
  )
  const rows = await memoHitRates(() => 100, PARENTS, kindCases(), memo)
  console.log(hitRateTable(rows))
  console.log('\nGoals:')
  console.log(hitRateGoals(rows).join('\n'))
}

/** The kinds BENCH_KINDS names (all of them when unset). */
function kindCases (): readonly KindCase[] {
  if (kindNames.length === 0) return CASES
  const unknown = kindNames.filter((name) => !CASES.some((c) => c.kind.toLowerCase() === name))
  if (unknown.length > 0) {
    throw new Error(`BENCH_KINDS: no kind ${unknown.join(', ')} (kinds: ${CASES.map((c) => c.kind).join(', ')})`)
  }
  return CASES.filter((c) => kindNames.includes(c.kind.toLowerCase()))
}

async function benchJobFlow (): Promise<void> {
  for (const jobs of sizes) {
    if (!Number.isInteger(jobs) || jobs < 2) {
      throw new Error(`BENCH_SIZES: ${jobs} is not a JobFlow size (an integer ≥ 2)`)
    }
  }
  const cases: Case[] = []
  let now = new Date(0)
  for (const jobs of sizes) {
    const { body, fixture } = jobFlowRequestBody(jobs)
    if (fixture.now > now) now = fixture.now
    cases.push({
      jobs,
      body,
      bodyBytes: Buffer.byteLength(body),
      expected: fixture.expected,
      observedJobNames: Object.values(fixture.request.children['Job.batch/v1'] ?? {}).map((j) => j.metadata.name),
      hookResponseBytes: 0,
      slices: { hook: [], echo: [] },
      amount: { hook: 0, echo: 0 },
    })
  }

  // One clock for every size: later than every time in every fixture, as a real clock would be.
  const hookApp = await buildApp({ clock: () => now })
  const echoApp = await buildEchoApp()
  try {
    const urls: Record<Route, string> = {
      hook: (await listen(hookApp)) + HOOK_PATH,
      echo: (await listen(echoApp)) + ECHO_PATH,
    }
    console.log(`# jobhooks benchmark: POST ${HOOK_PATH} vs POST ${ECHO_PATH}`)
    console.log(
      `node ${process.version}; autocannon ${connections} connections, pipelining 1, ` +
        `${inlineClient ? 'on the main thread' : 'in a worker thread'}; ` +
        `about ${duration} s per route and size in ${rounds} interleaved slices of about ${fixed(slice, 2)} s, after ` +
        `${fixed(warmup, 1)} s warm-up\n`
    )

    for (const c of cases) {
      await verify(urls.hook.replace(HOOK_PATH, ''), urls.echo.replace(ECHO_PATH, ''), c)
      const e = c.expected
      console.log(
        `${c.jobs} jobs: body ${size(c.bodyBytes)}; ${e.observedJobs} observed Jobs (${e.succeeded} succeeded, ` +
          `${e.running} running), ${e.toCreate} to create, ${e.waiting} waiting; hook and echo answers verified`
      )
    }
    for (const c of cases) {
      for (const route of ['hook', 'echo'] as const) {
        const warm = await load(urls[route], c.body, { seconds: warmup }, `warm-up ${route} ${c.jobs}`)
        c.amount[route] = Math.max(connections, Math.round(rate(warm) * slice))
      }
    }
    gcObserver.observe({ entryTypes: ['gc'] })
    for (let round = 0; round < rounds; round++) {
      const order: Route[] = round % 2 === 0 ? ['hook', 'echo'] : ['echo', 'hook']
      for (const c of cases) {
        for (const route of order) {
          c.slices[route].push(await measureSlice(urls[route], c.body, c.amount[route], `${route} ${c.jobs}`))
        }
      }
      console.log(
        `round ${round + 1}/${rounds}: ` +
          cases
            .map(
              (c) =>
                `${c.jobs} jobs hook ${fixed(rate(c.slices.hook.at(-1)?.result), 1)} / echo ` +
                  `${fixed(rate(c.slices.echo.at(-1)?.result), 1)} req/s`
            )
            .join('; ')
      )
    }

    const rows: Row[] = cases.map((c) => ({ c, hook: measure(c.slices.hook), echo: measure(c.slices.echo) }))
    console.log('\n' + table(rows) + '\n')
    console.log(
      `Requests measured: ${rows
        .map((r) => `${r.c.jobs} jobs ${r.hook.requests} hook / ${r.echo.requests} echo`)
        .join('; ')}.`
    )
    gcObserver.disconnect()
    console.log(
      "\nThe servers' thread per request (busy = event-loop active time, GC = pauses; both routes share the thread, " +
        'each slice is one route):\n'
    )
    console.log(serverTable(rows))
    console.log('\nGoals:')
    console.log(goals(rows).join('\n'))

    if (breakdown) {
      const breakdowns: Breakdown[] = []
      for (const c of cases) breakdowns.push(await measureBreakdown(hookApp, echoApp, c, now))
      console.log('\nWhere the time goes (mean ms per call, one call at a time, no sockets, GC included):\n')
      console.log(breakdownTable(breakdowns))
    }
  } finally {
    await Promise.all([hookApp.close(), echoApp.close()])
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  process.exitCode = 1
})
