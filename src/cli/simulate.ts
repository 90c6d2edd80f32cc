// `npm run simulate -- <manifest.yaml>... [--fail NAME] [--hang NAME] [--set [NAME:]PATH=VALUE --at T]
//   [--output json|mermaid|html]`
//
// Runs every jobhooks object of the manifests on the in-process Metacontroller simulator (the
// real hooks, through the real HTTP app, on a simulated clock) and prints what happened when, in
// words: Jobs created and finished, Pods made, containers injected, Pods evicted or labelled, each
// parent's phase as it moved; then a report per parent with the row `kubectl get` will show.
// JobFlows and DaemonJobs run Jobs (a DaemonJob over simulated Nodes); EphemeralJobs,
// OperationJobs and CollaSets act on the manifests' Pods, Deployments and CollaSets, brought up by
// a scripted kubelet. Manifests are applied in order, each once the previous one has settled
// (the walkthroughs apply a workload, wait for it, then the job). Nothing touches a cluster
// (`--live` previews against one, read-only: simulate-live.ts). Before anything runs, every object
// of our kinds is checked against the CRDs as the API server checks a create with strict field
// validation (simulate-validate.ts). Exit 0 when the simulation ran and settled (whatever the
// outcome: Succeeded or Failed), 1 when it could not run (a file it cannot read, an object the
// API server would refuse), 2 for bad arguments, 3 when it ran and an object ended Invalid.
import { pathToFileURL } from 'node:url'
import type { KubeObject } from '../k8s/types.js'
import { attemptJobName } from '../formats/jobflow-status.js'
import { isRecord } from '../k8s/types.js'
import { queueNameOf } from '../k8s/kueue.js'
import { isSuspended, jobFinished } from '../simulator/jobs.js'
import { Simulator } from '../simulator/simulator.js'
import { controllerFromManifest, JOBHOOKS_API_VERSION, parentKinds } from '../simulator/controllers.js'
import { ManifestError } from '../simulator/manifest.js'
import { refOf } from '../simulator/objects.js'
import {
  isLive, parseSimulateArguments, SIMULATE_USAGE, type Edit, type SimulateArguments, type Write
} from './arguments.js'
import { asNodes, daemonJobReport, defaultNodes } from './simulate-daemonjob.js'
import { cronJobFlowReport } from './simulate-cronjobflow.js'
import { PodWorld, REPLICASET_TYPE } from './simulate-pods.js'
import { formatSeconds, timelineEntries, timelineText, type TimelineEntry } from './simulate-timeline.js'
import { collaSetReport, ephemeralJobReport, flowReport, operationJobReport, timeOf } from './simulate-reports.js'
import { flowShapes } from './flow-shape.js'
import { endedInvalid, EXIT_CANNOT_RUN, EXIT_ENDED_INVALID, EXIT_USAGE, manifestRefusals } from './simulate-validate.js'
import { readManifest as loadManifest } from './validate/check.js'
import { mermaidText } from './picture-mermaid.js'
import { htmlPage } from './picture-html.js'

export type { Write }

/** The phase a settled parent is in: finished, or (CollaSet) every replica up on the latest template. */
function settled (object: KubeObject): boolean {
  const status = isRecord(object.status) ? object.status : {}
  // A schedule never settles: it plays until --until, or stays idle while suspended or invalid.
  if (object.kind === 'CronJobFlow') return status.nextScheduleTime === undefined && status.activeCount === 0
  if (object.kind === 'CollaSet') {
    const replicas = isRecord(object.spec) ? object.spec.replicas : undefined
    return typeof replicas === 'number' && status.availableReplicas === replicas &&
      status.updatedAvailableReplicas === replicas && status.replicas === replicas
  }
  const phase = object.kind === 'OperationJob' ? status.progress : status.phase
  return phase === 'Succeeded' || phase === 'Failed'
}

