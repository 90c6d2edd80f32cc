// The largest clusters, against the service as the Deployment runs it: a process of its own
// (bench/serve.ts) started with the Node options of manifests/deploy/deployment.yaml and the
// image's command, whose peak resident memory is read from the kernel (VmHWM) afterwards.
//
// - One DaemonJob sync at 15,000 Nodes as busy kubelets report them (about 210 MiB with the
//   DaemonJob's Jobs), several times in a row: goal p99 under 2 s, peak memory under 576 MiB.
// - A burst: 25 syncs of 5,000 Nodes at once, as five Metacontroller workers of five
//   controllers could send them: goal every call answered 200 within Metacontroller's 10 s or
//   shed with 429, at least a fifth of them served, peak memory under the Deployment's limit.
import { fork, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseAllDocuments } from 'yaml'
import { daemonJobFixture } from './daemonjob.js'
import { percentile } from './percentile.js'
import { packageRoot } from '../src/scripts/library.js'

const ROOT = packageRoot()
const PATH = '/hooks/daemonjob/sync'
const MIB = 1024 * 1024

export const LARGEST_NODES = 15_000
export const BURST_NODES = 5_000
export const BURST_CALLS = 25
const LARGEST_SYNCS = 6
const LARGEST_P99_GOAL_MS = 2000
/**
 * Half the Deployment's 1 GiB until the hook thread (src/thread/hook-thread.ts), whose second V8
 * heap costs 40 MiB at rest and 60–100 MiB at this size (docs/performance.md): 576 MiB keeps the
 * largest sync well inside the limit, beside a burst's 600.
 */
const LARGEST_MEMORY_GOAL = 576 * MIB
/** Metacontroller's default hook timeout. */
export const HOOK_TIMEOUT_MS = 10_000
const BURST_SERVED_GOAL = 1 / 5

/** What the Deployment gives the process: its Node options and its memory limit. */
export interface Deployment {
  nodeOptions: string[]
  memoryLimit: number
}

/** The Node options of the image's command and of the Deployment's NODE_OPTIONS, and its memory limit. */
export function deploymentSettings (root = ROOT): Deployment {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1]
  const imageOptions = (cmd !== undefined ? (JSON.parse(cmd) as string[]) : []).filter((a) => a.startsWith('--'))
  const deployment = parseAllDocuments(readFileSync(join(root, 'manifests', 'deploy', 'deployment.yaml'), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'Deployment')
  const container = deployment?.spec?.template?.spec?.containers?.[0]
  const nodeOptions = String(container?.env?.find((e: { name: string }) => e.name === 'NODE_OPTIONS')?.value ?? '')
    .split(/\s+/)
    .filter((o) => o !== '')
  const limit = String(container?.resources?.limits?.memory ?? '')
  const match = /^(\d+)(Mi|Gi)$/.exec(limit)
  if (match === null) throw new Error(`the Deployment's memory limit ${JSON.stringify(limit)} is not in Mi or Gi`)
  return {
    nodeOptions: [...imageOptions, ...nodeOptions],
    memoryLimit: Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1) * MIB,
  }
}

export interface Served {
  child: ChildProcess
  port: number
}

export async function serve (deployment: Deployment, now: Date): Promise<Served> {
  const child = fork(join(ROOT, 'dist', 'bench', 'serve.js'), [], {
    execArgv: deployment.nodeOptions,
    env: { ...process.env, BENCH_NOW: now.toISOString() },
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message) => resolve((message as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`the service exited with ${String(code)} before it listened`)))
  })
  return { child, port }
}

/** The most memory the process has had resident, from /proc. */
function peakResident (pid: number): number {
  const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
  if (kib === undefined) throw new Error('no VmHWM in /proc')
  return Number(kib) * 1024
}

export async function stop (served: Served): Promise<void> {
  const exited = new Promise((resolve) => served.child.once('exit', resolve))
  served.child.disconnect()
  await exited
}

export interface Call {
  status: number
  ms: number
  body: Buffer
}

/**
 * One POST on a connection of its own; resolves with the answer, even when the server answers before the body is sent.
 */
export async function post (port: number, body: Buffer, path = PATH): Promise<Call> {
  const start = performance.now()
  return await new Promise<Call>((resolve, reject) => {
    let answered = false
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        answered = true
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, ms: performance.now() - start, body: Buffer.concat(chunks) })
        )
        response.on('error', reject)
      }
    )
    // A shed call is answered and its connection closed while its body is still being written.
    request.on('error', (error) => {
      if (!answered) reject(error)
    })
    request.end(body)
  })
}

export interface ScaleResult {
  largest: { nodes: number; bodyBytes: number; p50: number; p99: number; peak: number }
  burst: {
    nodes: number
    calls: number
    bodyBytes: number
    served: number
    shed: number
    other: number
    slowestServedMs: number
    slowestShedMs: number
    peak: number
  }
  deployment: Deployment
}

export async function benchScale (): Promise<ScaleResult> {
  const deployment = deploymentSettings()
  const largest = await timeLargest(deployment)
  const burst = await timeBurst(deployment)
  return { largest, burst, deployment }
}

