// `kubectl jobhooks …` (bin/kubectl-jobhooks.mjs): see and steer jobhooks workloads from kubectl.
// Exit codes as kubectl's: 0 done, 1 for anything that went wrong (a usage error, an API error,
// a server that does not answer), its message on standard error. `simulate` plays a manifest with
// no cluster (src/cli/simulate.ts) and keeps that command's own flags and exit codes; `validate`
// checks manifests against our CRDs with no cluster (validate.ts).
import { isSea } from 'node:sea'
import { pathToFileURL } from 'node:url'
import { packageVersion } from '../../scripts/package-files.js'
import { connect, KubeError } from './client.js'
import { getCommand } from './get.js'
import { logsCommand } from './logs.js'
import { commandIndex, parseOptions, USAGE, UsageError, type Options } from './options.js'
import type { Io, Session } from './session.js'
import { rerunCommand, suspendCommand } from './steer.js'
import { approveCommand } from './approve.js'
import { submitCommand } from './submit.js'
import { triggerCommand } from './trigger.js'
import { validateCommand } from './validate.js'
import { watchCommand } from './watch.js'

/** `preview -f <manifest>`: the live preview of `npm run simulate -- --live`, with this command's flags. */
async function preview (options: Options, io: Io): Promise<number> {
  if (options.filename === undefined) throw new UsageError('preview needs a manifest: preview -f <manifest.yaml>')
  if (options.output === 'yaml' || options.output === 'html') throw new UsageError('preview prints text or -o json')
  const argv = [
    '--live', '-f', options.filename,
    ...(options.kubeconfig !== undefined ? ['--kubeconfig', options.kubeconfig] : []),
    ...(options.namespace !== undefined ? ['-n', options.namespace] : []),
    ...(options.output === 'json' ? ['--output', 'json'] : [])
  ]
  // The live preview's own last word when the cluster could not be read.
  let noCluster = false
  const err = asKubectl(io, line => { noCluster ||= line === 'error: no preview; nothing was written' })
  const impersonate = {
    ...(options.as !== undefined ? { user: options.as } : {}),
    ...(options.asGroups !== undefined ? { groups: options.asGroups } : {})
  }
  // Loaded only for this command, as the simulator: it holds the hooks' whole app.
  const { liveMain } = await import('../simulate-live.js')
  const code = await liveMain(argv, line => io.out(`${line}\n`), err, options.context, impersonate)
  if (noCluster) io.err(`To play it with no cluster: kubectl jobhooks simulate -f ${options.filename}\n`)
  return code === 0 ? 0 : 1
}

/**
 * `simulate …`: the simulator with its own flags (`-f`, `-o`, `--fail`, …); its usage errors exit
 * 1 as kubectl's, any other code is the simulator's.
 */
async function simulate (argv: string[], io: Io): Promise<number> {
  // Loaded only for this command: the simulator is most of the CLI's code.
  const { main: simulateMain } = await import('../simulate.js')
  const code = await simulateMain(argv, line => io.out(`${line}\n`), asKubectl(io))
  return code === 2 ? 1 : code
}

/** The simulator's and the live preview's messages as kubectl words them: `error: …`, not `simulate: …`. */
function asKubectl (io: Io, seen: (line: string) => void = () => {}): (line: string) => void {
  return line => {
    const worded = line.replace(/^simulate: /, 'error: ')
    seen(worded)
    io.err(`${worded}\n`)
  }
}

/**
 * The arguments after `simulate` (or `validate`) when it is the command. The cluster flags before
 * it are left out: with none, nothing is read from a cluster (`preview` is the live one).
 */
function argumentsOf (command: 'simulate' | 'validate' | 'version', argv: string[]): string[] | undefined {
  const at = commandIndex(argv)
  return argv[at] === command ? argv.slice(at + 1) : undefined
}

async function run (options: Options, io: Io): Promise<void> {
  const client = await connect({
    timeoutMs: options.timeoutMs,
    ...(options.kubeconfig !== undefined ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.as !== undefined ? { as: options.as } : {}),
    ...(options.asGroups !== undefined ? { asGroups: options.asGroups } : {}),
    ...(io.env !== undefined ? { env: io.env } : {})
  })
  const namespace = options.namespace ?? client.contextNamespace ?? 'default'
  const session: Session = { io, options, client, namespace }
  switch (options.command) {
    case 'get': return options.watch ? await watchCommand(session) : await getCommand(session)
    case 'submit': return await submitCommand(session)
    case 'trigger': return await triggerCommand(session)
    case 'rerun': return await rerunCommand(session)
    case 'approve': return await approveCommand(session)
    case 'suspend': return await suspendCommand(session, true)
    case 'resume': return await suspendCommand(session, false)
    case 'logs': return await logsCommand(session)
    case 'ui': {
      // Loaded only for this command: the page's server and its views.
      const { uiCommand } = await import('../ui/command.js')
      return await uiCommand(session)
    }
  }
}

/** `version`: the package's version, the Node running it, and whether it is the single executable. */
function versionLine (): string {
  const shipped = isSea() ? 'single executable' : 'from the package folder'
  const node = `Node ${process.version}, ${process.platform}/${process.arch}`
  return `kubectl-jobhooks ${packageVersion()} (${shipped}, ${node})`
}

export async function pluginMain (argv: string[], io: Io): Promise<number> {
  if (argumentsOf('version', argv) !== undefined) {
    io.out(`${versionLine()}\n`)
    return 0
  }
  const simulating = argumentsOf('simulate', argv)
  if (simulating !== undefined) return await simulate(simulating, io)
  try {
    const validating = argumentsOf('validate', argv)
    if (validating !== undefined) return validateCommand(validating, io)
    const options = parseOptions(argv)
    if (options.command === 'help') {
      io.out(`${USAGE}\n`)
      return 0
    }
    if (options.command === 'preview') return await preview(options, io)
    await run(options, io)
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`error: ${error.message}\nSee 'kubectl jobhooks --help' for usage.\n`)
      return 1
    }
    if (error instanceof KubeError) {
      io.err(`${error.message}\n`)
      return 1
    }
    throw error
  }
}

/** The plugin as a process: real output, Ctrl-C ending a watch or a followed log quietly (exit 0). */
export async function runFromCommandLine (): Promise<never> {
  const interrupted = new AbortController()
  process.once('SIGINT', () => interrupted.abort())
  const code = await pluginMain(process.argv.slice(2), {
    out: text => process.stdout.write(text),
    err: text => process.stderr.write(text),
    tty: process.stdout.isTTY,
    now: () => new Date(),
    signal: interrupted.signal
  })
  // Exit once the output is written: an open keep-alive socket must not hold the process.
  process.stdout.write('', () => process.exit(code))
  return await new Promise<never>(() => {})
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // Not a top-level await: the single-file plugin bundles this module as CommonJS.
  void runFromCommandLine()
}