/** Whether a CronJobFlow has a time ahead: the simulation waits for it, however long nothing happens. */
function scheduled (parents: readonly KubeObject[]): boolean {
  return parents.some(p => p.kind === 'CronJobFlow' && isRecord(p.status) && p.status.nextScheduleTime !== undefined)
}

/** What the manifests hold: the objects of each file (--pods first), the Nodes of --nodes, the --apply files. */
interface Loaded {
  files: KubeObject[][]
  extraNodes: KubeObject[]
  /** The objects of each --apply file, and when. */
  later: Array<{ file: string, at: number, objects: KubeObject[] }>
}

export async function main (
  argv: string[],
  write: Write = line => process.stdout.write(`${line}\n`),
  writeError: Write = line => process.stderr.write(`${line}\n`)
): Promise<number> {
  // Against a real cluster, read-only: its own module (src/cli/simulate-live.ts).
  if (isLive(argv)) {
    const { liveMain } = await import('./simulate-live.js')
    return await liveMain(argv, write, writeError)
  }
  let args: SimulateArguments | 'help'
  try {
    args = parseSimulateArguments(argv)
  } catch (error) {
    writeError(`simulate: ${(error as Error).message}`)
    writeError(SIMULATE_USAGE)
    return EXIT_USAGE
  }
  if (args === 'help') {
    write(SIMULATE_USAGE)
    return 0
  }
  let loaded: Loaded
  try {
    loaded = load(args)
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    writeError(`simulate: ${error.message}`)
    return EXIT_CANNOT_RUN
  }
  if (!checked(args, loaded, writeError)) return EXIT_CANNOT_RUN
  const all = loaded.files.flat()
  const kinds = parentKinds().map(k => k.kind)
  const ours = all.filter(o => o.apiVersion === JOBHOOKS_API_VERSION && kinds.includes(o.kind))
  if (ours.length === 0) {
    const files = args.files.join(', ')
    writeError(`simulate: ${files} has no ${kinds.join(', ')} (apiVersion ${JOBHOOKS_API_VERSION}) to simulate`)
    return EXIT_CANNOT_RUN
  }
  const problem = editProblem(args.edits, all)
  if (problem !== undefined) {
    writeError(`simulate: ${problem}`)
    return EXIT_USAGE
  }
  const items = fannedOutItems(ours)
  if (items >= COALESCE_HINT_ITEMS && !args.coalesce) {
    writeError(`simulate: note: ${items} fan-out items; --coalesce plays them in seconds rather than minutes`)
  }
  return await simulate(args, loaded, ours, write, writeError)
}

/**
 * Whether the API server would take every object of the manifests (and of the --apply files);
 * when not, its refusals are written as kubectl prints them and nothing runs.
 */
function checked (args: SimulateArguments, loaded: Loaded, writeError: Write): boolean {
  const offset = loaded.files.length - args.files.length
  const { refusals, warnings } = manifestRefusals([
    ...args.files.map((file, i) => ({ file, objects: loaded.files[i + offset] ?? [] })),
    ...loaded.later.map(({ file, objects }) => ({ file, objects }))
  ])
  for (const warning of warnings) writeError(`Warning: ${warning}`)
  for (const line of refusals) writeError(line)
  if (refusals.length === 0) return true
  writeError('simulate: the API server would refuse the manifests; nothing was simulated')
  return false
}

function load (args: SimulateArguments): Loaded {
  const files = args.files.map(file => loadManifest(file))
  // The Pods of --pods come first, as a workload that is there before the manifests.
  if (args.pods !== undefined) {
    files.unshift(loadManifest(args.pods).filter(o => o.kind === 'Pod' || o.kind === 'Deployment'))
  }
  const later = args.applies.map(({ file, at }) => ({ file, at, objects: loadManifest(file) }))
  return { files, extraNodes: args.nodes !== undefined ? asNodes(loadManifest(args.nodes)) : [], later }
}

