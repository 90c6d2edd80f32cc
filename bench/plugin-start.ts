// The single-file plugin's cold start: `kubectl-jobhooks --help` started as a new process again and
// again (what a user waits for at each command), against the same command run by Node from the
// package folder (bin/kubectl-jobhooks.mjs, a clone's way). The executable of this machine's platform
// is built first when it is missing (npm run plugin:build -- --platform …: fetches Node once).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { arch } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { packageRoot } from '../src/scripts/package-files.js'

/** How many times each command is started; the median is the figure. */
export const PLUGIN_STARTS = 21
/** The goal for the executable's `--help`, in milliseconds (issue: under 300 ms). */
export const PLUGIN_START_GOAL_MS = 300

export interface PluginStart {
  executable: string
  /** Median wall milliseconds of `--help`, the single executable. */
  singleMs: number
  /** The same from the package folder (node bin/kubectl-jobhooks.mjs, already built). */
  folderMs: number
}

function medianStart (command: string, args: string[]): number {
  const times: number[] = []
  for (let i = 0; i < PLUGIN_STARTS + 1; i++) {
    const started = performance.now()
    const ran = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: '/nonexistent' } })
    if (ran.status !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${ran.status}: ${String(ran.stderr)}`)
    // The first start warms the page cache, as any command run before would have.
    if (i > 0) times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] as number
}

export function benchPluginStart (): PluginStart {
  const root = packageRoot()
  const platform = `linux-${arch()}`
  const executable = join(root, 'dist', 'plugin', platform, 'kubectl-jobhooks')
  if (!existsSync(executable)) {
    const built = spawnSync(process.execPath, [join(root, 'scripts', 'plugin-build.mjs'), '--platform', platform], {
      stdio: ['ignore', 'ignore', 'inherit']
    })
    if (built.status !== 0) throw new Error(`npm run plugin:build -- --platform ${platform}: exit ${built.status}`)
  }
  const singleMs = medianStart(executable, ['--help'])
  const folderMs = medianStart(process.execPath, [join(root, 'bin', 'kubectl-jobhooks.mjs'), '--help'])
  return { executable, singleMs, folderMs }
}

export function pluginStartReport (r: PluginStart): string {
  const ok = r.singleMs < PLUGIN_START_GOAL_MS
  return [
    '| command | median ms |',
    '| --- | ---: |',
    `| kubectl-jobhooks --help (single executable) | ${r.singleMs.toFixed(1)} |`,
    `| node bin/kubectl-jobhooks.mjs --help (package folder) | ${r.folderMs.toFixed(1)} |`,
    '',
    'Goals:',
    `- ${ok ? 'PASS' : 'FAIL'}: the single executable's --help in ${r.singleMs.toFixed(1)} ms ` +
      `(goal < ${PLUGIN_START_GOAL_MS} ms, the median of ${PLUGIN_STARTS} starts)`
  ].join('\n')
}
