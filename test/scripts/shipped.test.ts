// The shipped shell scripts, run with sh. `nc` is replaced by a stand-in on PATH that answers
// from a file, so the waiting logic is tested without a network.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { defaultHooksDir } from '../../src/scripts/library.js'

const hooks = defaultHooksDir()
function run (script: string, args: string[], env: Record<string, string> = {}): { code: number | null, out: string } {
  const result = spawnSync('/bin/sh', [join(hooks, script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000
  })
  return { code: result.status, out: result.stdout + result.stderr }
}

t.test('retry.sh retries with a limit and returns the last exit code', async t => {
  const dir = t.testdir({ count: '' })
  const counter = join(dir, 'count')
  const failTwice = `echo x >> ${counter}; [ $(wc -l < ${counter}) -ge 3 ]`
  const ok = run('retry.sh', ['-n', '5', '-d', '0', '--', 'sh', '-c', failTwice])
  t.equal(ok.code, 0)
  t.match(ok.out, /attempt 2 of 5 failed/)
  const bad = run('retry.sh', ['-n', '2', '-d', '0', '--', 'sh', '-c', 'exit 7'])
  t.equal(bad.code, 7)
  t.match(bad.out, /failed 2 times, last exit code 7/)
  t.equal(run('retry.sh', []).code, 2, 'no command is a usage error')
})

t.test('wait-for.sh waits for every endpoint, times out, and checks its input', async t => {
  const dir = t.testdir({ bin: {}, up: '' })
  const nc = join(dir, 'bin', 'nc')
  // Stand-in nc: "-z -w 2 host port" succeeds when host:port is listed in the up file.
  writeFileSync(nc, `#!/bin/sh\ngrep -qx "$4:$5" ${join(dir, 'up')}\n`)
  chmodSync(nc, 0o755)
  const env = { PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}` }
  writeFileSync(join(dir, 'up'), 'db:5432\ncache:6379\n')
  const up = run('wait-for.sh', ['-t', '5', 'db:5432', 'cache:6379'], env)
  t.equal(up.code, 0)
  t.match(up.out, /db:5432 is up[\s\S]*cache:6379 is up/)
  const down = run('wait-for.sh', ['-t', '1', 'db:5432', 'queue:5672'], env)
  t.equal(down.code, 1)
  t.match(down.out, /queue:5672 not reachable after 1s/)
  t.equal(run('wait-for.sh', ['nocolon'], env).code, 2)
  const noNc = run('wait-for.sh', ['-t', '1', 'db:5432'], { PATH: join(dir, 'empty') })
  t.equal(noNc.code, 2, 'without nc it says so instead of waiting')
  t.match(noNc.out, /needs nc/)
})

t.test('http-check.sh waits for a healthy URL', async t => {
  const dir = t.testdir({ bin: {} })
  const curl = join(dir, 'bin', 'curl')
  writeFileSync(curl, '#!/bin/sh\nfor a; do url=$a; done\ncase "$url" in *healthy*) exit 0;; *) exit 22;; esac\n')
  chmodSync(curl, 0o755)
  const env = { PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}` }
  t.equal(run('http-check.sh', ['-t', '5', 'http://svc/healthy'], env).code, 0)
  const down = run('http-check.sh', ['-t', '1', 'http://svc/down'], env)
  t.equal(down.code, 1)
  t.match(down.out, /not healthy after 1s/)
})
