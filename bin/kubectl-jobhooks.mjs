#!/usr/bin/env node
// kubectl-jobhooks: the kubectl plugin. kubectl runs `kubectl-jobhooks` from the PATH for
// `kubectl jobhooks …` (docs/cli.md). The compiled plugin runs in this process; the project is
// built first only when a source changed (scripts/built.mjs --build), its output on stderr so
// that `-o json` stays clean.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = new URL('..', import.meta.url)
const build = spawnSync(process.execPath, [fileURLToPath(new URL('scripts/built.mjs', root)), '--build'], {
  stdio: ['ignore', 2, 2]
})
if (build.status !== 0) process.exit(build.status ?? 1)
const { runFromCommandLine } = await import(new URL('dist/src/cli/kubectl/main.js', root).href)
await runFromCommandLine()
