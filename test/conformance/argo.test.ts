// Argo Workflows' own examples, kept: test/conformance/argo/ holds translations of them into
// JobFlows, one YAML a person can `kubectl apply` per example, each beside a JSON file of the same
// name that says which Argo files it comes from, how the test plays it (which Jobs fail, what
// outputs they write) and what Argo does with it: which steps get a pod (here a Job), what each
// step ends as, and what the workflow ends as. Each is played to the end on the in-process
// Metacontroller and held to Argo's outcome, whatever the engine does today: an example whose
// semantics JobFlow lacks fails here until it has them.
//
// Argo's words map onto a step's record as docs/jobflow.md, "Coming from Argo" says: Succeeded
// and Failed are themselves; Skipped (its `when` was false) is Skipped; Omitted (its `depends` was
// false) is Skipped too, with the expression in its message. Besides, no step's Job may start
// before every step its dependencies or its `depends` names has finished, as in Argo.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import type { Container } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { containerEnvironment } from '../../src/k8s/expansion.js'
import { Simulator } from '../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../src/simulator/controllers.js'
import type { JobResult, JobScript } from '../../src/simulator/jobs.js'
import type { ObjectRef } from '../../src/simulator/objects.js'
import { crdErrors } from '../helpers/manifests.js'

const DIR = join(import.meta.dirname, 'argo')

/** Argo's examples that issue 37 names; each must be here. */
const REQUIRED = [
  'dag-diamond', 'dag-multiroot', 'dag-continue-on-fail', 'dag-enhanced-depends', 'dag-disable-failfast',
  'conditionals', 'conditionals-complex', 'loops-param-result', 'loops-maps', 'parameter-aggregation-dag',
  'retry-with-steps'
]

/** A step's end as Argo names it. */
type ArgoPhase = 'Succeeded' | 'Failed' | 'Skipped' | 'Omitted'

interface Run {
  name: string
  /** Job outcomes by Job name without the `<jobflow>-` prefix; unlisted Jobs succeed. */
  outcomes?: Record<string, JobScript | JobResult>
  /** Termination messages by Job name without the prefix (the simulator's `--output-of`). */
  outputs?: Record<string, string>
  expect: {
    /** The Jobs created, without the prefix: Argo's pods (an item's, a retry's included). */
    jobs: string[]
    /** Every record of status.jobs by name (a step, or `<step>[<i>]` for an item): its last phase. */
    steps: Record<string, ArgoPhase>
    /** The JobFlow's phase at the end: Argo's workflow phase. */
    phase: string
    /** Variables some Jobs' first containers must carry: `{{item}}` and `{{item.key}}`. */
    env?: Record<string, Record<string, string>>
  }
}

interface Example {
  name: string
  yaml: string
  flow: KubeObject
  /** The Argo files it comes from, paths in argoproj/argo-workflows. */
  argo: string[]
  runs: Run[]
}

function examples (): Example[] {
  return readdirSync(DIR).filter(f => f.endsWith('.yaml')).sort().map(file => {
    const name = file.replace(/\.yaml$/, '')
    const yaml = readFileSync(join(DIR, file), 'utf8')
    const sidecar = JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as { argo: string[], runs: Run[] }
    return { name, yaml, flow: parse(yaml) as KubeObject, ...sidecar }
  })
}

interface FlowSpec { name: string, dependencies?: string[], depends?: string, forEachFrom?: string }

function flowsOf (flow: KubeObject): FlowSpec[] {
  return (flow.spec as { flows: FlowSpec[] }).flows
}

/** A task result of Argo's `depends` grammar, after the task's name. */
const RESULT = /\.(Succeeded|Failed|Errored|Skipped|Omitted|Daemoned|AnySucceeded|AllFailed)$/

/** The step names an Argo `depends` expression reads: `a`, `a.Failed`, `(a || b.Skipped) && !c`. */
function namesIn (depends: string): string[] {
  return depends
    .replace(/[()!]/g, ' ')
    .split(/&&|\|\|/)
    .map(term => term.trim().replace(RESULT, ''))
    .filter(name => name !== '')
}

/** The steps a step waits for: its dependencies, the names of its depends, its forEachFrom. */
function waitsFor (step: FlowSpec): string[] {
  const names = [...step.dependencies ?? [], ...namesIn(step.depends ?? '')]
  if (step.forEachFrom !== undefined) names.push(step.forEachFrom)
  return [...new Set(names)]
}

function prefixed<T> (prefix: string, map: Record<string, T> | undefined): Record<string, T> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([key, value]) => [`${prefix}${key}`, value]))
}

interface Played {
  status: Record<string, unknown>
  /** Created Jobs, without the prefix, in creation order, with when. */
  created: Array<{ job: string, seconds: number }>
  /** When each Job finished (succeeded or failed), by Job name without the prefix. */
  finished: Map<string, number>
  /** The step of each Job (its `jobhooks.io/flow` label), by Job name without the prefix. */
  stepOf: Map<string, string>
  jobs: Map<string, KubeObject>
}

