// JobFlow against Argo Workflows on one tier (issue 43): the same workloads (test/e2e/compare/
// workloads.ts) run by Metacontroller and our service, then by Argo's workflow controller
// (test/e2e/argo.ts), one after the other, each in a namespace of its own that is deleted before the
// next run starts. Per run it prints figures, never asserts them: the gaps between stages and the
// makespan from one pod watch, the controllers' CPU and peak memory from /proc, and the API
// requests from kube-apiserver's counter. Run it with `npm run bench:argo`; it is no part of
// `npm run e2e`. Skipped, with the reason, when the tier could not build Argo.
import t from 'tap'
import { stringify } from 'yaml'
import { apply } from '../cluster.js'
import { startScenarios, waitForStatusOf, watchObjects } from '../scenario.js'
import { countsSince, podTimes, requestCounts, sampleUsage, timeline } from './measure.js'
import { markdownTable, topRequests, type RunFigures } from './report.js'
import { asJobFlow, asWorkflow, chain, diamond, stageOf, type Workload } from './workloads.js'

const { cluster, namespace, getJson } = await startScenarios(t, { argo: true })
const argo = cluster.argo
const writer = argo !== undefined && 'writer' in argo ? argo.writer : undefined
const skip = writer === undefined
  ? `needs Argo's workflow controller: ${argo !== undefined && 'skipped' in argo ? argo.skipped : 'not started'}`
  : false
if (argo !== undefined && 'description' in argo) t.comment(`${cluster.metacontroller} against ${argo.description}`)

const POD_FIELDS = [
  '.metadata.name',
  '.metadata.labels.batch\\.kubernetes\\.io/job-name',
  '.metadata.annotations.workflows\\.argoproj\\.io/node-name',
  '.status.phase',
]

interface System {
  name: string
  /** The plural of its resource, as apiserver_request_total names it, and kubectl's name for it. */
  plural: string
  resource: string
  object: (workload: Workload, name: string) => Record<string, unknown>
  /** Its own processes: what runs the workload beside Kubernetes' own controllers. */
  processes: string[]
}

const SYSTEMS: System[] = [
  {
    name: 'JobFlow',
    plural: 'jobflows',
    resource: 'jobflow',
    object: asJobFlow,
    processes: ['metacontroller', 'jobhooks'],
  },
  {
    name: 'Argo',
    plural: 'workflows',
    resource: 'workflows.argoproj.io',
    object: asWorkflow,
    processes: ['workflow-controller'],
  },
]

async function apiserverRequests (): Promise<Map<string, number>> {
  const result = await cluster.kubectl(['get', '--raw', '/metrics'])
  if (result.code !== 0) throw new Error(`kube-apiserver /metrics: ${result.stderr}`)
  return requestCounts(result.stdout)
}

function pids (names: string[]): number[] {
  return names.flatMap((name) => {
    const pid = cluster.pidOf?.(name)
    if (pid === undefined) throw new Error(`the tier runs no process ${name}`)
    return [pid]
  })
}

/** Runs `workload` with `system` in a new namespace and reads its figures; deletes the namespace after. */
async function runOnce (
  system: System,
  workload: Workload,
  name: string
): Promise<RunFigures & { phase: string, message: string }> {
  const ns = await namespace(`bench-${system.plural}`)
  const before = await apiserverRequests()
  const rounds = writer?.rounds ?? 0
  const usage = sampleUsage({
    controller: pids(system.processes),
    kcm: pids(['kube-controller-manager']),
    'apiserver+etcd': pids(['kube-apiserver', 'etcd']),
  })
  const watch = watchObjects(cluster, ['pods', '-n', ns], POD_FIELDS)
  let polls = 0
  try {
    await apply(cluster.kubectl, stringify(system.object(workload, name)), ns)
    await watch.started
    const done = await waitForStatusOf(async (args) => {
      polls++
      return await getJson(args)
    }, system.resource, ns, name, 'finished', (s) => ['Succeeded', 'Failed', 'Error'].includes(s.phase), 900_000)
    const used = usage.stop()
    const requests = countsSince(before, await apiserverRequests())
    const times = podTimes(await watch.stop(), (f) => stageOf(name, f[1] ?? '', f[2] ?? ''))
    return {
      system: system.name,
      phase: String(done.status.phase),
      message: whyNot(done.status),
      timeline: timeline([...times.values()], workload.stages.map((s) => s.name)),
      usage: used,
      requests,
      tierOwn: new Map([[`GET ${system.plural}`, polls], ['LIST pods', (writer?.rounds ?? 0) - rounds]]),
    }
  } finally {
    usage.stop()
    await watch.stop().catch(() => [])
    await cluster.kubectl(['delete', 'namespace', ns, '--timeout=300s'])
  }
}

/** The messages of a status that did not succeed: its own, and its nodes' (Argo) or Jobs' (JobFlow). */
function whyNot (status: any): string {
  if (status.phase === 'Succeeded') return ''
  const parts = [...Object.values<any>(status.nodes ?? {}), ...Object.values<any>(status.jobs ?? {})]
  const messages = parts.map((p) => p?.message).filter((m) => typeof m === 'string' && m !== '')
  return [status.message, ...new Set(messages)].filter((m) => m !== undefined).slice(0, 4).join('; ')
}

/** What the tier asks of the API server with nothing to run, over `seconds`. */
async function idle (seconds: number): Promise<string> {
  const before = await apiserverRequests()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const counts = countsSince(before, await apiserverRequests())
  const all = [...counts.values()].reduce((a, b) => a + b, 0)
  return `the tier idle for ${seconds} s: ${all} requests (${topRequests(counts, 6)})`
}

const WORKLOADS: Array<[string, Workload]> = [['chain', chain(15)], ['diamond', diamond(100)]]

t.test('idle tier', { skip }, async (t) => {
  t.comment(await idle(20))
  t.pass('read the idle rate')
})

for (const [name, workload] of WORKLOADS) {
  t.test(`${workload.name}: JobFlow, then Argo`, { skip }, async (t) => {
    const runs: RunFigures[] = []
    for (const system of SYSTEMS) {
      const run = await runOnce(system, workload, name)
      t.equal(run.phase, 'Succeeded', `${system.name} ran the ${workload.name} to the end ${run.message}`)
      for (const stage of workload.stages) {
        const watched = run.timeline.podsPerStage.get(stage.name)
        t.equal(watched, stage.items ?? 1, `${system.name}: ${stage.name}'s pods watched`)
      }
      t.comment(`${system.name}: gaps s ${run.timeline.gaps.map((g) => g.toFixed(2)).join(' ')}; ` +
        `all requests: ${topRequests(run.requests, 12)}`)
      runs.push(run)
      // A moment for the control plane to settle after the namespace's deletion.
      await new Promise((resolve) => setTimeout(resolve, 5_000))
    }
    t.comment(`${workload.name}, ${new Date().toISOString().slice(0, 10)}:`)
    for (const line of markdownTable(runs)) t.comment(line)
  })
}
