// `npm run simulate -- manifests/examples/jobflow.yaml [--fail job2] [--duration 10] [--nodes nodes.yaml]`
//
// Runs the JobFlows and DaemonJobs of a manifest on the in-process Metacontroller simulator (the
// real hooks, through the real HTTP app, on a simulated clock) and prints what happened when:
// which Jobs were created, started, succeeded or failed, and how each one's phase moved; for a
// DaemonJob, which Nodes got a Job and why the others did not. Nothing touches a cluster. Exit 0
// when the simulation ran (whatever the outcome), 1 when it could not (no such file, nothing to
// simulate, a simulation that never settles), 2 for bad arguments.
import { pathToFileURL } from 'node:url'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { Simulator, type HookVersion, type TimelineEvent } from '../simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import { daemonjobController } from '../simulator/daemonjob.js'
import { asNodes, daemonJobReport, defaultNodes } from './simulate-daemonjob.js'
import { loadManifest, ManifestError } from '../simulator/manifest.js'
import { namespacedName, type ObjectRef } from '../simulator/objects.js'

export type Write = (line: string) => void

const USAGE = `usage: npm run simulate -- <manifest.yaml> [--fail <flow or Job name>]... [--duration <seconds>] [--nodes <nodes.yaml>] [--hook-version v1|v2]

  --fail NAME        the Job of flow NAME (or the Job named NAME) fails; repeat or separate with commas
  --duration SECONDS how long every Job runs before it finishes (default 10)
  --nodes FILE       the Node objects DaemonJobs run over (with any in the manifest); without any:
                     node1, node2, node3, and node4 cordoned
  --hook-version V   the hook version Metacontroller uses: v2 (default, as deployed) or v1`

interface Arguments {
  file: string
  fail: string[]
  duration: number
  hookVersion: HookVersion
  nodes?: string
}

class UsageError extends Error {}

function parseArguments (argv: string[]): Arguments | 'help' {
  const files: string[] = []
  const fail: string[] = []
  let duration = 10
  let hookVersion: HookVersion = 'v2'
  let nodes: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = (): string => {
      const next = inline ?? argv[++i]
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a value`)
      return next
    }
    switch (flag) {
      case '-h': case '--help': return 'help'
      case '--fail': fail.push(...value().split(',').map(s => s.trim()).filter(s => s !== '')); break
      case '--duration': {
        const raw = value()
        duration = Number(raw)
        if (!Number.isFinite(duration) || duration <= 0) throw new UsageError(`--duration must be a positive number of seconds, not ${JSON.stringify(raw)}`)
        break
      }
      case '--nodes': nodes = value(); break
      case '--hook-version': {
        const raw = value()
        if (raw !== 'v1' && raw !== 'v2') throw new UsageError(`--hook-version must be v1 or v2, not ${JSON.stringify(raw)}`)
        hookVersion = raw
        break
      }
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`)
        files.push(arg)
    }
  }
  if (files.length !== 1) throw new UsageError(files.length === 0 ? 'name the manifest to simulate' : `one manifest at a time, not ${files.length}`)
  return { file: files[0] as string, fail, duration, hookVersion, ...(nodes !== undefined ? { nodes } : {}) }
}

