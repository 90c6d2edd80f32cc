// Shedding by cost: a burst of first syncs of a JobFlow over 10,000 items, each request small and
// each answer megabytes of new Jobs, against the service as the Deployment runs it (a process of
// its own with the Deployment's Node options, bench/scale.ts's serve), posted at once from this
// process, each on a connection of its own, as Metacontroller's workers would. Goal: every call
// answered within Metacontroller's 10 s timeout, 200 or 429 with Retry-After (which it takes as
// "come back later"), and at least one served. Two syncs alone come first: the service is warm
// and its work queue has measured its rate, as a running service has. A readiness probe asks
// /readyz every 100 ms all through the burst: no hook may keep the event loop from answering it.
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { jobFlowController } from './fixtures.js'
import { fixtureUid } from './fixture-common.js'
import { percentile } from './percentile.js'
import { deploymentSettings, HOOK_TIMEOUT_MS, post, serve, stop, type Call } from './scale.js'
import { JOBHOOKS_API_VERSION } from '../src/simulator/controllers.js'

export const SHED_CALLS = 20
export const SHED_ITEMS = 10_000
const PATH = '/hooks/jobflow/sync'
const WARM_UP = 2
const READY_PROBE_MS = 100
/** A kubelet's readiness probe gives up after 1 s by default. */
const READY_GOAL_MS = 1_000

export interface ShedResult {
  calls: number
  requestBytes: number
  answerBytes: number
  served: number
  shed: number
  other: number
  p50: number
  max: number
  slowestServed: number
  slowestShed: number
  /** The slowest of the /readyz probes sent every READY_PROBE_MS during the burst, and how many. */
  slowestReady: number
  readyProbes: number
  peak: number
}

/** The first sync of a JobFlow of one step over 10,000 items, then a merge (as bench/jobflow-size.ts builds it). */
export function firstSyncBody (): Buffer {
  const metadata = {
    name: 'shed',
    namespace: 'default',
    uid: fixtureUid('shed'),
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: '2026-01-02T03:00:00Z'
  }
  const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]
  const jobTemplate = { template: { spec: { containers } } }
  // No parallelism: the first sync creates a Job for every item, the largest answer a JobFlow gives.
  const flows = [
    { name: 'process', jobTemplate, forEach: Array.from({ length: SHED_ITEMS }, (_, i) => String(i)) },
    { name: 'merge', jobTemplate, dependencies: ['process'] }
  ]
  const parent = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', metadata, spec: { flows } }
  return Buffer.from(JSON.stringify({ controller: jobFlowController(), parent, children: {}, related: {} }))
}

export async function benchShed (): Promise<ShedResult> {
  const body = firstSyncBody()
  const served = await serve(deploymentSettings(), new Date('2026-01-02T03:00:05Z'))
  try {
    let answerBytes = 0
    for (let i = 0; i < WARM_UP; i++) {
      const call = await post(served.port, body, PATH)
      if (call.status !== 200) throw new Error(`HTTP ${call.status}: ${call.body.toString('utf8', 0, 300)}`)
      answerBytes = call.body.length
    }
    const burst = Promise.all(
      Array.from({ length: SHED_CALLS }, async () => await post(served.port, body, PATH))
    )
    const ready = await probeReadiness(served.port, burst)
    const calls = await burst
    const peak = peakOf(served.child.pid)
    return { ...tally(calls), ...ready, calls: SHED_CALLS, requestBytes: body.length, answerBytes, peak }
  } finally {
    await stop(served)
  }
}

function tally (
  calls: readonly Call[]
): Omit<ShedResult, 'calls' | 'requestBytes' | 'answerBytes' | 'peak' | 'slowestReady' | 'readyProbes'> {
  const ok = calls.filter(c => c.status === 200)
  const shed = calls.filter(c => c.status === 429)
  const times = calls.map(c => c.ms).sort((a, b) => a - b)
  return {
    served: ok.length,
    shed: shed.length,
    other: calls.length - ok.length - shed.length,
    p50: percentile(times, 0.5),
    max: Math.max(0, ...times),
    slowestServed: Math.max(0, ...ok.map(c => c.ms)),
    slowestShed: Math.max(0, ...shed.map(c => c.ms))
  }
}

/**
 * Asks /readyz every READY_PROBE_MS until `until` settles, as a kubelet's readiness probe would
 * (its default timeout is 1 s): the slowest answer, in ms, and how many were asked.
 */
async function probeReadiness (
  port: number, until: Promise<unknown>
): Promise<{ slowestReady: number, readyProbes: number }> {
  const state = { done: false }
  void until.finally(() => { state.done = true })
  let slowestReady = 0
  let readyProbes = 0
  while (!state.done) {
    const start = performance.now()
    const status = await new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/readyz', agent: false }, response => {
        response.resume()
        response.on('end', () => { resolve(response.statusCode ?? 0) })
      }).on('error', reject)
    })
    if (status !== 200) throw new Error(`/readyz answered ${status} during the burst`)
    slowestReady = Math.max(slowestReady, performance.now() - start)
    readyProbes++
    await new Promise(resolve => setTimeout(resolve, READY_PROBE_MS))
  }
  return { slowestReady, readyProbes }
}

function peakOf (pid: number | undefined): number {
  const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid ?? 0}/status`, 'utf8'))?.[1]
  return Number(kib ?? 0) * 1024
}

export function shedReport (r: ShedResult): string {
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`
  const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
  return [
    '| case | request | answer | result | p50 ms | max ms | slowest served / shed ms | peak resident |',
    '| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |',
    `| ${r.calls} first syncs of a ${SHED_ITEMS.toLocaleString('en')}-item JobFlow at once | ` +
      `${kib(r.requestBytes)} | ` +
      `${mib(r.answerBytes)} | ${r.served} served, ${r.shed} shed, ${r.other} other | ${r.p50.toFixed(0)} | ` +
      `${r.max.toFixed(0)} | ${r.slowestServed.toFixed(0)} / ${r.slowestShed.toFixed(0)} | ${mib(r.peak)} |`,
    '',
    'Goals:',
    `- ${r.other === 0 && r.max < HOOK_TIMEOUT_MS ? 'PASS' : 'FAIL'}: every call answered 200 or 429 within ` +
      `${HOOK_TIMEOUT_MS / 1000} s (slowest ${r.max.toFixed(0)} ms, ${r.other} otherwise)`,
    `- ${r.served > 0 ? 'PASS' : 'FAIL'}: ${r.served} of ${r.calls} served (goal ≥ 1)`,
    `- ${r.slowestReady < READY_GOAL_MS ? 'PASS' : 'FAIL'}: /readyz answered within ${READY_GOAL_MS / 1000} s ` +
      `all through the burst (slowest of ${r.readyProbes} probes ${r.slowestReady.toFixed(0)} ms)`
  ].join('\n')
}
