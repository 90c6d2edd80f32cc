// The command line of `npm run simulate`, both modes, parsed in one place with node:util's
// parseArgs: the simulation (`<manifest>... [options]`) and the live preview (`--live` or
// `--kubeconfig`). The simulation's flags are read in order (an `--at` applies to the `--set`s
// before it), from parseArgs' tokens; the first flag it does not know is an error.
import { parseArgs } from 'node:util'
import { parse as parseYaml } from 'yaml'
import type { HookVersion } from '../simulator/types.js'

export type Write = (line: string) => void

export class UsageError extends Error {}

export const SIMULATE_USAGE = `usage: kubectl jobhooks simulate -f <manifest.yaml>... [options]
       npm run -s simulate -- <manifest.yaml>... [options]   (from a clone)

  Plays the manifests with no cluster: an in-process Metacontroller, API server and Job
  controller. Manifests are applied in order, each once the one before has settled.
  -f, --filename FILE a manifest (may also be given bare); repeat for more
  --fail NAME        the Job of flow NAME (or the Job named NAME) fails; the ephemeral containers
                     injected into Pod NAME (or the Pods of Deployment or CollaSet NAME) exit 1.
                     NAME:N fails the first N attempts of flow NAME (its retries and reruns).
                     Repeat, or separate with commas
  --hang NAME        the ephemeral containers of Pod (or workload) NAME keep running
  --set [OBJ:]PATH=VALUE
                     edit an object at the time of the next --at, as kubectl edit would: OBJ names
                     it (default: the last jobhooks object of the manifests), VALUE is YAML; a key
                     with dots in brackets: 'metadata.annotations[jobhooks.io/rerun]=1', a list's
                     item by its index: 'spec.flows[1].jobTemplate.activeDeadlineSeconds=600'
  --apply FILE       apply FILE's objects at the time of the next --at, as kubectl apply would
                     (e.g. a Job that takes a Kueue quota, to see a preemption)
  --at SECONDS       when the --set edits and --apply files before it happen (simulated seconds
                     from the start: 60 or 60s)
  --duration SECONDS how long every Job runs before it finishes (default 10); a Job whose own
                     activeDeadlineSeconds is shorter fails then, DeadlineExceeded, as on a cluster
  --output-of STEP=VALUE
                     the termination message of step STEP's succeeded pod (or of the Job named
                     STEP), its output: --output-of build=v1.2.3. Repeat for more steps. Without
                     it, a step's message is what its command writes with a plain
                     \`echo … > /dev/termination-log\`, if anything
  --pods FILE        Pods and Deployments to add to the manifests' (applied first), for the
                     EphemeralJobs and OperationJobs to act on
  --nodes FILE       the Node objects DaemonJobs run over (with any in the manifest); without any:
                     node1, node2, node3, and node4 cordoned
  --kueue-quota N    model Kueue: Jobs with a kueue.x-k8s.io/queue-name label wait suspended until
                     admitted, at most N at once, higher priority (WorkloadPriorityClass) first,
                     preempting a lower priority when full. Without it nothing admits them
  --until SECONDS    stop there if the simulation has not settled (default 3600; 15m, 3h: a CronJobFlow plays
                     until then)
  --coalesce         handle every event of one instant before the next sync, as Metacontroller's
                     queue folds a burst into one: a fan-out of thousands of items plays in
                     seconds (default: a sync after each event, as the examples' timelines show)
  -o, --output FORMAT
                     json: the timeline and the reports as JSON, for scripts; mermaid: each
                     JobFlow as a Mermaid flowchart; html: one self-contained page with each
                     JobFlow's graph and a Gantt chart of its Jobs (default: text)
  --hook-version V   the hook version Metacontroller uses: v2 (default, as deployed) or v1
  --live, --kubeconfig FILE
                     preview against a real cluster instead, read-only (see --live --help)

  Every object of the manifests is first checked against the CRDs as the API server would check
  it (kubectl jobhooks validate). Exit 0 when the run settled (Succeeded or Failed), 1 when it
  could not run (a file, an object the API server would refuse), 2 for a usage error, 3 when an
  object ended Invalid.`

export const LIVE_USAGE = `usage: npm run simulate -- --live -f <manifest.yaml> [-n <namespace>] [--output json]
       npm run simulate -- --kubeconfig <file> -f <manifest.yaml> [-n <namespace>] [--output json]

  Reads from the cluster what Metacontroller would send the next sync of each jobhooks object of
  the manifest, runs the hooks in process and prints what that sync would create, delete, write
  and do. Only GET requests reach the cluster; nothing is written.

  --live              the cluster of $KUBECONFIG, else of ~/.kube/config (as kubectl finds it)
  --kubeconfig FILE   the cluster of FILE
  -f FILE             the manifest (may also be given bare)
  -n, --namespace NS  for objects that name none (default: the context's namespace, else default)
  --output json       the same as JSON, for scripts`