export async function main (argv: string[], write: Write = line => process.stdout.write(`${line}\n`), writeError: Write = line => process.stderr.write(`${line}\n`)): Promise<number> {
  // Against a real cluster, read-only: its own module (src/cli/simulate-live.ts).
  if (argv.some(arg => arg === '--live' || arg === '--kubeconfig' || arg.startsWith('--kubeconfig='))) {
    const { liveMain } = await import('./simulate-live.js')
    return await liveMain(argv, write, writeError)
  }
  let args: Arguments | 'help'
  try {
    args = parseArguments(argv)
  } catch (error) {
    writeError(`simulate: ${(error as Error).message}`)
    writeError(USAGE)
    return 2
  }
  if (args === 'help') {
    write(USAGE)
    return 0
  }

  let objects: KubeObject[]
  let extraNodes: KubeObject[] = []
  try {
    objects = loadManifest(args.file)
    if (args.nodes !== undefined) extraNodes = asNodes(loadManifest(args.nodes))
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    writeError(`simulate: ${error.message}`)
    return 1
  }
  const ours = objects.filter(o => o.apiVersion === JOBHOOKS_API_VERSION && SIMULATED.has(o.kind))
  const flows = ours.filter(o => o.kind === 'JobFlow')
  const daemonJobs = ours.filter(o => o.kind === 'DaemonJob')
  if (flows.length === 0 && daemonJobs.length === 0) {
    writeError(`simulate: ${args.file} has no JobFlow or DaemonJob (apiVersion ${JOBHOOKS_API_VERSION}) to simulate`)
    return 1
  }
  const given = [...asNodes(objects), ...extraNodes]
  const nodes = daemonJobs.length === 0 ? [] : given.length > 0 ? given : defaultNodes()

  const sim = new Simulator({
    controllers: [jobflowController(args.hookVersion), daemonjobController(args.hookVersion)],
    jobs: { durationSeconds: args.duration, outcomes: Object.fromEntries(args.fail.map(name => [name, 'fail' as const])) }
  })
  try {
    for (const node of nodes) sim.apply(node)
    for (const object of ours) sim.apply(object)
    const templates = ours.filter(o => o.kind === 'JobTemplate').length
    const what = [
      ...(flows.length > 0 ? [plural(flows.length, 'JobFlow')] : []),
      ...(templates > 0 ? [plural(templates, 'JobTemplate')] : []),
      ...(daemonJobs.length > 0 ? [`${plural(daemonJobs.length, 'DaemonJob')} over ${plural(nodes.length, 'Node')}${given.length === 0 ? ' (the default set)' : ''}`] : [])
    ]
    write(`Simulating ${args.file}: ${what.join(', ')}; ` +
      `every Job runs ${args.duration}s${args.fail.length > 0 ? `, failing: ${args.fail.join(', ')}` : ''} (hooks ${args.hookVersion}, simulated clock)`)
    write('')
    try {
      await sim.runUntilQuiet({ maxSteps: 5000 })
    } catch (error) {
      for (const line of timelineLines(sim)) write(line)
      writeError(`simulate: ${(error as Error).message}`)
      return 1
    }
    for (const line of timelineLines(sim)) write(line)
    for (const flow of sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'JobFlow' })) {
      write('')
      for (const line of flowReport(sim, flow)) write(line)
    }
    for (const daemonJob of sim.list({ apiVersion: JOBHOOKS_API_VERSION, kind: 'DaemonJob' })) {
      write('')
      for (const line of daemonJobReport(sim, daemonJob, sim.list({ apiVersion: 'v1', kind: 'Node' }), timeOf(sim))) write(line)
    }
    const jobs = sim.listJobs()
    const unmatched = args.fail.filter(name => !jobs.some(j => j.metadata.name === name || j.metadata.labels?.['jobhooks.io/flow'] === name) && !sim.timeline.some(e => e.object.kind === 'Job' && e.object.name === name))
    if (unmatched.length > 0) writeError(`simulate: note: no Job ran for --fail ${unmatched.join(', ')} (names are flow names or Job names)`)
    return 0
  } finally {
    await sim.close()
  }
}

/** One line per simulated instant and JobFlow: its phase after that instant and what happened. */
export function timelineLines (sim: Simulator): string[] {
  interface Line { seconds: number, subject: string, phase: string, actions: Map<string, string[]>, notes: string[] }
  const lines: Line[] = []
  const phases = new Map<string, string>()
  for (const event of sim.timeline) {
    // Nodes are the stage, not the play: the report says what became of each.
    if (event.object.kind === 'Node') continue
    const subject = subjectOf(event)
    let line = lines.find(l => l.seconds === event.seconds && l.subject === subject)
    if (line === undefined) {
      line = { seconds: event.seconds, subject, phase: phases.get(subject) ?? '', actions: new Map(), notes: [] }
      lines.push(line)
    }
    if (event.type === 'phase' && event.phase !== undefined) {
      phases.set(subject, event.phase)
      line.phase = event.phase
      if (event.message !== undefined) line.notes.push(`invalid: ${event.message}`)
      continue
    }
    const [verb, what] = action(event)
    const list = line.actions.get(verb) ?? []
    list.push(what)
    line.actions.set(verb, list)
  }
  const width = Math.max(0, ...lines.map(l => l.subject.length))
  const phaseWidth = Math.max(0, ...lines.map(l => l.phase.length))
  return lines.map(l => {
    const actions = [...l.actions].map(([verb, names]) => verb.replace('%s', names.join(', ')).replace('%n', names.length === 1 ? '' : 's'))
    return [`t=${formatSeconds(l.seconds)}`.padEnd(8), l.subject.padEnd(width), l.phase.padEnd(phaseWidth), [...actions, ...l.notes].join('; ')].join('  ').trimEnd()
  })
}

