// The command line of `kubectl jobhooks`, read with kubectl's flags: --kubeconfig, --context,
// --as, --as-group, -n/--namespace, -A/--all-namespaces, -o/--output, -w/--watch, --request-timeout; `-f` is
// --follow for logs and --filename for preview, as in kubectl; submit's --from, -p and --name are
// argo submit's (--name is also trigger's: the run's name, as `kubectl create job NAME --from`).
import { parseArgs } from 'node:util'

export class UsageError extends Error {}

export const COMMANDS = [
  'get', 'submit', 'trigger', 'rerun', 'approve', 'suspend', 'resume', 'logs', 'preview', 'ui'
] as const
export type Command = typeof COMMANDS[number]
export type Output = 'tree' | 'json' | 'yaml' | 'html'

export interface Options {
  command: Command | 'help'
  /** The command's positional arguments: kind, name, step. */
  args: string[]
  kubeconfig?: string
  context?: string
  /** --as: the user to act as (kubectl's impersonation). */
  as?: string
  /** --as-group: the groups to act as (repeatable). */
  asGroups?: string[]
  namespace?: string
  allNamespaces: boolean
  output: Output
  watch: boolean
  filename?: string
  attempt?: number
  item?: number
  follow: boolean
  /** `rerun --step`: the steps to rerun with every step after them (repeatable, or comma separated). */
  steps?: string[]
  /** `submit --from`: the template, as `jobflowtemplate/<name>` or `jft/<name>`. */
  from?: string
  /** `submit -p key=value` (repeatable), as given. */
  parameters?: string[]
  /** `submit --name`, `trigger --name`: the JobFlow's name instead of a generated one. */
  name?: string
  /** `ui --port`: the page's port (0, the default: a free one). */
  port?: number
  /** `ui --address`: where the page listens (default 127.0.0.1). */
  address?: string
  /** How long a request may wait for an answer (--request-timeout; a watch or a followed log only for its start). */
  timeoutMs: number
}

export const USAGE = `kubectl jobhooks: see and steer jobhooks workloads.

Usage:
  kubectl jobhooks get <kind> [<name>] [-o json|yaml|html] [-w]   a kind: jf, cjf, dj, ejob, opj, cls
  kubectl jobhooks submit --from jft/<template> [-p K=V …] [--name N] [-o yaml|json]
                                                   create a JobFlow of a JobFlowTemplate (-o: print it,
                                                   create nothing)
  kubectl jobhooks trigger cjf <name> [--name N] [-o yaml|json]
                                                   start a run of a CronJobFlow now, as kubectl create
                                                   job --from=cronjob/<name> (-o: print it, create nothing)
  kubectl jobhooks rerun jf <name> [--step S …]    rerun the failed and skipped steps of a finished JobFlow,
                                                   or step S and every step after it
  kubectl jobhooks approve jf <name> <step>        approve a waiting approval step
  kubectl jobhooks suspend jf|dj|cjf <name>        start no new Job or run (spec.suspend: true)
  kubectl jobhooks resume jf|dj|cjf <name>         go on (spec.suspend: false)
  kubectl jobhooks logs jf <name> <step> [--attempt N | --item I] [-f]   the logs of a step's pods
  kubectl jobhooks preview -f <manifest.yaml>      what the next sync would do (reads only)
  kubectl jobhooks ui [--port N] [-n NS | -A]      a live web page of every workload, on 127.0.0.1,
                                                   through this kubeconfig (Ctrl-C ends it)
  kubectl jobhooks simulate -f <manifest.yaml> [-o json|html|mermaid]
                                                   play it with no cluster (simulate --help)
  kubectl jobhooks validate -f <manifest.yaml> [-f …]
                                                   check it against the CRDs' schemas and rules as the
                                                   API server does (--validate=strict), with no cluster
  kubectl jobhooks version                         this plugin's version, the Node it runs on, how it ships

Flags:
  --kubeconfig FILE       the kubeconfig (default: $KUBECONFIG, else ~/.kube/config)
  --context NAME          a context of the kubeconfig instead of its current one
  --as USER               act as USER (impersonation: the account needs the impersonate verb)
  --as-group GROUP        act as a member of GROUP too (repeatable)
  -n, --namespace NS      the namespace (default: the context's, else default)
  -A, --all-namespaces    get <kind> without a name: list every namespace's
  -o, --output FORMAT     json, yaml, or html (a JobFlow's graph and Gantt chart)
  -w, --watch             draw again on every change (a watch, not polling)
  --step S                rerun: step S and every step after it, however they ended (repeatable)
  --from jft/NAME         submit: the JobFlowTemplate (also jobflowtemplate/NAME)
  -p, --parameter K=V     submit: the value of the template's argument K (repeatable)
  --name N                submit: the JobFlow's name (default: generated, <template>-xxxxx);
                          trigger: the run's name (default: <cronjobflow>-manual-<unix seconds>)
  --port N                ui: the page's port (default: a free one)
  --address ADDR          ui: listen on ADDR instead of 127.0.0.1 (anyone who reaches it acts as you)
  --request-timeout D     give up on a request after D (30s, 500ms; default 30s)
  -h, --help              this text`

