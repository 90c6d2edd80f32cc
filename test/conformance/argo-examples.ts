// Argo Workflows' own examples as JobFlows (test/conformance/argo/): each YAML with its sidecar
// JSON of the runs to play and what Argo does with them, and the one check both tiers hold a run
// to: argo.test.ts plays each run in the simulator, test/e2e/argo.e2e.ts some of them on a real
// control plane, and both hand what they saw to holdToArgo.
//
// Argo's words map onto a step's record as docs/jobflow.md, "Coming from Argo" says: Succeeded
// and Failed are themselves; Skipped (its `when` was false) is Skipped; Omitted (its `depends` was
// false) is Skipped too, with the expression in its message. A group (a step with
// `flowTemplateRef`) is Argo's nested DAG node: its record, which has no Job, ends as that node,
// and its steps, `<group>.<step>`, as the node's children. Besides, no step's Job may start before
// every step its dependencies or its `depends` names has finished (a group: every step of it), as
// in Argo.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { parseAllDocuments } from 'yaml'
import type { Container } from 'kubernetes-types/core/v1.js'
import type { KubeObject } from '../../src/k8s/types.js'
import { isRecord } from '../../src/k8s/types.js'
import { containerEnvironment } from '../../src/k8s/expansion.js'
import type { JobResult, JobScript } from '../../src/simulator/jobs.js'

export const ARGO_DIR = join(import.meta.dirname, 'argo')

/** A step's end as Argo names it. */
export type ArgoPhase = 'Succeeded' | 'Failed' | 'Skipped' | 'Omitted' | 'Pending'

export interface Run {
  name: string
  /** Job outcomes by Job name without the `<jobflow>-` prefix; unlisted Jobs succeed. */
  outcomes?: Record<string, JobScript | JobResult>
  /** Termination messages by Job name without the prefix (the simulator's `--output-of`). */
  outputs?: Record<string, string>
  /** Argument values by name, over the flow's `spec.arguments`, as `argo submit -p name=value`. */
  arguments?: Record<string, string>
  /**
   * Approval steps a person approves (`argo resume`): the JobFlow is submitted with them in
   * jobhooks.io/approve, so each goes on as soon as it waits.
   */
  approve?: string[]
  /** The flow's `spec.targets` instead of its own, as `argo submit -p target="b e"` sets a DAG's target. */
  targets?: string[]
  expect: {
    /** The Jobs created, without the prefix: Argo's pods (an item's, a retry's included). */
    jobs: string[]
    /**
     * Every record of status.jobs by name (a step, `<step>[<i>]` for an item, a group and its
     * steps `<group>.<step>`, the group's record having no Job): its last phase.
     */
    steps: Record<string, ArgoPhase>
    /** The JobFlow's phase at the end: Argo's workflow phase. */
    phase: string
    /** Variables some Jobs' first containers must carry: `{{item}}` and `{{item.key}}`. */
    env?: Record<string, Record<string, string>>
    /** Words the message of some records must hold, by record name: Argo's node messages. */
    messages?: Record<string, string>
    /** A condition of the JobFlow at the end, True: its type, its reason, words of its message. */
    condition?: { type: string, reason?: string, message?: string }
    /** The most Jobs unfinished (created, not yet finished) at any one time: a parallelism at work. */
    mostAtOnce?: number
  }
}

export interface Example {
  name: string
  yaml: string
  /** The file's JobFlow, the run's flow. */
  flow: KubeObject
  /** The file's JobFlowTemplates, the ones its groups run (Argo's nested DAG templates): applied first. */
  templates: KubeObject[]
  /** The Argo files it comes from, paths in argoproj/argo-workflows. */
  argo: string[]
  runs: Run[]
}

/** Every translation, by file name. */
export function argoExamples (): Example[] {
  return readdirSync(ARGO_DIR).filter(f => f.endsWith('.yaml')).sort().map(file => {
    const name = file.replace(/\.yaml$/, '')
    const yaml = readFileSync(join(ARGO_DIR, file), 'utf8')
    const sidecar = JSON.parse(readFileSync(join(ARGO_DIR, `${name}.json`), 'utf8')) as { argo: string[], runs: Run[] }
    const objects = parseAllDocuments(yaml).map(d => d.toJS() as KubeObject | null).filter(o => o !== null)
    const [flow, ...others] = objects.filter(o => o.kind !== 'JobFlowTemplate')
    if (flow === undefined || others.length > 0) throw new Error(`${file}: not one object besides JobFlowTemplates`)
    return { name, yaml, flow, templates: objects.filter(o => o.kind === 'JobFlowTemplate'), ...sidecar }
  })
}

