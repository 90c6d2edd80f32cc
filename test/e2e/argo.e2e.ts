// Argo Workflows' own examples on the real thing: some of the translations of
// test/conformance/argo/, each submitted as the simulator's harness submits it (the run's
// arguments, targets and approvals set on the JobFlow: submitted), its JobFlowTemplates applied
// before it, with pod templates that tell kwok which pods fail and what they write (forKwok), run
// by Metacontroller and the service on a real API server with kwok's pods, and held to the same
// expectations as in the simulator (the sidecar JSON, through holdToArgo of
// test/conformance/argo-examples.ts): the Jobs created, each step's and group's last phase, the
// flow's phase, no Job before its dependencies finished, the items' variables. Every run at once,
// each in a namespace of its own: about as long as the longest, dag-nested's 16 Jobs in nine waves
// (45 to 48 s of the file's 66 to 70 s on 2 cores).
import t from 'tap'
import { stringify } from 'yaml'
import { isRecord, type KubeObject } from '../../src/k8s/types.js'
import {
  argoExamples, holdToArgo, placedSteps, submitted, type Example, type Played, type Run
} from '../conformance/argo-examples.js'
import { condition } from '../helpers/conditions.js'
import { apply } from './cluster.js'
import { startScenarios, waitForStatusOf } from './scenario.js'

/**
 * One example of each kind issue 37 asks the real tier for, and the flow's controls besides:
 * - dag-enhanced-depends: `depends` expressions over a failure (c) that later steps handle, a step
 *   Omitted, and the flow Succeeded all the same;
 * - conditionals-complex: a branch skipped by its `when` and the step after it that still runs,
 *   outputs read by `when`s (both throws of its JSON);
 * - loops-param-result: `forEachFrom` over a step's output, a JSON array of numbers: eleven items;
 * - dag-nested: a JobFlowTemplate run as four groups, 16 Jobs in nine waves, and a group failing;
 * - dag-targets: `spec.targets` as each run sets it, a target omitted by a failure;
 * - conditionals: `spec.arguments` as each run sets them (`argo submit -p should-print=false`).
 * Not parameter-aggregation-dag: its items' outputs differ by item, computed by their command from
 * JOBHOOKS_ITEM; kwok runs no command, and the tier's way to give a pod its message (an annotation
 * of the step's pod template) is the same for every item of a step. Not suspend-template: one of
 * its runs ends waiting for approval, Running, where this tier waits for the flow to finish.
 */
const ON_THE_REAL_TIER = [
  'dag-enhanced-depends', 'conditionals-complex', 'loops-param-result', 'dag-nested', 'dag-targets', 'conditionals'
]

/** How kwok plays a pod (test/e2e/kwok-stages.yaml): this label fails it (exit code 1)... */
const FAIL_LABEL = { 'e2e-outcome': 'fail' }
/** ...as this one does when its value is the pod's Job's name (one group's Job of a shared template)... */
const FAIL_JOB_LABEL = 'e2e-fail-job'
/** ...and this annotation is its termination message, as the command would write it. */
const MESSAGE = 'e2e.jobhooks.io/termination-message'
/** The conditions that give a Job's verdict: from the first of them on, it has finished. */
const VERDICTS = ['SuccessCriteriaMet', 'Complete', 'FailureTarget', 'Failed']

const { cluster, namespace, getJson } = await startScenarios(t)

type PodMetadata = { labels?: Record<string, string>, annotations?: Record<string, string> }

/**
 * What to apply for `run`, in order: the example's JobFlowTemplates, then its JobFlow as the run
 * submits it (submitted), whose failing steps' pod templates carry the fail label and whose steps
 * with an output carry it as the annotation, since kwok runs no command (`exit 1`, `printf $r`).
 * Only a step's own Job can be scripted so, not one item of a fan-out; a group's step (in the
 * template every group of it shares) can only fail, by its Job's name.
 */
function forKwok (example: Example, run: Run): { templates: KubeObject[], flow: KubeObject } {
  const copy = { ...example, flow: submitted(example, run), templates: structuredClone(example.templates) }
  const placed = placedSteps(copy)
  const podMetadata = (job: string): PodMetadata => {
    const step = placed.find(p => p.name === job)?.step
    if (step?.jobTemplate?.template === undefined) throw new Error(`${example.name}: no step's own Job is ${job}`)
    step.jobTemplate.template.metadata ??= {}
    return step.jobTemplate.template.metadata
  }
  for (const [job, outcome] of Object.entries(run.outcomes ?? {})) {
    const result = typeof outcome === 'string' ? outcome : outcome.result
    if (typeof outcome !== 'string' && Object.keys(outcome).length > 1) {
      throw new Error(`${example.name}: kwok plays a Job's result only, not ${JSON.stringify(outcome)}`)
    }
    if (result === 'succeed') continue
    if (result !== 'fail') throw new Error(`${example.name}: kwok cannot play ${job} as ${result}`)
    const metadata = podMetadata(job)
    metadata.labels = { ...metadata.labels, ...failing(example, metadata, job) }
  }
  for (const [job, message] of Object.entries(run.outputs ?? {})) {
    if (job.includes('.')) throw new Error(`${example.name}: kwok gives ${job} the message of every group's step`)
    const metadata = podMetadata(job)
    metadata.annotations = { ...metadata.annotations, [MESSAGE]: message }
  }
  return { templates: copy.templates, flow: copy.flow }
}

