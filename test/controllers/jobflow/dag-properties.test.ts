// Issue 37, item 4: nothing waits forever. fast-check generates JobFlow DAGs of 1–12 steps, each
// with `dependencies` or a `depends` expression over earlier steps (so acyclic), maybe a `when`,
// a fan-out (`forEach` of mixed JSON, or `forEachFrom` a dependency's JSON array or a fan-out
// dependency's items' outputs), a `retry`, under FailFast or Continue, with every Job's outcome
// scripted per attempt; each is played on the in-process Metacontroller and must:
//
// 0. be Invalid when read, creating no Job, if a step would wait on what cannot come: a
//    `forEachFrom` over a plain step whose `depends` holds only when that step did not succeed
//    (helpers/argo-dag.ts itemlessReaders, an oracle of its own); every other case must
// 1. end, Succeeded or Failed, with every record settled when it does (none Pending, Queued or
//    Running, none "added after the JobFlow finished", every step recorded), within bounds fixed
//    from the spec before it runs (`bounds`: Jobs, simulated seconds, simulator steps), and with
//    at most SYNCS_PER_CHANGE hook calls per clock event (3; measured: 2 at most);
// 2. create every Job once (a retry is a Job of its own name), each named by a record;
// 3. end in the phase Argo's assessDAGPhase gives, by an oracle written from the final records
//    alone (helpers/argo-dag.ts, not branches.ts);
// 4. while it runs, have every Pending record say what it waits for, naming only dependencies
//    that had not finished.
//
// 150 runs from a fixed seed, about 8 s; FUZZ_RUNS and FUZZ_SEED widen them (test/helpers/fuzz.ts,
// as `npm run fuzz` does for the app's properties). A failure prints its smallest case as a spec
// and the script of each Job it created.
import t from 'tap'
import fc from 'fast-check'
import type { KubeObject } from '../../../src/k8s/types.js'
import { isRecord } from '../../../src/k8s/types.js'
import { Simulator } from '../../../src/simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../../../src/simulator/controllers.js'
import type { JobScript } from '../../../src/simulator/jobs.js'
import { fuzzSettings } from '../../helpers/fuzz.js'
import {
  itemlessReaders, lastRecords, nodePhase, oraclePhase, SETTLED, type Rec
} from '../../helpers/argo-dag.js'

const FLOW = 'dag'
const NAMES = 'abcdefghijkl'.split('')
/** The longest a generated Job runs, in simulated seconds. */
const MAX_SECONDS = 20
/** The most items a `forEachFrom` step gets: every generated array and fan-out has at most 4. */
const MAX_ITEMS = 4
const containers = [{ name: 'main', image: 'busybox:1.36', command: ['sh', '-c', 'work'] }]

// ---- what is generated: genes, read into a spec below -------------------------------------------

/** A `depends` expression before its names are chosen: refs pick among the step's candidates. */
type Expr = { ref: number, result: number } | { not: Expr } | { and: Expr[] } | { or: Expr[] }

const { expr } = fc.letrec<{ expr: Expr }>(tie => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ ref: fc.nat(), result: fc.nat() }),
    fc.record({ not: tie('expr') }),
    fc.record({ and: fc.array(tie('expr'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('expr'), { minLength: 2, maxLength: 3 }) })
  )
}))

/** An item of `forEach` or of a generated array: numbers, strings, maps. */
const item = fc.oneof(
  fc.integer({ min: 0, max: 3 }),
  fc.constantFrom('x', 'y', '2'),
  fc.record({ k: fc.integer({ min: 0, max: 2 }) })
)

/** A succeeded Job's termination message: mostly a JSON array, else none, text or other JSON. */
const output = fc.oneof(
  { arbitrary: fc.array(item, { maxLength: MAX_ITEMS }).map(items => JSON.stringify(items)), weight: 6 },
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: fc.constantFrom('a b', '{"k":1}', '[1,null]', '7'), weight: 1 }
)