/** The flow as the run submits it: the example's, with the run's `spec.arguments` values and `spec.targets`. */
export function submitted (example: Example, run: Run): KubeObject {
  const flow = structuredClone(example.flow)
  if (run.approve !== undefined) {
    flow.metadata.annotations = { ...flow.metadata.annotations, 'jobhooks.io/approve': run.approve.join(',') }
  }
  const spec = flow.spec as { arguments?: Array<{ name: string, value: string }>, targets?: string[] }
  if (run.targets !== undefined) spec.targets = run.targets
  if (run.arguments === undefined) return flow
  const given = new Map(Object.entries(run.arguments))
  spec.arguments = (spec.arguments ?? []).map(arg => ({ ...arg, value: given.get(arg.name) ?? arg.value }))
  const unknown = [...given.keys()].filter(name => !spec.arguments?.some(arg => arg.name === name))
  if (unknown.length > 0) throw new Error(`${example.name}: ${run.name}: no spec.arguments ${unknown.join(', ')}`)
  return flow
}

export interface FlowSpec {
  name: string
  dependencies?: string[]
  depends?: string
  forEachFrom?: string
  /** A group: the JobFlowTemplate whose steps it runs as `<step>.<inner>`. */
  flowTemplateRef?: { name: string }
  jobTemplate?: { template?: { metadata?: { labels?: Record<string, string>, annotations?: Record<string, string> } } }
}

export function flowsOf (flow: KubeObject): FlowSpec[] {
  return (flow.spec as { flows: FlowSpec[] }).flows
}