async function timeLargest (deployment: Deployment): Promise<ScaleResult['largest']> {
  const fixture = daemonJobFixture(LARGEST_NODES)
  const body = Buffer.from(JSON.stringify(fixture.request))
  const served = await serve(deployment, fixture.now)
  try {
    const first = await post(served.port, body)
    if (first.status !== 200) throw new Error(`HTTP ${first.status}: ${first.body.toString('utf8', 0, 300)}`)
    fixture.verify(JSON.parse(first.body.toString('utf8')))
    const times: number[] = []
    for (let i = 0; i < LARGEST_SYNCS; i++) {
      const call = await post(served.port, body)
      if (call.status !== 200 || !call.body.equals(first.body)) {
        throw new Error(`sync ${i + 2} answered HTTP ${call.status}, not the first answer`)
      }
      times.push(call.ms)
    }
    times.sort((a, b) => a - b)
    return {
      nodes: LARGEST_NODES,
      bodyBytes: body.length,
      p50: percentile(times, 0.5),
      p99: percentile(times, 0.99),
      peak: peakResident(served.child.pid as number),
    }
  } finally {
    await stop(served)
  }
}

async function timeBurst (deployment: Deployment): Promise<ScaleResult['burst']> {
  const fixture = daemonJobFixture(BURST_NODES)
  const body = Buffer.from(JSON.stringify(fixture.request))
  const served = await serve(deployment, fixture.now)
  try {
    const calls = await Promise.all(Array.from({ length: BURST_CALLS }, async () => await post(served.port, body)))
    const ok = calls.filter((c) => c.status === 200)
    for (const call of ok) fixture.verify(JSON.parse(call.body.toString('utf8')))
    const shed = calls.filter((c) => c.status === 429)
    return {
      nodes: BURST_NODES,
      calls: BURST_CALLS,
      bodyBytes: body.length,
      served: ok.length,
      shed: shed.length,
      other: calls.length - ok.length - shed.length,
      slowestServedMs: Math.max(0, ...ok.map((c) => c.ms)),
      slowestShedMs: Math.max(0, ...shed.map((c) => c.ms)),
      peak: peakResident(served.child.pid as number),
    }
  } finally {
    await stop(served)
  }
}

const mib = (bytes: number): string => `${(bytes / MIB).toFixed(0)} MiB`

export function scaleReport ({ largest, burst, deployment }: ScaleResult): string {
  const served = burst.served / burst.calls
  return [
    `Service process: node ${deployment.nodeOptions.join(' ')}; the Deployment's memory limit ` +
      `${mib(deployment.memoryLimit)}.`,
    '',
    '| case | request body | result | p50 ms | p99 / slowest ms | peak resident |',
    '| --- | ---: | --- | ---: | ---: | ---: |',
    `| DaemonJob, ${largest.nodes.toLocaleString('en')} Nodes, ${LARGEST_SYNCS} syncs in a row | ` +
      `${mib(largest.bodyBytes)} | every answer 200 | ${largest.p50.toFixed(0)} | ${largest.p99.toFixed(0)} | ` +
      `${mib(largest.peak)} |`,
    `| burst: ${burst.calls} syncs of ${burst.nodes.toLocaleString('en')} Nodes at once | ${mib(burst.bodyBytes)} ` +
      `each | ${burst.served} served, ${burst.shed} shed, ${burst.other} other | | served ` +
      `${burst.slowestServedMs.toFixed(0)}, shed ${burst.slowestShedMs.toFixed(0)} | ${mib(burst.peak)} |`,
    '',
    'Goals:',
    `- ${largest.p99 < LARGEST_P99_GOAL_MS ? 'PASS' : 'FAIL'}: DaemonJob at ${largest.nodes.toLocaleString('en')} ` +
      `Nodes, p99 ${largest.p99.toFixed(0)} ms (goal < ${LARGEST_P99_GOAL_MS} ms)`,
    `- ${largest.peak < LARGEST_MEMORY_GOAL ? 'PASS' : 'FAIL'}: DaemonJob at ${largest.nodes.toLocaleString('en')} ` +
      `Nodes, peak resident ${mib(largest.peak)} (goal < ${mib(LARGEST_MEMORY_GOAL)})`,
    `- ${burst.other === 0 && burst.slowestServedMs < HOOK_TIMEOUT_MS ? 'PASS' : 'FAIL'}: burst, every call answered ` +
      `200 within ${HOOK_TIMEOUT_MS / 1000} s (slowest ${burst.slowestServedMs.toFixed(0)} ms) or shed with 429 ` +
      `(${burst.other} otherwise)`,
    `- ${served >= BURST_SERVED_GOAL ? 'PASS' : 'FAIL'}: burst, ${burst.served} of ${burst.calls} served (goal ≥ ` +
      `${Math.ceil(BURST_SERVED_GOAL * burst.calls)})`,
    `- ${burst.peak < deployment.memoryLimit ? 'PASS' : 'FAIL'}: burst, peak resident ${mib(burst.peak)} (goal < the ` +
      `Deployment's ${mib(deployment.memoryLimit)})`,
  ].join('\n')
}
