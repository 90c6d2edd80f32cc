// JobFlows as large as the API server admits: one step over 10,000 items (its Jobs kept, or each
// deleted by its TTL once its outcome is recorded), and 2,000 inline steps.
// Each is played on the in-process Metacontroller (src/simulator) to the end, and the request of its
// heaviest sync is kept: every Job observed, with its succeeded Pod, and the status to group. That
// request is then posted over HTTP, one sync at a time, as bench/kinds.ts posts (a client in a
// worker thread, an app with the Deployment's memo). The report gives the sync's p50 and p99 (goal:
// p99 under 1 s, well inside Metacontroller's 10 s timeout), the request's size, and the bytes of
// the status and of the whole object (spec and status; goal: under 1 MiB, as etcd refuses 1.5 MiB)
// at the largest the run ever wrote.
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'
import type { KubeObject } from '../src/k8s/types.js'
import { Simulator } from '../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../src/simulator/controllers.js'
import { deploymentMemoLimit } from './kinds.js'
import { percentile } from './percentile.js'
import { Poster } from './poster.js'

const MIB = 1024 * 1024
const SYNCS = 20
const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]

interface SizeCase {
  what: string
  flows: Array<Record<string, unknown>>
}

export const SIZE_CASES: readonly SizeCase[] = [
  {
    what: 'one step over 10,000 items, then a merge',
    flows: [
      inline('process', { forEach: Array.from({ length: 10_000 }, (_, i) => `shard-${i}`), parallelism: 2_500 }),
      inline('merge', { dependencies: ['process'] })
    ]
  },
  {
    // As docs/jobflow.md advises for large fan-outs: a finished Job goes once its outcome is recorded.
    what: 'the same, its Jobs with ttlSecondsAfterFinished: 0',
    flows: [
      inline('process', { forEach: Array.from({ length: 10_000 }, (_, i) => `shard-${i}`), parallelism: 2_500 }, 0),
      inline('merge', { dependencies: ['process'] }, 0)
    ]
  },
  {
    what: '2,000 inline steps in 10 waves',
    flows: Array.from({ length: 2_000 }, (_, i) => inline(`step-${i}`, i < 200 ? {} : after(`step-${i - 200}`)))
  }
]

function after (dependency: string): Record<string, unknown> {
  return { dependencies: [dependency] }
}

function inline (name: string, extra: Record<string, unknown>, ttl?: number): Record<string, unknown> {
  const template = { spec: { containers } }
  const jobTemplate = ttl === undefined ? { template } : { ttlSecondsAfterFinished: ttl, template }
  return { name, jobTemplate, ...extra }
}

export interface SizeRow {
  what: string
  phase: string
  requestMiB: number
  syncs: number[]
  statusBytes: number
  largestObjectBytes: number
}

/** Plays the case to the end; the request with the most objects, and the largest object written. */
export async function play (c: SizeCase): Promise<{ request: unknown, now: Date, phase: string, largest: number }> {
  const sim = new Simulator({
    controllers: [jobflowController('v2')], coalesce: true, transport: 'direct', checkReads: false
  })
  const metadata = { name: 'size', namespace: 'default' }
  const flow: KubeObject = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', metadata, spec: { flows: c.flows } }
  const ref = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name: 'size' }
  sim.apply(flow)
  let heaviest: { request: unknown, now: Date, objects: number } = { request: undefined, now: sim.now(), objects: 0 }
  let largest = 0
  let version: unknown
  try {
    await sim.runUntil(() => {
      const stored = sim.store.view(JOBHOOKS_API_VERSION, 'JobFlow')[0]
      if (stored !== undefined && stored.metadata.resourceVersion !== version) {
        version = stored.metadata.resourceVersion
        largest = Math.max(largest, Buffer.byteLength(JSON.stringify(stored)))
        const request = sim.lastReconcile(ref)?.request
        const objects = request === undefined ? 0 : countObjects(request.children) + countObjects(request.related)
        if (request !== undefined && objects >= heaviest.objects) heaviest = { request, now: sim.now(), objects }
      }
      return sim.isQuiet()
    }, { maxSteps: 100_000 })
    const status = sim.get(ref)?.status as { phase?: string } | undefined
    const request: unknown = JSON.parse(JSON.stringify(heaviest.request))
    return { request, now: heaviest.now, phase: status?.phase ?? '?', largest }
  } finally {
    await sim.close()
  }
}

