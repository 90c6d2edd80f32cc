// The JobFlow part of `npm run bench`: POST /hooks/jobflow/sync against an echo route that only
// parses the same body and serialises it back, in the same process (bench/run.ts says how).
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp, createFastify, DEFAULT_BODY_LIMIT } from '../src/app.js'
import { syncJobFlow } from '../src/controllers/jobflow/sync.js'
import type { SyncRequest, SyncResponse } from '../src/protocol/hooks.js'
import { ungroupRecords } from '../src/formats/jobflow-status.js'
import { jobFlowRequestBody, type FixtureExpectation } from './fixtures.js'
import { BENCH_JOBFLOW } from './jobflow-jobs.js'
import { gcObserver, load, measure, measureSlice, rate, timeIt, type Measure, type Slice } from './load.js'
import { breakdown, connections, duration, inlineClient, rounds, sizes, slice, warmup } from './settings.js'

const HOOK_PATH = '/hooks/jobflow/sync'
const ECHO_PATH = '/bench/echo'

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
 * Whether a JobFlow sync answer does the real work the fixture expects: a well-formed response,
 * every observed Job kept, the Jobs whose dependencies succeeded created, a record for every flow
 * (read with the status format's codec: alike records are written once, in status.jobGroups), and
 * the phase. Throws what differs first.
 */
export function checkHookAnswer (response: unknown, expected: FixtureExpectation, observedJobNames: string[]): void {
  const answer = response as SyncResponse & Record<string, unknown>
  const extra = Object.keys(answer).filter(
    (k) => !['status', 'children', 'resyncAfterSeconds', 'finalized'].includes(k)
  )
  if (extra.length > 0) throw new Error(`unexpected top-level fields ${extra.join(', ')}`)
  const status = answer.status as {
    phase?: unknown
    conditions?: Array<{ type?: unknown; status?: unknown }>
  } & Record<string, unknown>
  if (status.phase !== expected.phase) {
    throw new Error(`status.phase is ${String(status.phase)}, want ${expected.phase}`)
  }
  const valid = status.conditions?.find((x) => x.type === 'Valid')
  if (valid?.status !== 'True') throw new Error(`Valid condition is ${JSON.stringify(valid)}`)
  const returned = new Set(
    answer.children.filter((ch) => ch.kind === 'Job' && ch.apiVersion === 'batch/v1').map((ch) => ch.metadata.name)
  )
  const dropped = observedJobNames.filter((name) => !returned.has(name))
  if (dropped.length > 0) {
    throw new Error(`the hook would delete ${dropped.length} Jobs, e.g. ${dropped.slice(0, 3).join(', ')}`)
  }
  const created = returned.size - observedJobNames.length
  if (created !== expected.toCreate) throw new Error(`the hook creates ${created} Jobs, want ${expected.toCreate}`)
  if (answer.children.length !== returned.size) {
    throw new Error(`${answer.children.length - returned.size} children that are not Jobs`)
  }
  const records = ungroupRecords(status, BENCH_JOBFLOW)
  if (records.length !== expected.flows) {
    throw new Error(`status has ${records.length} records, want ${expected.flows}`)
  }
  const want = {
    Succeeded: expected.succeeded, Running: expected.running, Pending: expected.toCreate + expected.waiting
  }
  for (const [phase, count] of Object.entries(want)) {
    const got = records.filter((r) => r.phase === phase).length
    if (got !== count) throw new Error(`${got} ${phase} records in the status, want ${count}`)
  }
}

/**
 * One real request to each route before any timing. The hook must do the real work: answer 200
 * with a well-formed response, keep every observed Job, create the Jobs whose dependencies
 * succeeded, record every flow, and report phase Running.
 */
async function verify (hookUrl: string, echoUrl: string, c: Case): Promise<void> {
  const hook = await post(hookUrl + HOOK_PATH, c.body)
  if (hook.status !== 200) fail(c, `hook answered ${hook.status}: ${hook.text.slice(0, 500)}`)
  try {
    checkHookAnswer(JSON.parse(hook.text), c.expected, c.observedJobNames)
  } catch (error) {
    fail(c, (error as Error).message)
  }
  // The same request at the same time gives the same answer (law 3).
  const again = await post(hookUrl + HOOK_PATH, c.body)
  if (again.text !== hook.text) fail(c, 'two identical requests got different answers')
  c.hookResponseBytes = Buffer.byteLength(hook.text)

  const echo = await post(echoUrl + ECHO_PATH, c.body)
  if (echo.status !== 200) fail(c, `echo answered ${echo.status}`)
  if (echo.text !== c.body) fail(c, `echo did not give the body back (${echo.text.length} of ${c.body.length} bytes)`)
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

/** The JobFlow of each of BENCH_SIZES, and one clock later than every time in every fixture. */
function jobFlowCases (): { cases: Case[]; now: Date } {
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
  return { cases, now }
}

/** Each case answered right by both routes, then each route's rate in a warm-up sizes its slices. */
async function verifyAndWarmUp (urls: Record<Route, string>, cases: Case[]): Promise<void> {
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
}

/** BENCH_ROUNDS rounds of one slice per case and route, hook first in one round, echo in the next. */
async function measureRounds (urls: Record<Route, string>, cases: Case[]): Promise<void> {
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
}

/** The measured cases' tables and goals; the GC observer stops once the measures are taken. */
function report (cases: Case[]): void {
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
}

/** The JobFlow part: both routes at every size, verified, warmed up, measured in rounds, reported. */
export async function benchJobFlow (): Promise<void> {
  const { cases, now } = jobFlowCases()
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
    await verifyAndWarmUp(urls, cases)
    gcObserver.observe({ entryTypes: ['gc'] })
    await measureRounds(urls, cases)
    report(cases)
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