/** One attempt of one Job: fails (one in four) or succeeds, after 1–20 s. */
const attempt = fc.record({
  fail: fc.integer({ min: 0, max: 3 }).map(n => n === 0),
  seconds: fc.integer({ min: 1, max: MAX_SECONDS })
})

const stepGene = fc.record({
  mode: fc.constantFrom('root', 'dependencies', 'dependencies', 'depends', 'depends'),
  /** Bit j: earlier step j is a candidate dependency. */
  candidates: fc.integer({ min: 0, max: (1 << NAMES.length) - 1 }),
  depends: expr,
  when: fc.option(fc.record({
    terms: fc.array(fc.record({ kind: fc.nat(), pick: fc.nat(), phase: fc.nat(), negate: fc.boolean() }),
      { minLength: 1, maxLength: 2 }),
    and: fc.boolean()
  }), { freq: 3 }),
  fan: fc.constantFrom('none', 'none', 'none', 'forEach', 'forEachFrom'),
  items: fc.array(item, { minLength: 1, maxLength: MAX_ITEMS }),
  from: fc.nat(),
  parallelism: fc.option(fc.integer({ min: 1, max: 3 })),
  retry: fc.option(fc.record({
    limit: fc.integer({ min: 0, max: 2 }),
    backoffSeconds: fc.integer({ min: 0, max: 3 })
  })),
  output,
  itemOutputs: fc.array(fc.option(item.map(i => JSON.stringify(i))), { minLength: MAX_ITEMS, maxLength: MAX_ITEMS }),
  /** [item][attempt]; a step without items plays item 0. */
  attempts: fc.array(fc.array(attempt, { minLength: 3, maxLength: 3 }), { minLength: MAX_ITEMS, maxLength: MAX_ITEMS })
})

type StepGene = typeof stepGene extends fc.Arbitrary<infer G> ? G : never

const caseGene = fc.record({
  steps: fc.array(stepGene, { minLength: 1, maxLength: NAMES.length }),
  failurePolicy: fc.constantFrom('FailFast', 'Continue')
})

// ---- the genes read as a JobFlow and the Jobs' scripts ------------------------------------------

interface Step {
  name: string
  /** The steps it depends on: its `dependencies`, or the names its `depends` reads. */
  deps: string[]
  flow: Record<string, unknown>
  /** Items at most: 1 for a plain step. */
  items: number
  fanOut: boolean
  retry?: { limit: number, backoffSeconds: number }
}

interface Case {
  steps: Step[]
  spec: KubeObject
  outcomes: Record<string, JobScript>
  /** The steps that make the spec Invalid when read (helpers/argo-dag.ts): then nothing runs. */
  invalid: string[]
}

/** A `depends` over `candidates`, each step it names added to `named`. */
function renderDepends (node: Expr, candidates: readonly Step[], named: Set<string>): string {
  if ('ref' in node) {
    const step = candidates[node.ref % candidates.length] as Step
    named.add(step.name)
    const results = ['', '.Succeeded', '.Failed', '.Skipped', '.Omitted',
      ...(step.fanOut ? ['.AnySucceeded', '.AllFailed'] : [])]
    return step.name + (results[node.result % results.length] as string)
  }
  const inner = (n: Expr): string => {
    const text = renderDepends(n, candidates, named)
    return 'ref' in n || 'not' in n ? text : `(${text})`
  }
  if ('not' in node) return `!${inner(node.not)}`
  return ('and' in node ? node.and : node.or).map(inner).join('and' in node ? ' && ' : ' || ')
}

const ITEM_TERMS = ['item == 2', "item == 'x'", 'item.k == 1', 'item != 0']
const PHASES = ['Succeeded', 'Failed', 'Skipped']

function renderWhen (
  gene: NonNullable<StepGene['when']>,
  deps: readonly string[],
  fanOut: boolean
): string | undefined {
  const terms = gene.terms.flatMap(term => {
    if (fanOut && (term.kind % 2 === 0 || deps.length === 0)) return [ITEM_TERMS[(term.kind >> 1) % ITEM_TERMS.length]]
    if (deps.length === 0) return []
    const dep = deps[term.pick % deps.length] as string
    return [`flows.${dep}.phase ${term.negate ? '!=' : '=='} '${PHASES[term.phase % PHASES.length] as string}'`]
  })
  return terms.length === 0 ? undefined : terms.join(gene.and ? ' && ' : ' || ')
}