function countObjects (groups: Record<string, Record<string, unknown>> | undefined): number {
  return Object.values(groups ?? {}).reduce((n, group) => n + Object.keys(group).length, 0)
}

/**
 * Each case: played, then its heaviest sync posted SYNCS times, as bench/kinds.ts posts: by a
 * client in a worker thread (Metacontroller is another process), to an app whose memo is as large
 * as the Deployment's process would have it (deploymentMemoLimit). Every answer must be the first
 * one byte for byte.
 */
export async function benchSizes (): Promise<SizeRow[]> {
  const rows: SizeRow[] = []
  for (const c of SIZE_CASES) {
    const { request, now, phase, largest } = await play(c)
    const body = Buffer.from(JSON.stringify(request))
    const timed = await timeSyncs(body, now)
    rows.push({ what: c.what, phase, requestMiB: body.length / MIB, ...timed, largestObjectBytes: largest })
  }
  return rows
}

/** SYNCS syncs of `body` at `now`, after two to warm up, and the bytes of the answer's status. */
async function timeSyncs (body: Buffer, now: Date): Promise<Pick<SizeRow, 'syncs' | 'statusBytes'>> {
  const app = await buildApp({ clock: () => now, memoBytes: deploymentMemoLimit() })
  let poster: Poster | undefined
  try {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const url = new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/hooks/jobflow/sync`)
    poster = new Poster(url, body, body)
    const answer = await poster.fetch()
    const { status } = JSON.parse(answer.toString('utf8')) as { status: unknown }
    const statusBytes = Buffer.byteLength(JSON.stringify(status))
    poster.expect(answer)
    const syncs: number[] = []
    // The first two warm the app up.
    for (let i = 0; i < SYNCS + 2; i++) {
      const { ms, same } = await poster.sync()
      if (!same) throw new Error('the same request got another answer')
      if (i >= 2) syncs.push(ms)
    }
    return { syncs, statusBytes }
  } finally {
    await poster?.close()
    await app.close()
  }
}

export function sizeTable (rows: readonly SizeRow[]): string {
  const lines = ['| JobFlow | ends | heaviest request | sync p50 | sync p99 | status | largest object written |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |']
  for (const row of rows) {
    const sorted = [...row.syncs].sort((a, b) => a - b)
    const p50 = percentile(sorted, 0.5).toFixed(0)
    lines.push(`| ${row.what} | ${row.phase} | ${row.requestMiB.toFixed(1)} MiB | ${p50} ms | ` +
      `${percentile(sorted, 0.99).toFixed(0)} ms | ${(row.statusBytes / 1024).toFixed(1)} KiB | ` +
      `${(row.largestObjectBytes / 1024).toFixed(0)} KiB |`)
  }
  return lines.join('\n')
}

export function sizeGoals (rows: readonly SizeRow[]): string[] {
  return rows.flatMap(row => {
    const p99 = percentile([...row.syncs].sort((a, b) => a - b), 0.99)
    return [
      `${p99 < 1000 ? 'PASS' : 'FAIL'} ${row.what}: sync p99 ${p99.toFixed(0)} ms < 1000 ms`,
      `${row.largestObjectBytes < MIB ? 'PASS' : 'FAIL'} ${row.what}: largest object ` +
        `${row.largestObjectBytes} bytes < 1 MiB`,
      `${row.phase === 'Succeeded' ? 'PASS' : 'FAIL'} ${row.what}: ran to Succeeded`
    ]
  })
}