/** Runs the manifests, each file once the one before has settled, and prints what happened. */
async function simulate (
  args: SimulateArguments, loaded: Loaded, ours: KubeObject[], write: Write, writeError: Write
): Promise<number> {
  const { files } = loaded
  const all = files.flat()
  const hasDaemonJobs = ours.some(o => o.kind === 'DaemonJob')
  const given = [...asNodes(all), ...loaded.extraNodes]
  const nodes = !hasDaemonJobs ? [] : given.length > 0 ? given : defaultNodes()
  const kinds = parentKinds()
  const sim = new Simulator({
    controllers: kinds.map(kind => controllerFromManifest(kind.resource, args.hookVersion)),
    resources: [REPLICASET_TYPE],
    jobs: {
      durationSeconds: args.duration,
      outcomes: Object.fromEntries(args.fail.map(name => [name, 'fail' as const])),
      outcomeFor: job => failingAttempt(job, args.failAttempts),
      outputs: args.outputs
    },
    ...(args.kueueQuota !== undefined ? { kueue: { quota: args.kueueQuota } } : {}),
    coalesce: args.coalesce
  })
  const world = new PodWorld(sim, { fail: args.fail, hang: args.hang })
  const ignored: string[] = []
  const applyAll = (objects: KubeObject[]): void => {
    for (const object of objects) {
      if (world.add(object)) continue
      if (object.apiVersion === 'v1' && object.kind === 'Node') continue
      if (sim.resources.byKind(object.apiVersion, object.kind) !== undefined) sim.apply(object)
      else ignored.push(`${object.kind} ${object.metadata.name}`)
    }
  }
  const run = new Run(sim, world, args, loaded.later, applyAll, kinds.map(k => k.kind))
  try {
    for (const node of nodes) sim.apply(node)
    const described = describe(all, nodes.length, hasDaemonJobs && given.length === 0)
    const intro = `Simulating ${args.files.join(', ')}: ${described}` +
      `${runsText(args, ours)} (hooks ${args.hookVersion}, simulated clock)`
    try {
      for (const [i, objects] of files.entries()) {
        applyAll(objects)
        await run.untilSettled(i === files.length - 1)
      }
    } catch (error) {
      emit(args.output === 'json', write, intro, timelineEntries(sim, name => world.ownerOf(name)), [])
      writeError(`simulate: ${(error as Error).message}`)
      return EXIT_CANNOT_RUN
    }
    const entries = timelineEntries(sim, name => world.ownerOf(name))
    if (args.output === 'mermaid' || args.output === 'html') writePicture(args.output, write, intro, sim)
    else emit(args.output === 'json', write, intro, entries, reports(sim, run.kinds), run.stoppedEarly)
    notes(sim, world, ignored, args, writeError)
    const invalid = endedInvalid(run.kinds.flatMap(kind => sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind })))
    for (const line of invalid) writeError(`simulate: ${line}`)
    return invalid.length > 0 ? EXIT_ENDED_INVALID : 0
  } finally {
    await sim.close()
  }
}

/** From this many fan-out items on, a sync after each event takes minutes: the CLI says so. */
const COALESCE_HINT_ITEMS = 100

/** The items of every JobFlow's `forEach` lists (a `forEachFrom`'s are known only as it runs). */
function fannedOutItems (ours: KubeObject[]): number {
  let items = 0
  for (const object of ours) {
    const spec = object.kind === 'JobFlow' && isRecord(object.spec) ? object.spec : {}
    const flows: unknown[] = Array.isArray(spec.flows) ? spec.flows : []
    for (const flow of flows) if (isRecord(flow) && Array.isArray(flow.forEach)) items += flow.forEach.length
  }
  return items
}