/** A Job's name: `<flow>-<part>` for its first attempt, `…-<n>` for attempt n. */
function jobName (part: string, attempt: number): string {
  return `${FLOW}-${part}${attempt > 1 ? `-${attempt}` : ''}`
}

function readCase (gene: { steps: StepGene[], failurePolicy: string }): Case {
  const steps: Step[] = []
  const outcomes: Record<string, JobScript> = {}
  gene.steps.forEach((g, i) => {
    const name = NAMES[i] as string
    const candidates = steps.filter((_, j) => (g.candidates & (1 << j)) !== 0)
    const flow: Record<string, unknown> = { name, jobTemplate: { template: { spec: { containers } } } }
    let deps: string[] = []
    if (g.mode === 'dependencies' && candidates.length > 0) {
      deps = candidates.map(s => s.name)
      flow.dependencies = deps
    } else if (g.mode === 'depends' && candidates.length > 0) {
      const named = new Set<string>()
      let source = renderDepends(g.depends, candidates, named)
      if (source.length > 400) {
        source = (candidates[0] as Step).name
        named.clear()
        named.add(source)
      }
      flow.depends = source
      deps = [...named]
    }
    const fan = g.fan === 'forEachFrom' && deps.length === 0 ? 'forEach' : g.fan
    let items = 1
    if (fan === 'forEach') {
      flow.forEach = g.items
      items = g.items.length
    } else if (fan === 'forEachFrom') {
      flow.forEachFrom = deps[g.from % deps.length]
      items = MAX_ITEMS
    }
    const fanOut = fan !== 'none'
    if (fanOut && g.parallelism !== null) flow.parallelism = g.parallelism
    const when = g.when === null ? undefined : renderWhen(g.when, deps, fanOut)
    if (when !== undefined) flow.when = when
    const retry = g.retry ?? undefined
    if (retry !== undefined) flow.retry = retry
    for (let index = 0; index < (fanOut ? MAX_ITEMS : 1); index++) {
      const part = fanOut ? `${name}-item-${index}` : name
      const out = fanOut ? g.itemOutputs[index] ?? undefined : g.output
      g.attempts[index]?.forEach((a, k) => {
        outcomes[jobName(part, k + 1)] = a.fail
          ? { result: 'fail', afterSeconds: a.seconds }
          : { result: 'succeed', afterSeconds: a.seconds, ...(out !== undefined ? { output: out } : {}) }
      })
    }
    steps.push({ name, deps, flow, items, fanOut, ...(retry !== undefined ? { retry } : {}) })
  })
  const spec: KubeObject = {
    apiVersion: JOBHOOKS_API_VERSION,
    kind: 'JobFlow',
    metadata: { name: FLOW, namespace: 'default' },
    spec: { failurePolicy: gene.failurePolicy, flows: steps.map(s => s.flow) }
  }
  return { steps, spec, outcomes, invalid: itemlessReaders(steps) }
}

// ---- the bounds ----------------------------------------------------------------------------------

/**
 * Hook calls at most per change of the world (a clock event: a Job started, its verdict, its
 * final condition, a resync), and for the apply: the sync that reacts to it, the one its own
 * writes (a Job created, the status) wake, and the one that finds nothing left to do.
 */
const SYNCS_PER_CHANGE = 3

/**
 * What a run may take at most, fixed from the case before it runs. Jobs: each step's items (1, its
 * forEach, or MAX_ITEMS) times its attempts. Simulated seconds: along the longest path of steps,
 * each step after its last dependency, taking its scripted attempts and backoffs (its items one
 * after another when its parallelism is lower than their number: while an item waits for a slot,
 * another runs), and 2 s more a step for a forEachFrom's wait (a resync every 2 s); a step starts
 * in the sync that sees its last dependency finish, so nothing else leaves the clock idle. Clock
 * events: three per Job (started, its verdict, its final condition) and a resync a second at most
 * (the shortest wake a sync asks for is 1 s, and a parent has one resync pending at a time).
 * Simulator steps: those events and SYNCS_PER_CHANGE syncs each.
 */
