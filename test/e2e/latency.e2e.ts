// What a DAG adds to the time Kubernetes takes anyway: a chain of 15 steps, timed from watches of
// the API server. Ours is the time from a step's Job reaching its verdict (SuccessCriteriaMet or
// Complete) to the next step's Job being ADDED: Metacontroller's watch, its queue, our hook and
// the create. The Job controller's own reaction in the same run, a Job ADDED to its Pod ADDED,
// is the yardstick. Reported as figures (docs/performance.md), never asserted as times.
import t from 'tap'
import { apply } from './cluster.js'
import { jobFlowExample, startScenarios, waitForStatusOf, watchObjects, type WatchEvent } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)
const STEPS = 15
const JOB_NAME = '.metadata.labels.batch\\.kubernetes\\.io/job-name'
const TRUE_CONDITIONS = '.status.conditions[?(@.status=="True")].type'

/** A chain step-1 → step-2 → … → step-15 of the example's short Jobs. */
function chain (): any {
  return jobFlowExample(cluster, spec => {
    const template = spec.flows[0].jobTemplate
    spec.flows = Array.from({ length: STEPS }, (_, i) => ({
      name: `step-${i + 1}`,
      ...(i > 0 ? { dependencies: [`step-${i}`] } : {}),
      jobTemplate: structuredClone(template)
    }))
  })
}

/** The sum of a Prometheus metric's samples whose labels match `labels`, from a /metrics text. */
function sampleSum (text: string, metric: string, labels: string): number {
  const pattern = new RegExp(`^${metric}\\{[^}]*${labels}[^}]*\\} ([0-9.e+-]+)$`, 'gm')
  return [...text.matchAll(pattern)].reduce((total, m) => total + Number(m[1]), 0)
}

/** Counts and total seconds so far: our JobFlow sync hook, and Metacontroller's JobFlow work queue. */
interface Totals { hookCalls: number, hookSeconds: number, queued: number, queueSeconds: number, workSeconds: number }

async function totals (): Promise<Totals | undefined> {
  if (cluster.hooksUrl === undefined || cluster.metacontrollerMetricsUrl === undefined) return undefined
  const ours = await (await fetch(`${cluster.hooksUrl}/metrics`)).text()
  const theirs = await (await fetch(cluster.metacontrollerMetricsUrl)).text()
  const hook = 'kind="jobflow",hook="sync"'
  const queue = 'name="CompositeController-jobflow[^"]*"'
  return {
    hookCalls: sampleSum(ours, 'jobhooks_hook_duration_seconds_count', hook),
    hookSeconds: sampleSum(ours, 'jobhooks_hook_duration_seconds_sum', hook),
    queued: sampleSum(theirs, 'workqueue_queue_duration_seconds_count', queue),
    queueSeconds: sampleSum(theirs, 'workqueue_queue_duration_seconds_sum', queue),
    workSeconds: sampleSum(theirs, 'workqueue_work_duration_seconds_sum', queue)
  }
}

/** Where a sync's time goes, per sync: in Metacontroller's queue, in its work, in our hook. */
function whereTimeGoes (before: Totals, after: Totals): Record<string, number> {
  const ms = (seconds: number, count: number): number => Math.round((seconds / Math.max(1, count)) * 1e4) / 10
  const syncs = after.queued - before.queued
  return {
    syncsPerStep: Math.round((syncs / STEPS) * 10) / 10,
    queueMeanMs: ms(after.queueSeconds - before.queueSeconds, syncs),
    workMeanMs: ms(after.workSeconds - before.workSeconds, syncs),
    hookMeanMs: ms(after.hookSeconds - before.hookSeconds, after.hookCalls - before.hookCalls)
  }
}

/** The first time each name (fields[0]) was seen passing `test`. */
function firstSeen (events: WatchEvent[], test: (event: WatchEvent) => boolean): Map<string, number> {
  const seen = new Map<string, number>()
  for (const event of events) {
    const name = event.fields[0] ?? ''
    if (name !== '' && !seen.has(name) && test(event)) seen.set(name, event.at)
  }
  return seen
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  const at = (i: number): number => sorted[i] as number
  return sorted.length % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2
}

t.test('a chain of 15 steps: from one step\'s verdict to the next step\'s Job, against the Job controller', async t => {
  const ns = await namespace('latency')
  const flow = chain()
  const name = flow.metadata.name as string
  // A watch starts on its first event: the first Job and Pod of the flow, 3 s before anything finishes.
  const jobs = watchObjects(cluster, ['jobs', '-n', ns], ['.metadata.name', TRUE_CONDITIONS])
  const pods = watchObjects(cluster, ['pods', '-n', ns], [JOB_NAME])
  const before = await totals()
  await apply(cluster.kubectl, JSON.stringify(flow), ns)
  await Promise.all([jobs.started, pods.started])
  await waitForStatusOf(getJson, 'jobflow', ns, name, 'Succeeded', s => s.phase === 'Succeeded', 300_000)
  const jobEvents = await jobs.stop()
  const podEvents = await pods.stop()
  const after = await totals()

  const added = firstSeen(jobEvents, e => e.type === 'ADDED')
  const verdict = firstSeen(jobEvents, e => /\b(SuccessCriteriaMet|Complete)\b/.test(e.fields[1] ?? ''))
  const podAdded = firstSeen(podEvents, e => e.type === 'ADDED')
  const jobName = (i: number): string => `${name}-step-${i}`
  const ours: number[] = []
  const jobController: number[] = []
  for (let i = 1; i <= STEPS; i++) {
    const created = added.get(jobName(i))
    const pod = podAdded.get(jobName(i))
    t.ok(created !== undefined && pod !== undefined, `step-${i}: its Job and Pod were watched`)
    if (created !== undefined && pod !== undefined) jobController.push(pod - created)
    const next = added.get(jobName(i + 1))
    const done = verdict.get(jobName(i))
    if (i < STEPS && next !== undefined && done !== undefined) ours.push(next - done)
  }
  t.equal(ours.length, STEPS - 1, 'every step but the last was followed by the next one\'s Job')
  t.ok(ours.every(ms => ms >= 0), 'no step started before its dependency\'s verdict')
  const figure = {
    oursMedianMs: median(ours),
    jobControllerMedianMs: median(jobController),
    ratio: Math.round((median(ours) / Math.max(1, median(jobController))) * 100) / 100,
    // Where our part goes: how often Metacontroller called the hook per step, and for how long.
    ...(before !== undefined && after !== undefined ? whereTimeGoes(before, after) : {}),
    ours,
    jobController
  }
  t.comment(`latency: ${JSON.stringify(figure)}`)
})