/** What the run does to the Jobs and containers, for the intro: `; every Job runs 10s, failing: x`. */
function runsText (args: SimulateArguments, ours: KubeObject[]): string {
  const execs = ours.some(o =>
    o.kind === 'EphemeralJob' || (o.kind === 'OperationJob' && isRecord(o.spec) && o.spec.action === 'Exec'))
  const runs = [
    ...(ours.some(o => o.kind === 'JobFlow' || o.kind === 'DaemonJob') ? [`every Job runs ${args.duration}s`] : []),
    ...(execs ? ['ephemeral containers run 5s'] : []),
    ...(args.fail.length > 0 ? [`failing: ${args.fail.join(', ')}`] : []),
    ...Object.entries(args.failAttempts)
      .map(([flow, n]) => `failing the first ${n} attempt${n === 1 ? '' : 's'} of ${flow}`),
    ...(args.hang.length > 0 ? [`hanging: ${args.hang.join(', ')}`] : []),
    ...Object.entries(args.outputs).map(([step, value]) => `${step} outputs '${value}'`),
    ...(args.kueueQuota !== undefined ? [`Kueue admits ${plural(args.kueueQuota, 'Job')} at once`] : []),
    ...args.applies.map(({ file, at }) => `${file} applied at t=${formatSeconds(at)}`),
    ...(args.coalesce ? ['the events of one instant handled in one sync'] : [])
  ]
  return runs.length > 0 ? `; ${runs.join(', ')}` : ''
}

/**
 * What was left out of the simulation, the --fail, --hang and --output-of names nothing answered
 * to, and the queued Jobs nothing admitted for want of --kueue-quota.
 */
function notes (sim: Simulator, world: PodWorld, ignored: string[], args: SimulateArguments, writeError: Write): void {
  if (ignored.length > 0) writeError(`simulate: note: not simulated (no part in it): ${ignored.join(', ')}`)
  const jobs = sim.listJobs()
  const waiting = jobs.filter(job => queueNameOf(job) !== undefined && isSuspended(job) && !jobFinished(job))
  if (args.kueueQuota === undefined && waiting.length > 0) {
    const names = waiting.map(j => j.metadata.name).join(', ')
    writeError(`simulate: note: ${names} wait${waiting.length === 1 ? 's' : ''} for Kueue, which is not ` +
      'simulated: --kueue-quota N admits N queued Jobs at once')
  }
  const unmatched = world.unmatched().filter(name =>
    !jobs.some(j => j.metadata.name === name || j.metadata.labels?.['jobhooks.io/flow'] === name) &&
    !sim.timeline.some(e => e.object.kind === 'Job' && e.object.name === name))
  if (unmatched.length > 0) {
    writeError(`simulate: note: no Job, Pod or workload answered to ${unmatched.join(', ')} ` +
      '(--fail and --hang take flow, Job, Pod, Deployment or CollaSet names)')
  }
  const ran = (name: string): boolean => sim.timeline.some(e => e.object.kind === 'Job' && e.object.name === name)
  const noJob = Object.keys(args.outputs).filter(name =>
    !jobs.some(j => j.metadata.name === name || j.metadata.labels?.['jobhooks.io/flow'] === name) && !ran(name))
  if (noJob.length > 0) {
    writeError(`simulate: note: no Job answered to --output-of ${noJob.join(', ')} (it takes step or Job names)`)
  }
}

/** Why the edits cannot be made, if they cannot: an object they name is not in the manifests. */
function editProblem (edits: Edit[], objects: KubeObject[]): string | undefined {
  for (const edit of edits) {
    if (edit.object !== undefined && !objects.some(o => o.metadata.name === edit.object)) {
      return `--set ${edit.object}:${edit.text}: no object ${edit.object} in the manifests`
    }
  }
  return undefined
}

/** The simulation's clock loop: a second at a time, the kubelet's work between, edits when due. */
class Run {
  stoppedEarly: string | undefined
  private lastActivity = 0
  private activity = -1

  constructor (
    private readonly sim: Simulator,
    private readonly world: PodWorld,
    private readonly args: SimulateArguments,
    /** The --apply files still to apply, by time. */
    private readonly later: Loaded['later'],
    private readonly applyAll: (objects: KubeObject[]) => void,
    /** The parent kinds, in the order of their reports. */
    readonly kinds: string[]
  ) {}