/** The label that fails `job`: the fail label for a step of the flow, its Job's name for a group's step. */
function failing (example: Example, metadata: PodMetadata, job: string): Record<string, string> {
  if (!job.includes('.')) return FAIL_LABEL
  const name = `${example.flow.metadata.name}-${job}`
  const given = metadata.labels?.[FAIL_JOB_LABEL]
  if (given !== undefined && given !== name) throw new Error(`${example.name}: kwok fails one Job of a template step`)
  return { [FAIL_JOB_LABEL]: name }
}

/** What the API server has of the run in `ns`, as holdToArgo reads it, once `flow` finished. */
async function observed (ns: string, flow: KubeObject): Promise<Played> {
  const prefix = `${flow.metadata.name}-`
  const unprefixed = (job: string): string => job.startsWith(prefix) ? job.slice(prefix.length) : job
  // Seconds since the JobFlow was created, on the API server's clock (whole seconds, as it writes
  // times): a dependant created in the second its dependency finished passes, one created before
  // that second fails.
  const since = Date.parse(String(flow.metadata.creationTimestamp))
  const seconds = (time: unknown): number => (Date.parse(String(time)) - since) / 1000
  const jobs: KubeObject[] = (await getJson(['get', 'jobs', '-n', ns])).items
  const finished = new Map<string, number>()
  for (const job of jobs) {
    const verdicts = VERDICTS.map(type => condition(job.status, type))
      .filter(c => c?.status === 'True')
      .map(c => seconds(c?.lastTransitionTime))
    if (verdicts.length > 0) finished.set(unprefixed(job.metadata.name), Math.min(...verdicts))
  }
  const created = jobs
    .map(job => ({ job: unprefixed(job.metadata.name), seconds: seconds(job.metadata.creationTimestamp) }))
    .sort((a, b) => a.seconds - b.seconds)
  return {
    status: isRecord(flow.status) ? flow.status : {},
    created,
    finished,
    stepOf: new Map(jobs.map(job => [unprefixed(job.metadata.name), job.metadata.labels?.['jobhooks.io/flow'] ?? ''])),
    jobs: new Map(jobs.map(job => [unprefixed(job.metadata.name), job]))
  }
}

/** Applies `run` in a namespace of its own and returns what it left once the JobFlow finished. */
async function playOnCluster (example: Example, run: Run): Promise<Played & { tookSeconds: number }> {
  const ns = await namespace('argo')
  const { templates, flow } = forKwok(example, run)
  const started = Date.now()
  // The templates first: the JobFlow's first sync reads them.
  if (templates.length > 0) await apply(cluster.kubectl, templates.map(o => stringify(o)).join('---\n'), ns)
  await apply(cluster.kubectl, stringify(flow), ns)
  await waitForStatusOf(getJson, 'jobflow', ns, example.name, 'finished',
    s => ['Succeeded', 'Failed', 'Invalid'].includes(s.phase), 150_000)
  const tookSeconds = (Date.now() - started) / 1000
  // A Job created after the end would be a pod Argo does not run, a phase changed after it a
  // workflow ending twice: give either time to show, then read both.
  await new Promise(resolve => setTimeout(resolve, 3_000))
  return { ...await observed(ns, await getJson(['get', 'jobflow', example.name, '-n', ns])), tookSeconds }
}

const examples = argoExamples().filter(e => ON_THE_REAL_TIER.includes(e.name))
// Every run starts now, each test below waits for its own: together they take as long as the longest.
const runs = examples.flatMap(example => example.runs.map(run => {
  const played = playOnCluster(example, run)
  void played.catch(() => {}) // Reported by its test, which may only await it later.
  return { example, run, played }
}))

t.test('the examples chosen are translated, each with at least one run', async t => {
  t.same(examples.map(e => e.name).sort(), [...ON_THE_REAL_TIER].sort())
  for (const example of examples) t.ok(example.runs.length > 0, `${example.name}: played at least once`)
})

for (const { example, run, played } of runs) {
  t.test(`${example.name}: ${run.name}`, async t => {
    const result = await played
    t.comment(`${example.name}: finished in ${result.tookSeconds.toFixed(1)} s`)
    holdToArgo(t, example, run, result)
  })
}