/** The exit steps (`spec.onExit`, Argo's exit handler): none start before every Job of the DAG finished. */
function exitStepsOf (flow: KubeObject): FlowSpec[] {
  return (flow.spec as { onExit?: FlowSpec[] }).onExit ?? []
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

/** A step as the flow runs it: its full name (`<group>.<step>` inside a group) and what it waits for. */
export interface PlacedStep {
  name: string
  step: FlowSpec
  /** Full names of the steps whose every Job must have finished before one of its own starts. */
  after: string[]
}

/** Templates run templates at most this deep, as the engine allows. */
const DEEPEST = 5

/**
 * Every step of the flow by its full name: `spec.flows`, each group's steps after their group
 * (`<group>.<inner>`, waiting for what the group waits for and for their own dependencies inside
 * it), and the exit steps, which wait for every step of the DAG.
 */
export function placedSteps (example: Example): PlacedStep[] {
  const place = (steps: FlowSpec[], prefix: string, before: string[], depth: number): PlacedStep[] =>
    steps.flatMap(step => {
      const name = `${prefix}${step.name}`
      const after = [...before, ...waitsFor(step).map(dependency => `${prefix}${dependency}`)]
      const ref = step.flowTemplateRef
      if (ref === undefined) return [{ name, step, after }]
      const template = example.templates.find(t => t.metadata.name === ref.name)
      if (template === undefined) throw new Error(`${example.name}: ${name} runs ${ref.name}, not in the file`)
      if (depth >= DEEPEST) throw new Error(`${example.name}: ${name} nests templates past ${DEEPEST}`)
      return [{ name, step, after }, ...place(flowsOf(template), `${name}.`, after, depth + 1)]
    })
  const dag = place(flowsOf(example.flow), '', [], 0)
  const exits = exitStepsOf(example.flow)
    .map(step => ({ name: step.name, step, after: [...dag.map(p => p.name), ...waitsFor(step)] }))
  return [...dag, ...exits]
}

/** Whether a Job of step `of` belongs to `name`: the step itself, or a step of its group. */
const partOf = (of: string, name: string): boolean => of === name || of.startsWith(`${name}.`)

/** What a tier saw of one run, Job names without the `<jobflow>-` prefix. */
export interface Played {
  /** The JobFlow's status at the end. */
  status: Record<string, unknown>
  /** Created Jobs, in creation order, with when (seconds on the tier's clock). */
  created: Array<{ job: string, seconds: number }>
  /** When each Job finished (succeeded or failed), on the same clock. */
  finished: Map<string, number>
  /** The step of each Job (its `jobhooks.io/flow` label). */
  stepOf: Map<string, string>
  jobs: Map<string, KubeObject>
}

/**
 * The most Jobs unfinished at any one time: created and not yet finished, one finished in the
 * second another is created counting as finished first (the finish is what lets the next start).
 */
function mostAtOnce (played: Played): number {
  const changes = [
    ...played.created.map(({ seconds }) => ({ seconds, by: 1 })),
    ...[...played.finished.values()].map(seconds => ({ seconds, by: -1 }))
  ].sort((a, b) => a.seconds - b.seconds || a.by - b.by)
  let unfinished = 0
  let most = 0
  for (const { by } of changes) {
    unfinished += by
    most = Math.max(most, unfinished)
  }
  return most
}

/** The last record of each name in status.jobs (a retried step's last attempt). */
function lastRecords (status: Record<string, unknown>): Map<string, Record<string, unknown>> {
  const records = Array.isArray(status.jobs) ? status.jobs.filter(isRecord) : []
  return new Map(records.map(r => [String(r.name), r]))
}

/**
 * The flow's end as the workflow's: its phase, the condition that says why, and the most Jobs
 * it had unfinished at once, where the run expects them.
 */
function holdFlowEnd (t: Test, run: Run, played: Played): void {
  const { expect } = run
  const conditions = Array.isArray(played.status.conditions) ? played.status.conditions : []
  t.equal(played.status.phase, expect.phase, `the JobFlow ends ${expect.phase}, as the workflow`, { conditions })
  if (expect.condition !== undefined) {
    const { type, ...said } = expect.condition
    const found: unknown = conditions.find(c => isRecord(c) && c.type === type)
    t.match(found, { status: 'True', ...said }, `its ${type} condition says what the workflow's message says`)
  }
  if (expect.mostAtOnce !== undefined) {
    t.equal(mostAtOnce(played), expect.mostAtOnce, `the most Jobs unfinished at once: ${expect.mostAtOnce}`)
  }
}

/** No Job created before every Job of each step its step waits for (a group's: its steps') finished. */
function holdOrder (t: Test, placed: PlacedStep[], played: Played): void {
  for (const { job, seconds } of played.created) {
    const step = placed.find(p => p.name === played.stepOf.get(job))
    for (const dependency of step?.after ?? []) {
      const late = [...played.stepOf]
        .filter(([other, of]) => partOf(of, dependency) && !((played.finished.get(other) ?? Infinity) <= seconds))
        .map(([other]) => other)
      t.same(late, [], `${job} is created (t=${seconds}s) once every Job of ${dependency} has finished`)
    }
  }
}

/**
 * Holds what a tier saw of `run` to the sidecar's expectations: the Jobs created are Argo's
 * pods, each step ends as in Argo (and, where the run says, its message), the flow as the
 * workflow (and its condition, the most Jobs at once), no Job before its dependencies finished,
 * and the items' variables in their containers.
 */
export function holdToArgo (t: Test, example: Example, run: Run, played: Played): void {
  const { expect } = run
  const placed = placedSteps(example)

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
    const depends = placed.find(p => p.name === name)?.step.depends ?? ''
    t.match(records.get(name)?.message, depends, `${name}: Omitted, its message names its depends "${depends}"`)
  }
  for (const [name, words] of Object.entries(expect.messages ?? {})) {
    t.match(records.get(name)?.message, words, `${name}: its message says "${words}"`)
  }

  holdFlowEnd(t, run, played)

  holdOrder(t, placed, played)

  for (const [job, variables] of Object.entries(expect.env ?? {})) {
    const spec = played.jobs.get(job)?.spec as { template?: { spec?: { containers?: Container[] } } } | undefined
    const container = spec?.template?.spec?.containers?.[0]
    const environment = container === undefined ? new Map<string, string>() : containerEnvironment(container)
    const seen = Object.fromEntries(Object.keys(variables).map(key => [key, environment.get(key)]))
    t.same(seen, variables, `${job}: its container's environment`)
  }
}