  /** How long nothing may happen before the simulation counts as settled. */
  private get idleSeconds (): number {
    return Math.max(300, 2 * this.args.duration)
  }

  /** Runs until every parent has settled and (at the end) every edit is made, or nothing moves for a while. */
  async untilSettled (last: boolean): Promise<void> {
    for (;;) {
      // A parent edited just now has not been synced yet: it is not settled, whatever its status says.
      const applied = this.makeDueApplies()
      const edited = this.makeDueEdits() || applied
      const pending = (last && this.args.edits.length + this.later.length > 0) || edited
      const parents = this.parents()
      if (!pending && parents.every(settled) && this.world.podsUp()) return
      if (this.sim.seconds() >= this.args.until) {
        this.stoppedEarly = `stopped at t=${this.sim.seconds()}s (--until ${this.args.until})`
        return
      }
      const seen = this.sim.timeline.length + this.sim.effects.log.length
      if (seen !== this.activity) {
        this.activity = seen
        this.lastActivity = this.sim.seconds()
      } else if (!pending && this.sim.seconds() - this.lastActivity >= this.idleSeconds && !scheduled(parents)) {
        return
      }
      this.world.tick()
      await this.sim.advance(1, { maxSteps: 5000 })
      this.world.tick()
      await this.sim.advance(0, { maxSteps: 5000 })
    }
  }

  private parents (): KubeObject[] {
    return this.kinds.flatMap(kind => this.sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind }))
  }

  /** Applies the --apply files that are due; whether there was one. */
  private makeDueApplies (): boolean {
    let applied = false
    while (this.later.length > 0 && (this.later[0] as Loaded['later'][number]).at <= this.sim.seconds()) {
      this.applyAll((this.later.shift() as Loaded['later'][number]).objects)
      applied = true
    }
    return applied
  }

  private makeDueEdits (): boolean {
    let edited = false
    while (this.args.edits.length > 0 && (this.args.edits[0] as Edit).at <= this.sim.seconds()) {
      const edit = this.args.edits.shift() as Edit
      const target = edit.object !== undefined
        ? [...this.parents(), ...this.sim.list({ apiVersion: 'v1', kind: 'Pod' })]
            .find(o => o.metadata.name === edit.object)
        : this.parents().filter(p => p.kind !== 'CollaSet').at(-1) ?? this.parents().at(-1)
      if (target === undefined) continue
      const set = (object: KubeObject): void => {
        setPath(object, edit)
      }
      this.sim.edit(refOf(target), set, `set ${edit.text}`)
      edited = true
    }
    return edited
  }
}

/**
 * Makes an edit as kubectl edit would: a missing object on the way is made, and a list's item is
 * named by its index (spec.flows[1], as kubectl patch's /spec/flows/1), or the edit fails.
 */
function setPath (object: Record<string, unknown>, edit: Edit): void {
  const { path } = edit
  let value = edit.value
  // Labels and annotations are strings, as kubectl writes them (rerun=1 is "1", not 1).
  const labelOrAnnotation = path.length === 3 && path[0] === 'metadata' &&
    (path[1] === 'labels' || path[1] === 'annotations')
  if (labelOrAnnotation && value !== null) value = String(value)
  // A list is read by its indexes as keys: flows['1'] is flows[1].
  let at: Record<string, unknown> | unknown[] = object
  for (const [i, key] of path.entries()) {
    if (Array.isArray(at) && !(/^\d+$/.test(key) && Number(key) < at.length)) {
      const list = path.slice(0, i).join('.')
      const items = `${at.length} item${at.length === 1 ? '' : 's'}`
      throw new Error(`--set ${edit.text}: ${list} is a list of ${items}; name one by its index: ${list}[0]`)
    }
    const holder = at as Record<string, unknown>
    if (i === path.length - 1) holder[key] = value
    else if (!isRecord(holder[key]) && !Array.isArray(holder[key])) holder[key] = {}
    at = holder[key] as Record<string, unknown> | unknown[]
  }
}

