// `npm run simulate -- manifests/examples/jobflow.yaml [--fail job2] [--duration 10]`
//
// Runs the JobFlows of a manifest on the in-process Metacontroller simulator (the real hooks,
// through the real HTTP app, on a simulated clock) and prints what happened when: which Jobs were
// created, started, succeeded or failed, and how each JobFlow's phase moved. Nothing touches a
// cluster. Exit 0 when the simulation ran (whatever the JobFlows' outcome), 1 when it could not
// (no such file, no JobFlow, a simulation that never settles), 2 for bad arguments.
import { pathToFileURL } from 'node:url'
import type { KubeObject } from '../k8s/types.js'
import { isRecord } from '../k8s/types.js'
import { Simulator, type HookVersion, type TimelineEvent } from '../simulator/simulator.js'
import { jobflowController, JOBHOOKS_API_VERSION } from '../simulator/controllers.js'
import { loadManifest, ManifestError } from '../simulator/manifest.js'
import { namespacedName, type ObjectRef } from '../simulator/objects.js'

export type Write = (line: string) => void

const USAGE = `usage: npm run simulate -- <manifest.yaml> [--fail <flow or Job name>]... [--duration <seconds>] [--hook-version v1|v2]

  --fail NAME        the Job of flow NAME (or the Job named NAME) fails; repeat or separate with commas
  --duration SECONDS how long every Job runs before it finishes (default 10)
  --hook-version V   the hook version Metacontroller uses: v2 (default, as deployed) or v1`

interface Arguments {
  file: string
  fail: string[]
  duration: number
  hookVersion: HookVersion
}

class UsageError extends Error {}

function parseArguments (argv: string[]): Arguments | 'help' {
  const files: string[] = []
  const fail: string[] = []
  let duration = 10
  let hookVersion: HookVersion = 'v2'
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
  return { file: files[0] as string, fail, duration, hookVersion }
}

export async function main (argv: string[], write: Write = line => process.stdout.write(`${line}\n`), writeError: Write = line => process.stderr.write(`${line}\n`)): Promise<number> {
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
  try {
    objects = loadManifest(args.file)
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error
    writeError(`simulate: ${error.message}`)
    return 1
  }
  const ours = objects.filter(o => o.apiVersion === JOBHOOKS_API_VERSION && (o.kind === 'JobFlow' || o.kind === 'JobTemplate'))
  const flows = ours.filter(o => o.kind === 'JobFlow')
  if (flows.length === 0) {
    writeError(`simulate: ${args.file} has no JobFlow (apiVersion ${JOBHOOKS_API_VERSION}, kind JobFlow) to simulate`)
    return 1
  }

  const sim = new Simulator({
    controllers: [jobflowController(args.hookVersion)],
    jobs: { durationSeconds: args.duration, outcomes: Object.fromEntries(args.fail.map(name => [name, 'fail' as const])) }
  })
  try {
    for (const object of ours) sim.apply(object)
    const templates = ours.length - flows.length
    write(`Simulating ${args.file}: ${plural(flows.length, 'JobFlow')}${templates > 0 ? `, ${plural(templates, 'JobTemplate')}` : ''}; ` +
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
    const jobs = sim.listJobs()
    const unmatched = args.fail.filter(name => !jobs.some(j => j.metadata.name === name || j.metadata.labels?.['jobhooks.io/flow'] === name))
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

/** Whose line an event goes on: a child's JobFlow, or the object itself. */
function subjectOf (event: TimelineEvent): string {
  if (event.owner !== undefined) return event.owner.name
  if (event.object.kind === 'JobFlow') return event.object.name
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
  const time = (value: unknown): string => (typeof value === 'string' ? `t=${formatSeconds(sim.secondsAt(value))}` : '-')
  const rows = [['FLOW', 'JOB', 'PHASE', 'START', 'END', 'MESSAGE'], ...records.map(r => [
    String(r.name), String(r.jobName), String(r.phase), time(r.startTime), time(r.completionTime), typeof r.message === 'string' ? r.message : ''
  ])]
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map(r => (r[i] ?? '').length))) ?? []
  for (const row of rows) lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}`)
  return lines
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