async function play (t: { teardown: (fn: () => unknown) => void }, example: Example, run: Run): Promise<Played> {
  const name = example.flow.metadata.name
  const prefix = `${name}-`
  const sim = new Simulator({
    controllers: [jobflowController('v2')],
    jobs: { outcomes: prefixed(prefix, run.outcomes), outputs: prefixed(prefix, run.outputs) }
  })
  t.teardown(async () => await sim.close())
  sim.apply(structuredClone(example.flow))
  await sim.runUntilQuiet()
  const ref: ObjectRef = { apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow', namespace: 'default', name }
  const status = sim.get(ref)?.status
  const unprefixed = (job: string): string => job.startsWith(prefix) ? job.slice(prefix.length) : job
  const jobEvents = sim.timeline.filter(e => e.object.kind === 'Job')
  const finished = new Map<string, number>()
  for (const e of jobEvents) {
    if (e.type === 'job-succeeded' || e.type === 'job-failed') finished.set(unprefixed(e.object.name), e.seconds)
  }
  const jobs = new Map(sim.listJobs().map(job => [unprefixed(job.metadata.name), job]))
  return {
    status: isRecord(status) ? status : {},
    created: jobEvents
      .filter(e => e.type === 'created')
      .map(e => ({ job: unprefixed(e.object.name), seconds: e.seconds })),
    finished,
    stepOf: new Map([...jobs].map(([job, object]) => [job, object.metadata.labels?.['jobhooks.io/flow'] ?? job])),
    jobs
  }
}

/** The last record of each name in status.jobs (a retried step's last attempt). */
function lastRecords (status: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const records = Array.isArray(status.jobs) ? status.jobs.filter(isRecord) : []
  return new Map(records.map(r => [String(r.name), r]))
}

const all = examples()

t.test('the translations: at least twelve, those issue 37 names among them, each citing its Argo files', async t => {
  t.ok(all.length >= 12, `${all.length} examples`)
  const names = all.map(e => e.name)
  for (const name of REQUIRED) t.ok(names.includes(name), `${name} is translated`)
  for (const example of all) {
    const header = example.yaml.slice(0, example.yaml.search(/^apiVersion:/m))
    t.match(header, /^# Argo Workflows' examples\//, `${example.name}: its header opens with the example it comes from`)
    for (const file of example.argo) t.ok(header.includes(file), `${example.name}: its header cites ${file}`)
    t.match(header, new RegExp(`kubectl apply -f test/conformance/argo/${example.name}\\.yaml`),
      `${example.name}: its header says how to apply it`)
    t.equal(example.flow.kind, 'JobFlow', `${example.name} is a JobFlow`)
    t.equal(example.flow.metadata.name, example.name, `${example.name}: named as its file`)
    t.ok(example.runs.length > 0, `${example.name}: played at least once`)
  }
})

t.test('each translation passes the JobFlow CRD\'s schema and CEL rules, as `kubectl apply` checks them', async t => {
  for (const example of all) t.same(crdErrors(example.flow), [], example.name)
})

for (const example of all) {
  for (const run of example.runs) {
    t.test(`${example.name}: ${run.name}`, async t => {
      const played = await play(t, example, run)
      const { expect } = run
      const flows = flowsOf(example.flow)

      t.same(
        played.created.map(c => c.job).sort(),
        [...expect.jobs].sort(),
        'the Jobs created are the pods Argo runs'
      )

      const records = lastRecords(played.status)
      const phases = Object.fromEntries([...records].map(([name, r]) => [name, r.phase]))
      const wanted = Object.fromEntries(Object.entries(expect.steps)
        .map(([name, phase]) => [name, phase === 'Omitted' ? 'Skipped' : phase]))
      t.same(phases, wanted, 'each step ends as in Argo (Omitted: Skipped)')
      for (const [name, phase] of Object.entries(expect.steps)) {
        if (phase !== 'Omitted') continue
        const depends = flows.find(f => f.name === name)?.depends ?? ''
        t.match(records.get(name)?.message, depends, `${name}: Omitted, its message names its depends "${depends}"`)
      }

      const conditions = Array.isArray(played.status.conditions) ? played.status.conditions : []
      t.equal(played.status.phase, expect.phase, `the JobFlow ends ${expect.phase}, as the workflow`, { conditions })

      for (const { job, seconds } of played.created) {
        const step = flows.find(f => f.name === played.stepOf.get(job))
        if (step === undefined) continue
        for (const dependency of waitsFor(step)) {
          const late = [...played.stepOf]
            .filter(([other, of]) => of === dependency && !((played.finished.get(other) ?? Infinity) <= seconds))
            .map(([other]) => other)
          t.same(late, [], `${job} is created (t=${seconds}s) once every Job of ${dependency} has finished`)
        }
      }

      for (const [job, variables] of Object.entries(expect.env ?? {})) {
        const spec = played.jobs.get(job)?.spec as { template?: { spec?: { containers?: Container[] } } } | undefined
        const container = spec?.template?.spec?.containers?.[0]
        const environment = container === undefined ? new Map<string, string>() : containerEnvironment(container)
        const seen = Object.fromEntries(Object.keys(variables).map(key => [key, environment.get(key)]))
        t.same(seen, variables, `${job}: its container's environment`)
      }
    })
  }
}