interface Report {
  kind: string
  name: string
  namespace: string
  phase: string
  spec: unknown
  status: unknown
  lines: string[]
}

/** Every parent's report, in the order of `kinds`. */
function reports (sim: Simulator, kinds: string[]): Report[] {
  const time = timeOf(sim)
  return kinds.flatMap(kind => sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind }).map(object => {
    const lines = kind === 'JobFlow'
      ? flowReport(sim, object)
      : kind === 'DaemonJob'
        ? daemonJobReport(sim, object, sim.list({ apiVersion: 'v1', kind: 'Node' }), time)
        : kind === 'EphemeralJob'
          ? ephemeralJobReport(sim, object)
          : kind === 'OperationJob'
            ? operationJobReport(sim, object)
            : kind === 'CronJobFlow' ? cronJobFlowReport(sim, object) : collaSetReport(sim, object)
    const status = isRecord(object.status) ? object.status : {}
    return {
      kind,
      name: object.metadata.name,
      namespace: object.metadata.namespace ?? 'default',
      phase: String(status.phase ?? status.progress ?? ''),
      spec: object.spec,
      status: object.status,
      lines
    }
  }))
}

function emit (
  json: boolean, write: Write, intro: string, entries: TimelineEntry[], parents: Report[], stoppedEarly?: string
): void {
  if (json) {
    const objects = parents.map(({ lines, ...rest }) => rest)
    write(JSON.stringify({
      summary: intro, timeline: entries, objects, ...(stoppedEarly !== undefined ? { stoppedEarly } : {})
    }, null, 2))
    return
  }
  write(intro)
  write('')
  for (const line of timelineText(entries)) write(line)
  if (stoppedEarly !== undefined) write(stoppedEarly)
  for (const report of parents) {
    write('')
    for (const line of report.lines) write(line)
  }
}

/** The JobFlows as pictures: a Mermaid flowchart, or one self-contained HTML page. */
function writePicture (output: 'mermaid' | 'html', write: Write, intro: string, sim: Simulator): void {
  const flows = flowShapes(sim)
  write(output === 'mermaid' ? mermaidText(flows) : htmlPage(intro, flows, sim.seconds()))
}

/** "1 CollaSet, 1 OperationJob, 2 Pods, 1 DaemonJob over 4 Nodes (the default set)". */
function describe (objects: KubeObject[], nodes: number, defaultSet: boolean): string {
  const counts = new Map<string, number>()
  for (const o of objects) if (o.kind !== 'Node') counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1)
  const over = ` over ${plural(nodes, 'Node')}${defaultSet ? ' (the default set)' : ''}`
  return [...counts].map(([kind, n]) => `${plural(n, kind)}${kind === 'DaemonJob' ? over : ''}`).join(', ')
}

function plural (n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Not a top-level await: the single-file plugin bundles this module as CommonJS.
  void main(process.argv.slice(2)).then(code => { process.exitCode = code })
}

/**
 * `--fail flow:N`: a Job of that flow fails when it is one of the flow's first N attempts, named as
 * the JobFlow names them (src/controllers/jobflow/attempts.ts).
 */
function failingAttempt (job: KubeObject, failAttempts: Record<string, number>): 'fail' | undefined {
  const flow = job.metadata.labels?.['jobhooks.io/flow']
  const jobflow = job.metadata.labels?.['jobhooks.io/jobflow']
  const failing = flow === undefined ? undefined : failAttempts[flow]
  if (failing === undefined || flow === undefined || jobflow === undefined) return undefined
  for (let attempt = 1; attempt <= failing; attempt++) {
    if (attemptJobName(jobflow, flow, attempt) === job.metadata.name) return 'fail'
  }
  return undefined
}