const FLAGS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  as: { type: 'string' },
  'as-group': { type: 'string', multiple: true },
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  output: { type: 'string', short: 'o' },
  watch: { type: 'boolean', short: 'w' },
  filename: { type: 'string' },
  follow: { type: 'boolean' },
  attempt: { type: 'string' },
  item: { type: 'string' },
  step: { type: 'string', multiple: true },
  from: { type: 'string' },
  parameter: { type: 'string', short: 'p', multiple: true },
  name: { type: 'string' },
  port: { type: 'string' },
  address: { type: 'string' },
  'request-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/** The flags that take a value, as they may be spelled: `--name` and their short `-x`. */
const VALUE_FLAGS = new Set(Object.entries(FLAGS).flatMap(([name, flag]) => flag.type !== 'string'
  ? []
  : [`--${name}`, ...('short' in flag ? [`-${flag.short}`] : [])]))

/** Where the command word is: the first argument that is neither a flag nor a flag's value (-1: none). */
export function commandIndex (argv: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (VALUE_FLAGS.has(arg) || arg === '-f') i++
    else if (!arg.startsWith('-')) return i
  }
  return -1
}

/** `30s`, `500ms`, `1m`, or a bare number of seconds, as kubectl reads --request-timeout. */
export function duration (value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value)
  if (match === null) throw new UsageError(`invalid --request-timeout ${JSON.stringify(value)}: give 30s, 500ms, 1m`)
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'm' | 'h' ?? 's']
  // 0 is kubectl's "no timeout": the longest a timer takes.
  return Number(match[1]) === 0 ? 2_147_483_647 : Number(match[1]) * factor
}

function wholeNumber (value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number, not ${JSON.stringify(value)}`)
  return Number(value)
}

function outputOf (value: string | undefined): Output {
  if (value === undefined) return 'tree'
  if (value === 'json' || value === 'yaml' || value === 'html') return value
  throw new UsageError(`unable to match a printer suitable for the output format "${value}", ` +
    'allowed formats are: json,yaml,html')
}

/** `-f` as kubectl means it for the command at hand. */
function withLongF (argv: string[]): string[] {
  const command = argv.find(a => (COMMANDS as readonly string[]).includes(a))
  return argv.map(a => a === '-f' ? (command === 'logs' ? '--follow' : '--filename') : a)
}

export function parseOptions (argv: string[]): Options {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof FLAGS, allowPositionals: true }>>
  try {
    parsed = parseArgs({ args: withLongF(argv), options: FLAGS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message.split('\n')[0] : String(error))
  }
  const { values, positionals } = parsed
  const [first, ...args] = positionals
  if (values.help === true || first === undefined || first === 'help') return defaults('help', args)
  if (!(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}"`)
  if (values.attempt !== undefined && values.item !== undefined) {
    throw new UsageError('give --attempt or --item, not both')
  }
  const options = defaults(first as Command, args)
  const steps = values.step?.flatMap(s => s.split(',')).map(s => s.trim()).filter(s => s !== '')
  if (steps !== undefined && first !== 'rerun') throw new UsageError('--step is a flag of rerun')
  const submitFlags = ['from', 'parameter'] as const
  if (first !== 'submit' && submitFlags.some(flag => values[flag] !== undefined)) {
    throw new UsageError('--from and -p are flags of submit')
  }
  if (first !== 'submit' && first !== 'trigger' && values.name !== undefined) {
    throw new UsageError('--name is a flag of submit and trigger')
  }
  if (values['as-group'] !== undefined && values.as === undefined) {
    // client-go's own refusal: groups alone name nobody.
    throw new UsageError('requesting groups without impersonating a user: give --as with --as-group')
  }
  if (first !== 'ui' && (values.port !== undefined || values.address !== undefined)) {
    throw new UsageError('--port and --address are flags of ui')
  }
  const port = wholeNumber(values.port, '--port')
  if (port !== undefined && port > 65535) throw new UsageError(`--port must be at most 65535, not ${port}`)
  const attempt = wholeNumber(values.attempt, '--attempt')
  const item = wholeNumber(values.item, '--item')
  return {
    ...options,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.as !== undefined ? { as: values.as } : {}),
    ...(values['as-group'] !== undefined ? { asGroups: values['as-group'] } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
    ...(values.filename !== undefined ? { filename: values.filename } : {}),
    ...(attempt !== undefined ? { attempt } : {}),
    ...(item !== undefined ? { item } : {}),
    ...(steps !== undefined && steps.length > 0 ? { steps } : {}),
    ...(values.from !== undefined ? { from: values.from } : {}),
    ...(values.parameter !== undefined ? { parameters: values.parameter } : {}),
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(values.address !== undefined ? { address: values.address } : {}),
    allNamespaces: values['all-namespaces'] === true,
    output: outputOf(values.output),
    watch: values.watch === true,
    follow: values.follow === true,
    timeoutMs: values['request-timeout'] === undefined ? options.timeoutMs : duration(values['request-timeout'])
  }
}

function defaults (command: Command | 'help', args: string[]): Options {
  return { command, args, allNamespaces: false, output: 'tree', watch: false, follow: false, timeoutMs: 30_000 }
}