const SIMULATE_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  fail: { type: 'string' },
  hang: { type: 'string' },
  set: { type: 'string' },
  apply: { type: 'string' },
  at: { type: 'string' },
  'kueue-quota': { type: 'string' },
  duration: { type: 'string' },
  'output-of': { type: 'string' },
  until: { type: 'string' },
  coalesce: { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  filename: { type: 'string', short: 'f' },
  nodes: { type: 'string' },
  pods: { type: 'string' },
  'hook-version': { type: 'string' }
} as const

const LIVE_OPTIONS = {
  live: { type: 'boolean' },
  kubeconfig: { type: 'string' },
  file: { type: 'string', short: 'f', multiple: true },
  namespace: { type: 'string', short: 'n' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' }
} as const

/** The spellings the simulation takes: `--name`, `-h`, and kubectl's `-f` and `-o`. */
const SIMULATE_FLAGS = new Set(['-h', '-f', '-o', ...Object.keys(SIMULATE_OPTIONS).map(name => `--${name}`)])

/** A `--set` edit, made at the time of the `--at` after it. */
export interface Edit { object?: string, path: string[], value: unknown, text: string, at: number }

/** An `--apply` of a file's objects, at the time of the `--at` after it. */
export interface LaterApply { file: string, at: number }

/** What the simulation prints: words, JSON, or pictures of the JobFlows. */
export type SimulateOutput = 'text' | 'json' | 'mermaid' | 'html'
const SIMULATE_OUTPUTS: readonly string[] = ['text', 'json', 'mermaid', 'html']

export interface SimulateArguments {
  files: string[]
  fail: string[]
  /** `--fail flow:N`: how many of the flow's first attempts fail. */
  failAttempts: Record<string, number>
  hang: string[]
  edits: Edit[]
  /** `--apply` files, by time. */
  applies: LaterApply[]
  duration: number
  until: number
  output: SimulateOutput
  hookVersion: HookVersion
  nodes?: string
  pods?: string
  /** `--kueue-quota`: Kueue's model admits at most this many queued Jobs at once. */
  kueueQuota?: number
  /** `--output-of step=value`: the termination message of the step's (or Job's) succeeded pod. */
  outputs: Record<string, string>
  /** `--coalesce`: every event of an instant handled before the next sync. */
  coalesce: boolean
}

export interface LiveArguments {
  file: string
  kubeconfig?: string
  namespace?: string
  json: boolean
}

/** Whether the command line asks for the live preview (`--live` or `--kubeconfig`). */
export function isLive (argv: string[]): boolean {
  const { tokens } = parseArgs({
    args: argv, options: LIVE_OPTIONS, strict: false, allowPositionals: true, tokens: true
  })
  return tokens.some(token => token.kind === 'option' && (token.name === 'live' || token.name === 'kubeconfig'))
}

/** The simulation's arguments, `help`, or a UsageError. */
export function parseSimulateArguments (argv: string[]): SimulateArguments | 'help' {
  const { tokens } = parseArgs({
    args: argv, options: SIMULATE_OPTIONS, strict: false, allowPositionals: true, tokens: true
  })
  const args: SimulateArguments = {
    files: [],
    fail: [],
    failAttempts: {},
    hang: [],
    edits: [],
    applies: [],
    duration: 10,
    until: 3600,
    output: 'text',
    hookVersion: 'v2',
    outputs: {},
    coalesce: false
  }
  const pending: Pending[] = []
  for (const token of tokens) {
    if (token.kind === 'option-terminator') throw new UsageError('unknown option --')
    const raw = argv[token.index] as string
    if (token.kind === 'positional') {
      if (raw.startsWith('-')) throw new UsageError(`unknown option ${raw}`)
      args.files.push(raw)
      continue
    }
    // `--flag=value` is the flag `--flag`; any other spelling must be known as it is.
    const flag = raw.startsWith('--') && raw.includes('=') ? raw.slice(0, raw.indexOf('=')) : raw
    if (!SIMULATE_FLAGS.has(flag)) throw new UsageError(`unknown option ${raw}`)
    if (token.name === 'help') return 'help'
    if (token.name === 'coalesce') {
      if (token.value !== undefined) throw new UsageError(`${flag} takes no value`)
      args.coalesce = true
      continue
    }
    if (token.value === undefined || token.value === '') throw new UsageError(`${flag} needs a value`)
    takeOption(args, pending, token.name, token.value)
  }
  if (pending.length > 0) {
    const what = pending.map(p => ('file' in p ? `--apply ${p.file}` : `--set ${p.text}`)).join(', ')
    throw new UsageError(`${what} has no --at after it`)
  }
  if (args.files.length === 0) throw new UsageError('name the manifest to simulate')
  args.edits.sort((a, b) => a.at - b.at)
  args.applies.sort((a, b) => a.at - b.at)
  return args
}

/** A `--set` edit or an `--apply` file waiting for its `--at`. */
type Pending = Omit<Edit, 'at'> | { file: string }

/** One simulation option with its value; `--set` edits and `--apply` files wait in `pending` for the next `--at`. */
function takeOption (args: SimulateArguments, pending: Pending[], name: string, value: string): void {
  switch (name) {
    case 'fail':
      for (const item of names(value)) {
        const match = /^(.+):([0-9]+)$/.exec(item)
        if (match === null) args.fail.push(item)
        else args.failAttempts[match[1] as string] = Number(match[2])
      }
      return
    case 'hang': args.hang.push(...names(value)); return
    case 'set': pending.push(parseEdit(value)); return
    case 'apply': pending.push({ file: value }); return
    case 'at': {
      const at = seconds('--at', value, 0)
      if (pending.length === 0) throw new UsageError('--at needs a --set or --apply before it')
      for (const item of pending) {
        if ('file' in item) args.applies.push({ file: item.file, at })
        else args.edits.push({ ...item, at })
      }
      pending.length = 0
      return
    }
    case 'kueue-quota': {
      const quota = Number(value)
      if (!Number.isInteger(quota) || quota < 1) {
        throw new UsageError(`--kueue-quota must be a whole number of Jobs, at least 1, not ${JSON.stringify(value)}`)
      }
      args.kueueQuota = quota
      return
    }
    case 'output-of': {
      // Not split at commas: an output is often a JSON array.
      const equals = value.indexOf('=')
      if (equals < 1) throw new UsageError(`--output-of takes STEP=VALUE, not ${JSON.stringify(value)}`)
      args.outputs[value.slice(0, equals)] = value.slice(equals + 1)
      return
    }
    case 'duration': args.duration = seconds('--duration', value, 0.001); return
    case 'until': args.until = seconds('--until', value, 1); return
    case 'output':
      if (!SIMULATE_OUTPUTS.includes(value)) {
        throw new UsageError(`--output must be ${SIMULATE_OUTPUTS.join(', ')}, not ${JSON.stringify(value)}`)
      }
      args.output = value as SimulateOutput
      return
    case 'filename': args.files.push(value); return
    case 'nodes': args.nodes = value; return
    case 'pods': args.pods = value; return
    case 'hook-version':
      if (value !== 'v1' && value !== 'v2') {
        throw new UsageError(`--hook-version must be v1 or v2, not ${JSON.stringify(value)}`)
      }
      args.hookVersion = value
  }
}

function names (raw: string): string[] {
  return raw.split(',').map(s => s.trim()).filter(s => s !== '')
}

/** Seconds per unit of a duration: `90`, `90s`, `15m`, `3h`, `1d`. */
const UNIT_SECONDS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }

function seconds (flag: string, raw: string, min: number): number {
  const match = /^(.*?)([smhd]?)$/.exec(raw) as RegExpExecArray
  const value = Number(match[1]) * (UNIT_SECONDS[match[2] as string] as number)
  if (match[1] === '' || !Number.isFinite(value) || value < min) {
    const what = min > 0 ? 'a positive' : 'a'
    throw new UsageError(
      `${flag} must be ${what} number of seconds (or with m, h, d: 15m, 3h), not ${JSON.stringify(raw)}`)
  }
  return value
}

function parseEdit (raw: string): Omit<Edit, 'at'> {
  const match = /^(?:([a-z0-9.-]+):)?((?:[A-Za-z0-9_]+|\[[^\]=]+\])(?:\.[A-Za-z0-9_]+|\[[^\]=]+\])*)=(.*)$/s.exec(raw)
  if (match === null) throw new UsageError(`--set takes [OBJECT:]PATH=VALUE, not ${JSON.stringify(raw)}`)
  const [, object, path, value] = match as unknown as [string, string | undefined, string, string]
  // A key with dots or slashes goes in brackets: metadata.annotations[jobhooks.io/rerun]=1.
  const segments = [...path.matchAll(/([A-Za-z0-9_]+)|\[([^\]]+)\]/g)].map(m => (m[1] ?? m[2]) as string)
  return {
    ...(object !== undefined ? { object } : {}),
    path: segments,
    value: parseYaml(value) as unknown,
    text: `${path}=${value}`
  }
}

/** The live preview's arguments, `help`, or a UsageError. */
export function parseLiveArguments (argv: string[]): LiveArguments | 'help' {
  let parsed
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: LIVE_OPTIONS })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help === true) return 'help'
  if (values.live !== true && values.kubeconfig === undefined) {
    throw new UsageError('say which cluster: --live or --kubeconfig <file>')
  }
  if (values.kubeconfig === '') throw new UsageError('--kubeconfig needs a file')
  const files = [...(values.file ?? []), ...positionals]
  if (files.length !== 1) {
    throw new UsageError(files.length === 0
      ? 'name the manifest to preview: -f <manifest.yaml>'
      : `one manifest at a time, not ${files.length}`)
  }
  if (values.namespace === '') throw new UsageError('--namespace needs a value')
  const output = values.output ?? 'text'
  if (output !== 'text' && output !== 'json') {
    throw new UsageError(`--output must be json (or text, the default), not ${JSON.stringify(output)}`)
  }
  return {
    file: files[0] as string,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    json: output === 'json'
  }
}