function bounds (c: Case): { jobs: number, seconds: number, steps: number } {
  let jobs = 0
  const finish = new Map<string, number>()
  for (const step of c.steps) {
    const attempts = (step.retry?.limit ?? 0) + 1
    const itemSeconds = Array.from({ length: step.items }, (_, index) => {
      let seconds = 0
      for (let a = 1; a <= attempts; a++) {
        const job = jobName(step.fanOut ? `${step.name}-item-${index}` : step.name, a)
        seconds += (c.outcomes[job]?.afterSeconds ?? MAX_SECONDS) + (a > 1 ? backoffBefore(step, a) : 0)
      }
      return seconds
    })
    const parallelism = typeof step.flow.parallelism === 'number' ? step.flow.parallelism : step.items
    const own = parallelism < step.items ? itemSeconds.reduce((a, b) => a + b, 0) : Math.max(...itemSeconds)
    const start = Math.max(0, ...step.deps.map(d => finish.get(d) ?? 0))
    finish.set(step.name, start + own + 2)
    jobs += step.items * attempts
  }
  const seconds = Math.max(...finish.values())
  const events = 3 * jobs + seconds + 1
  return { jobs, seconds, steps: events + SYNCS_PER_CHANGE * (events + 1) }
}

/** The backoff before attempt `attempt` (from 2) of a step: doubling from backoffSeconds. */
function backoffBefore (step: Step, attempt: number): number {
  return (step.retry?.backoffSeconds ?? 0) * 2 ** (attempt - 2)
}

// ---- the run -------------------------------------------------------------------------------------

/** Whether a step has finished in this status. */
function finished (step: Step, last: ReadonlyMap<string, Rec>): boolean {
  const phase = nodePhase(step, last)
  return phase !== undefined && SETTLED.has(phase)
}

/**
 * Why a Pending record's message does not say what it waits for, or undefined when it does. A
 * dependency it names must not have finished before: `before` is the status written last time (a
 * step decided in the very sync that writes the record may lag that one write; the write wakes the
 * next sync, which reads it).
 */
function unexplained (
  record: Rec,
  byName: ReadonlyMap<string, Step>,
  before: ReadonlyMap<string, Rec>
): string | undefined {
  const step = byName.get(record.name.replace(/\[[0-9]+\]$/, '')) as Step
  const message = record.message ?? ''
  if (/^creating the Job( \(retry [0-9]+ of [0-9]+\))?$/.test(message)) return undefined
  if (/^retry [0-9]+ of [0-9]+ starts at \S+, after the backoff$/.test(message)) return undefined
  if (message === `waiting: at most ${String(step.flow.parallelism)} items of ${step.name} at once`) return undefined
  if (message.startsWith('waiting: the when expressions decided in this sync used its budget')) return undefined
  const waiting = /^waiting for (?:the outputs? of )?(.+)$/.exec(message)
  if (waiting === null) return 'it does not say what it waits for'
  const named = (waiting[1] as string).split(', ').map(n => n.replace(/ \([0-9]+ of [0-9]+ items\)$/, ''))
  const strangers = named.filter(n => !step.deps.includes(n))
  if (strangers.length > 0) return `it waits for ${strangers.join(', ')}, not a dependency`
  if (message.startsWith('waiting for the output')) return undefined
  const done = named.filter(n => finished(byName.get(n) as Step, before))
  return done.length > 0 ? `it waits for ${done.join(', ')}, which had finished` : undefined
}

interface Played {
  phase: unknown
  records: Rec[]
  created: string[]
  /** Hook calls (syncs), and the clock events between them. */
  syncs: number
  events: number
  seconds: number
  problems: string[]
  /** The message of condition Valid. */
  valid: string
}

type Bounds = ReturnType<typeof bounds>

