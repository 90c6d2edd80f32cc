// The benchmark of the DaemonJob, EphemeralJob, OperationJob and CollaSet sync hooks at 500 and
// 5,000 objects (Nodes, matched Pods, targets, Pods), requests as the API server returns the
// objects. One sync at a time through real HTTP on 127.0.0.1: the latency Metacontroller sees.
import { performance } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import { daemonJobFixture } from './daemonjob.js'
import { ephemeralJobFixture } from './ephemeraljob.js'
import { operationJobFixture } from './operationjob.js'
import { collaSetFixture } from './collaset.js'

interface Fixture {
  now: Date
  request: unknown
  verify: (response: unknown) => void
}

interface KindCase {
  kind: string
  path: string
  unit: string
  build: (size: number) => Fixture
}

const CASES: KindCase[] = [
  { kind: 'DaemonJob', path: '/hooks/daemonjob/sync', unit: 'Nodes', build: daemonJobFixture },
  { kind: 'EphemeralJob', path: '/hooks/ephemeraljob/sync', unit: 'matched Pods', build: ephemeralJobFixture },
  { kind: 'OperationJob', path: '/hooks/operationjob/sync', unit: 'targets', build: operationJobFixture },
  { kind: 'CollaSet', path: '/hooks/collaset/sync', unit: 'Pods', build: collaSetFixture }
]

/** The goal: one sync answers within a second at the largest size. */
const P99_GOAL_MS = 1000
/** Time may grow as the input does, with a margin for noise: 10× the objects, at most 12× the time. */
const GROWTH_SLACK = 1.2

export interface KindRow {
  kind: string
  size: number
  unit: string
  bodyBytes: number
  requests: number
  p50: number
  p99: number
}

function percentile (sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN
}

async function time (c: KindCase, size: number, seconds: number): Promise<KindRow> {
  const fixture = c.build(size)
  const body = JSON.stringify(fixture.request)
  const app = await buildApp({ clock: () => fixture.now })
  try {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}${c.path}`
    const post = async (): Promise<unknown> => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      if (response.status !== 200) throw new Error(`${c.kind} ${size}: HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`)
      return await response.json()
    }
    // The answer is checked before anything is timed: the benchmark measures real work.
    fixture.verify(await post())
    for (let i = 0; i < 3; i++) await post()
    const samples: number[] = []
    const until = performance.now() + seconds * 1000
    while (samples.length < 20 || (performance.now() < until && samples.length < 2000)) {
      const start = performance.now()
      await post()
      samples.push(performance.now() - start)
    }
    samples.sort((a, b) => a - b)
    return { kind: c.kind, size, unit: c.unit, bodyBytes: Buffer.byteLength(body), requests: samples.length, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) }
  } finally {
    await app.close()
  }
}

export async function benchKinds (sizes: number[], seconds: number): Promise<KindRow[]> {
  const rows: KindRow[] = []
  for (const c of CASES) for (const size of sizes) rows.push(await time(c, size, seconds))
  return rows
}

export function kindTable (rows: KindRow[]): string {
  const lines = ['| kind | objects | request body | syncs timed | p50 ms | p99 ms |', '| --- | ---: | ---: | ---: | ---: | ---: |']
  for (const r of rows) {
    lines.push(`| ${r.kind} | ${r.size.toLocaleString('en')} ${r.unit} | ${(r.bodyBytes / 1024 / 1024).toFixed(2)} MiB | ${r.requests} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`)
  }
  return lines.join('\n')
}

export function kindGoals (rows: KindRow[]): string[] {
  const lines: string[] = []
  for (const kind of new Set(rows.map(r => r.kind))) {
    const mine = rows.filter(r => r.kind === kind).sort((a, b) => a.size - b.size)
    const small = mine[0]
    const large = mine.at(-1)
    if (small === undefined || large === undefined) continue
    lines.push(`- ${large.p99 < P99_GOAL_MS ? 'PASS' : 'FAIL'}: ${kind} p99 of one sync at ${large.size.toLocaleString('en')} = ${large.p99.toFixed(1)} ms (goal < ${P99_GOAL_MS} ms)`)
    if (small !== large) {
      const inputs = large.size / small.size
      const growth = large.p50 / small.p50
      lines.push(`- ${growth <= inputs * GROWTH_SLACK ? 'PASS' : 'FAIL'}: ${kind} p50 grows ${growth.toFixed(2)}× for ${inputs}× the objects (goal ≤ ${(inputs * GROWTH_SLACK).toFixed(0)}×: no faster than the input)`)
    }
  }
  return lines
}
