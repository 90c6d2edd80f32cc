// The table test/e2e/compare/argo.bench.ts prints per workload: one row per system, in markdown, to
// paste into docs/performance.md as printed. Figures only; nothing here judges them.
import { middle, type Timeline, type Usage } from './measure.js'

/** One system's run of one workload. */
export interface RunFigures {
  system: string
  timeline: Timeline
  /** Groups `controller` (the system's own processes), `kcm` and `apiserver+etcd`. */
  usage: Usage
  /** The growth of apiserver_request_total over the run, by verb and resource. */
  requests: Map<string, number>
  /**
   * Requests the tier made for itself during the run, which either system would see as well, by
   * the same keys: the task-result writer's LISTs of pods (it lists every 500 ms whichever system
   * runs), the harness's polls of the flow's or Workflow's status.
   */
  tierOwn: Map<string, number>
}

/** A request for a path of no resource (`GET /api`, `GET /openapi/v3`, `GET /metrics`). */
const nonResource = (key: string): boolean => / \//.test(key)

/**
 * The run's requests less those the tier made for itself, and less every non-resource read: each
 * kubectl of the harness and of the task-result writer may read discovery again, and the tier runs
 * Metacontroller with --discovery-interval=1s; which client read it, the counter does not say.
 */
export function netRequests (run: RunFigures): Map<string, number> {
  const net = new Map<string, number>()
  for (const [key, count] of run.requests) {
    if (nonResource(key)) continue
    const left = count - (run.tierOwn.get(key) ?? 0)
    if (left > 0) net.set(key, left)
  }
  return net
}

const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0)
const fixed = (value: number, digits: number): string => (Number.isNaN(value) ? '?' : value.toFixed(digits))

/** The `most` largest counts, `VERB resource count`, largest first. */
export function topRequests (counts: Map<string, number>, most: number): string {
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, most).map(([key, count]) => `${key} ${count}`).join(', ')
}

/** A markdown table of `runs` of one workload. */
export function markdownTable (runs: RunFigures[]): string[] {
  const header = [
    'system', 'makespan s', 'step gap median s', 'step gap max s', 'pod run s (median)', 'controller CPU s',
    'controller peak RSS MiB', 'kube-controller-manager CPU s', 'apiserver+etcd CPU s', 'API requests (all / net)',
    'non-resource reads', 'top requests (net)',
  ]
  const rows = runs.map((run) => {
    const net = netRequests(run)
    return [
      run.system,
      fixed(run.timeline.makespan, 1),
      fixed(middle(run.timeline.gaps), 2),
      fixed(Math.max(...run.timeline.gaps), 2),
      fixed(middle(run.timeline.podRuns), 2),
      fixed(run.usage.cpu.controller ?? Number.NaN, 1),
      fixed(run.usage.peakRssMiB.controller ?? Number.NaN, 0),
      fixed(run.usage.cpu.kcm ?? Number.NaN, 1),
      fixed(run.usage.cpu['apiserver+etcd'] ?? Number.NaN, 1),
      `${total(run.requests)} / ${total(net)}`,
      String(total(new Map([...run.requests].filter(([key]) => nonResource(key))))),
      topRequests(net, 5),
    ]
  })
  return [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`)
}