async function play (c: Case, limit: Bounds): Promise<Played> {
  const sim = new Simulator({
    controllers: [jobflowController('v2')],
    // Metacontroller folds the events of one instant into one sync; the hook is called in process.
    coalesce: true,
    transport: 'direct',
    checkReads: false,
    jobs: { outcomes: c.outcomes }
  })
  const problems: string[] = []
  const byName = new Map(c.steps.map(s => [s.name, s]))
  const statusOf = (): { phase?: unknown, jobs?: Rec[], conditions?: Array<{ type: string, message: string }> } => {
    const status = sim.store.view(JOBHOOKS_API_VERSION, 'JobFlow')[0]?.status
    return isRecord(status) ? status : {}
  }
  let version: unknown
  let before = new Map<string, Rec>()
  let ended = false
  // Every status as it was written: each Pending record says what it waits for, and the first
  // that ends the flow leaves no record open.
  const sample = (): void => {
    const stored = sim.store.view(JOBHOOKS_API_VERSION, 'JobFlow')[0]
    if (stored === undefined || stored.metadata.resourceVersion === version) return
    version = stored.metadata.resourceVersion
    const status = statusOf()
    const last = lastRecords(status.jobs ?? [])
    for (const record of last.values()) {
      if (record.phase !== 'Pending') continue
      const why = unexplained(record, byName, before)
      if (why !== undefined) problems.push(`t=${sim.seconds()}s ${record.name} "${record.message ?? ''}": ${why}`)
    }
    if (!ended && (status.phase === 'Succeeded' || status.phase === 'Failed')) {
      ended = true
      const open = [...last.values()].filter(r => !SETTLED.has(r.phase))
      if (open.length > 0) {
        problems.push(`t=${sim.seconds()}s it ended ${String(status.phase)} with records open: ` +
          open.map(r => `${r.name} ${r.phase} "${r.message ?? ''}"`).join('; '))
      }
    }
    before = last
  }
  let summary = { steps: Infinity, reconciles: Infinity }
  try {
    sim.apply(c.spec)
    summary = await sim.runUntil(() => {
      sample()
      return sim.isQuiet() || sim.seconds() > limit.seconds
    }, { maxSteps: limit.steps })
    if (!sim.isQuiet()) problems.push(`it did not end within ${limit.seconds} simulated seconds`)
  } catch (error) {
    const lines = (error as Error).message.split('\n').slice(0, 8).join('\n')
    problems.push(`it did not end within ${limit.steps} simulator steps: ${lines}`)
  } finally {
    await sim.close()
  }
  const status = statusOf()
  return {
    phase: status.phase,
    valid: status.conditions?.find(condition => condition.type === 'Valid')?.message ?? '',
    records: status.jobs ?? [],
    created: sim.timeline.filter(e => e.type === 'created' && e.object.kind === 'Job').map(e => e.object.name),
    syncs: summary.reconciles,
    events: summary.steps - summary.reconciles,
    seconds: sim.seconds(),
    problems: problems.slice(0, 5)
  }
}

