// The figures of one run of test/e2e/compare/argo.bench.ts, each read where the tier shows it:
// pods' times from one watch of the harness (the arrival times of its events, one clock for both
// systems), CPU and memory from /proc of the controllers' processes, API requests from
// kube-apiserver's own counter (apiserver_request_total), which counts every client alike.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import type { WatchEvent } from '../scenario.js'

/** Clock ticks per second of /proc/<pid>/stat's utime and stime. */
function clockTicks (): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
}

/** User and system CPU seconds of `pid` so far, every thread of it; 0 once it is gone. */
export function cpuSeconds (pid: number, ticks: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces: the fields after it start past its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / ticks
  } catch {
    return 0
  }
}

/** The resident memory of `pid` in bytes (VmRSS); 0 once it is gone. */
export function rssBytes (pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) * 1024
  } catch {
    return 0
  }
}

export interface Usage {
  /** CPU seconds of each group of processes over the run. */
  cpu: Record<string, number>
  /** The highest sum of the resident memory of each group's processes at one sample, MiB. */
  peakRssMiB: Record<string, number>
}

/** Samples groups of processes (name → pids) every `everyMs` until stop(): CPU and peak memory. */
export function sampleUsage (groups: Record<string, number[]>, everyMs = 250): { stop: () => Usage } {
  const ticks = clockTicks()
  const cpuOf = (pids: number[]): number => pids.reduce((sum, pid) => sum + cpuSeconds(pid, ticks), 0)
  const before = Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, cpuOf(pids)]))
  const peak: Record<string, number> = Object.fromEntries(Object.keys(groups).map((name) => [name, 0]))
  const sample = (): void => {
    for (const [name, pids] of Object.entries(groups)) {
      peak[name] = Math.max(peak[name] ?? 0, pids.reduce((sum, pid) => sum + rssBytes(pid), 0))
    }
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      sample()
      return {
        cpu: Object.fromEntries(Object.entries(groups).map(([name, pids]) =>
          [name, cpuOf(pids) - (before[name] ?? 0)])),
        peakRssMiB: Object.fromEntries(Object.entries(peak).map(([name, bytes]) => [name, bytes / 2 ** 20])),
      }
    },
  }
}

/** apiserver_request_total of a /metrics text, summed by `<VERB> <resource>[/<subresource>]`. */
export function requestCounts (metrics: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const match of metrics.matchAll(/^apiserver_request_total\{([^}]*)\} ([0-9.e+-]+)$/gm)) {
    const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]))
    const sub = labels.subresource ?? ''
    const resource = `${labels.resource ?? ''}${sub !== '' ? `/${sub}` : ''}`
    const key = `${labels.verb ?? '?'} ${resource === '' ? '(no resource)' : resource}`
    counts.set(key, (counts.get(key) ?? 0) + Number(match[2]))
  }
  return counts
}

/** `after` less `before`, keys whose count did not change left out. */
export function countsSince (before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>()
  for (const [key, count] of after) {
    const grown = count - (before.get(key) ?? 0)
    if (grown > 0) delta.set(key, grown)
  }
  return delta
}

/** When the watch first saw a pod ADDED, Running and Succeeded (ms since the epoch). */
export interface PodTimes { stage: string, added?: number, running?: number, succeeded?: number }

/** Each pod's times, by name (fields[0]); `stageOf` reads its stage from its fields, or skips it. */
export function podTimes (
  events: WatchEvent[],
  stageOf: (fields: string[]) => string | undefined
): Map<string, PodTimes> {
  const pods = new Map<string, PodTimes>()
  for (const event of events) {
    const name = event.fields[0] ?? ''
    const stage = stageOf(event.fields)
    if (name === '' || stage === undefined) continue
    const pod = pods.get(name) ?? { stage }
    if (event.type === 'ADDED') pod.added ??= event.at
    const phase = event.fields[event.fields.length - 1]
    if (phase === 'Running') pod.running ??= event.at
    if (phase === 'Succeeded') pod.succeeded ??= event.at
    pods.set(name, pod)
  }
  return pods
}

export interface Timeline {
  /** Per stage after the first: the previous stage's last pod Succeeded → this stage's first pod ADDED, s. */
  gaps: number[]
  /** The first pod ADDED → the last pod Succeeded, s. */
  makespan: number
  /** Each pod's Running → Succeeded, s: kwok's 3 s, the same stage for both systems. */
  podRuns: number[]
  /** How many pods each stage had. */
  podsPerStage: Map<string, number>
}

/** The timeline of `pods` through `stages` (in order); NaN where a stage's pods were not all seen. */
export function timeline (pods: PodTimes[], stages: string[]): Timeline {
  const of = (stage: string): PodTimes[] => pods.filter((p) => p.stage === stage)
  const first = (times: Array<number | undefined>): number => Math.min(...times.map((t) => t ?? Number.NaN))
  const last = (times: Array<number | undefined>): number => Math.max(...times.map((t) => t ?? Number.NaN))
  const gaps = stages.slice(1).map((stage, i) =>
    (first(of(stage).map((p) => p.added)) - last(of(stages[i] ?? '').map((p) => p.succeeded))) / 1000)
  return {
    gaps,
    makespan: (last(pods.map((p) => p.succeeded)) - first(pods.map((p) => p.added))) / 1000,
    podRuns: pods.map((p) => ((p.succeeded ?? Number.NaN) - (p.running ?? Number.NaN)) / 1000),
    podsPerStage: new Map(stages.map((stage) => [stage, of(stage).length])),
  }
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function middle (values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const half = sorted.length / 2
  return Number.isInteger(half) ? ((sorted[half - 1] ?? 0) + (sorted[half] ?? 0)) / 2 : (sorted[Math.floor(half)] ?? 0)
}