/** Whose line an event goes on: a child's parent, or the object itself. */
function subjectOf (event: TimelineEvent): string {
  if (event.owner !== undefined) return event.owner.name
  if (SIMULATED.has(event.object.kind)) return event.object.name
  return `${event.object.kind} ${event.object.name}`
}

/** A verb template (`%s`: the names, `%n`: a plural s) and the name this event adds to it. */
function action (event: TimelineEvent): [string, string] {
  const name = event.object.name
  const kind = (ref: ObjectRef): string => ref.kind
  switch (event.type) {
    case 'created': return [`created ${kind(event.object)}%n %s`, name]
    case 'job-started': return ['started %s', name]
    case 'job-succeeded': return ['succeeded %s', name]
    case 'job-failed': return ['failed %s', name]
    case 'deleted': {
      const by = event.cause === 'user' ? 'by hand' : event.cause === 'garbage-collector' ? 'garbage-collected' : event.cause === 'finalized' ? 'finalized' : 'by the controller'
      return event.owner === undefined && event.object.kind !== 'Job' ? ['deleted', ''] : [`deleted ${kind(event.object)}%n %s (${by})`, name]
    }
    case 'terminating': return event.owner === undefined ? ['terminating (finalizers run)', ''] : [`terminating ${kind(event.object)}%n %s`, name]
    case 'applied': return event.owner === undefined ? ['applied', ''] : ['applied %s', name]
    case 'edited': return ['edited', '']
    case 'adopted': return ['adopted %s', name]
    case 'released': return ['released %s', name]
    case 'sync-error': return [`sync error (nothing changed): ${event.message ?? ''}`, '']
    case 'phase': return ['', '']
    case 'injected': return ['injected %s', `${event.message ?? ''} into ${name}`]
    case 'container-started': return ['started %s', `${event.message ?? ''} in ${name}`]
    case 'container-finished': return ['finished %s', `${event.message ?? ''} in ${name}`]
  }
}

/** The final phase of a JobFlow and a table of its jobs. */
function flowReport (sim: Simulator, flow: KubeObject): string[] {
  const status = isRecord(flow.status) ? flow.status : {}
  const phase = typeof status.phase === 'string' ? status.phase : 'unknown'
  const records = (Array.isArray(status.jobs) ? status.jobs : []).filter(isRecord)
  const counts = new Map<string, number>()
  for (const record of records) counts.set(String(record.phase), (counts.get(String(record.phase)) ?? 0) + 1)
  const others = [...counts].filter(([p]) => p !== 'Succeeded').map(([p, n]) => `${n} ${p.toLowerCase()}`)
  const summary = `${counts.get('Succeeded') ?? 0}/${records.length} jobs succeeded${others.length > 0 ? `, ${others.join(', ')}` : ''}`
  const at = typeof status.completionTime === 'string' ? ` at t=${formatSeconds(sim.secondsAt(status.completionTime))}` : ''
  const lines = [`${namespacedName(flow.metadata)}  ${phase}${at} (${summary})`]
  if (phase === 'Invalid' && Array.isArray(status.conditions)) {
    const valid = status.conditions.filter(isRecord).find(c => c.type === 'Valid')
    if (typeof valid?.message === 'string') lines.push(`  invalid: ${valid.message}`)
  }
  const time = timeOf(sim)
  const rows = [['FLOW', 'JOB', 'PHASE', 'START', 'END', 'MESSAGE'], ...records.map(r => [
    String(r.name), String(r.jobName), String(r.phase), time(r.startTime), time(r.completionTime), typeof r.message === 'string' ? r.message : ''
  ])]
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length))) ?? []
  for (const row of rows) lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}`)
  return lines
}

/** The kinds the simulation runs (JobTemplates only as what JobFlows refer to). */
const SIMULATED = new Set(['JobFlow', 'JobTemplate', 'DaemonJob'])

/** A status time as simulated seconds (`t=20s`), `-` when there is none. */
function timeOf (sim: Simulator): (value: unknown) => string {
  return value => (typeof value === 'string' ? `t=${formatSeconds(sim.secondsAt(value))}` : '-')
}

function formatSeconds (seconds: number): string {
  return Number.isInteger(seconds) ? `${seconds}s` : `${seconds.toFixed(3)}s`
}

function plural (n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2))
}