/** What breaks the four properties in one run. */
function broken (c: Case, played: Played, limit: Bounds): string[] {
  const problems = [...played.problems]
  // 0. A spec that would wait on something that cannot come is Invalid when read: no Job at all.
  if (c.invalid.length > 0) {
    const phase = String(played.phase)
    if (phase !== 'Invalid') problems.push(`it ended ${phase}, not Invalid for ${c.invalid.join(', ')}`)
    const unnamed = c.invalid.filter(name => !played.valid.includes(`flow "${name}": depends`))
    if (unnamed.length > 0) problems.push(`condition Valid does not name ${unnamed.join(', ')}: ${played.valid}`)
    if (played.created.length > 0) problems.push(`Jobs created: ${played.created.join(', ')}`)
    return problems
  }
  // 1. It ends, within the bounds, every record settled.
  if (played.phase !== 'Succeeded' && played.phase !== 'Failed') problems.push(`it ended ${String(played.phase)}`)
  const open = played.records.filter(r => !SETTLED.has(r.phase)).map(r => `${r.name} ${r.phase} "${r.message ?? ''}"`)
  if (open.length > 0) problems.push(`records left open: ${open.join('; ')}`)
  const late = played.records.filter(r => r.message === 'added after the JobFlow finished').map(r => r.name)
  if (late.length > 0) problems.push(`the spec never changed, yet: ${late.join(', ')} "added after it finished"`)
  const last = lastRecords(played.records)
  const silent = c.steps.filter(s => nodePhase(s, last) === undefined).map(s => s.name)
  if (silent.length > 0) problems.push(`steps with no record: ${silent.join(', ')}`)
  if (played.syncs > SYNCS_PER_CHANGE * (played.events + 1)) {
    problems.push(`${played.syncs} hook calls for ${played.events} clock events, over ${SYNCS_PER_CHANGE} each`)
  }
  if (played.seconds > limit.seconds) problems.push(`${played.seconds} s, over the bound of ${limit.seconds} s`)
  // 2. Every Job created once, and recorded.
  const twice = played.created.filter((name, i) => played.created.indexOf(name) !== i)
  if (twice.length > 0) problems.push(`Jobs created twice: ${[...new Set(twice)].join(', ')}`)
  if (played.created.length > limit.jobs) {
    problems.push(`${played.created.length} Jobs, over the bound of ${limit.jobs}`)
  }
  const recorded = new Set(played.records.map(r => r.jobName))
  const unrecorded = played.created.filter(name => !recorded.has(name))
  if (unrecorded.length > 0) problems.push(`Jobs no record names: ${unrecorded.join(', ')}`)
  // 3. Argo's phase.
  const expected = oraclePhase(c.steps, played.records)
  if (problems.length === 0 && played.phase !== expected) {
    problems.push(`it ended ${String(played.phase)}; Argo's rule says ${expected}`)
  }
  return problems
}

/** The case as a person reproduces it: the spec, and what each Job that was created did. */
function describe (c: Case, played: Played): string {
  const scripts = played.created.map(name => {
    const script = c.outcomes[name] as JobScript
    const output = script.output !== undefined ? ` ${JSON.stringify(script.output)}` : ''
    return `${name}: ${script.result}${output} after ${String(script.afterSeconds)} s`
  })
  const spec = c.spec.spec as object
  return [
    `spec: ${JSON.stringify({ ...spec, flows: c.steps.map(s => ({ ...s.flow, jobTemplate: undefined })) })}`,
    'Jobs (unlisted ones succeed): ' + (scripts.length > 0 ? '' : 'none'),
    ...scripts.map(line => `  ${line}`),
    `ended ${String(played.phase)} after ${played.syncs} hook calls, ${played.events} clock events, ` +
      `at t=${played.seconds}s; records:`,
    ...played.records.map(r => `  ${r.name} ${r.jobName} ${r.phase} ${r.message ?? ''}`)
  ].join('\n')
}

t.test('any DAG ends, creates each Job once, ends as Argo says, and says what it waits for', async t => {
  let runs = 0
  let invalid = 0
  let busiest = 0
  let longest = 0
  const property = fc.asyncProperty(caseGene, async gene => {
    const c = readCase(gene)
    const limit = bounds(c)
    const played = await play(c, limit)
    runs++
    if (c.invalid.length > 0) invalid++
    busiest = Math.max(busiest, played.syncs / (played.events + 1))
    longest = Math.max(longest, played.seconds / limit.seconds)
    const problems = broken(c, played, limit)
    if (problems.length > 0) throw new Error(`${problems.join('\n')}\n${describe(c, played)}`)
  })
  // A case that never ends runs to its bound: should shrinking it take long, the smallest case found
  // by then is reported, before tap's own timeout.
  await t.resolves(fc.assert(property, { ...fuzzSettings(150), interruptAfterTimeLimit: 80_000 }))
  t.comment(`${runs} runs (with any shrinking), ${invalid} Invalid when read; ` +
    `at most ${busiest.toFixed(2)} hook calls per clock event, ` +
    `${Math.round(longest * 100)}% of the bound of simulated seconds`)
})
