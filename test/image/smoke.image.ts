// The image run as manifests/deploy/deployment.yaml runs it (test/image/run-args.ts: read-only
// root, uid 1000, every capability dropped, its NODE_OPTIONS, the token Secret mounted read-only
// at its path), beside `node dist/src/server.js` from the working tree with the same token, both
// without cluster credentials, on free ports of 127.0.0.1: every fixture gets byte-identical
// answers from both at its pinned clock, /readyz answers at the probe's path, a call without the
// token is refused, the shipped scripts are the image's, and SIGTERM drains a call in flight and
// exits 0 within terminationGracePeriodSeconds. Every container is removed when the test ends.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { FIXTURES } from '../helpers/fixtures.js'
import { IMAGE, inspectImage, MISSING_IMAGE, ROOT, tool, TOOL } from './image.js'
import { containerRun, deploymentFrom } from './run-args.js'

interface Started {
  output: () => string
  exited: Promise<number | null>
  child: ChildProcess
}
interface Answer {
  status: number
  body: Buffer
}

const deployment = deploymentFrom(readFileSync(join(ROOT, 'manifests/deploy/deployment.yaml'), 'utf8'))
const clocks = (JSON.parse(readFileSync(join(FIXTURES, 'clocks.json'), 'utf8')) as { clocks: Record<string, string> })
  .clocks

if ((await inspectImage(IMAGE)) === undefined) t.fail(MISSING_IMAGE)
else await smokeTest()

async function smokeTest (): Promise<void> {
  const token = randomBytes(32).toString('hex')
  const tokenDir = tokenFolder(token)
  const name = `jobhooks-smoke-${process.pid}`
  const [localPort, imagePort] = [await freePort(), await freePort()]
  const run = containerRun(deployment, { image: IMAGE, port: imagePort, tokenDir, name, tool: TOOL })
  t.teardown(async () => {
    await tool(['rm', '-f', name]).catch(() => undefined)
    rmSync(tokenDir, { recursive: true, force: true })
  })
  t.comment(`${TOOL} ${run.args.join(' ')}`)
  const container = start(TOOL, run.args, {})
  const local = start(process.execPath, ['dist/src/server.js'], localEnv(localPort, join(tokenDir, 'token')))
  t.teardown(() => {
    local.child.kill('SIGKILL')
  })
  const image = `http://127.0.0.1:${imagePort}`
  const checkout = `http://127.0.0.1:${localPort}`
  await t.test('both answer their readiness probe', async (t) => {
    t.equal(
      await ready(image + run.readinessPath, container),
      200,
      `the image: ${run.readinessPath} (the Deployment's readiness path) 200`
    )
    t.equal(await ready(checkout + run.readinessPath, local), 200, 'node dist/src/server.js: 200')
    t.equal((await get(image + run.livenessPath)).status, 200, `the image: ${run.livenessPath} (the liveness path) 200`)
  })
  await t.test('the container runs as the Deployment says', async (t) => {
    await containerSettings(t, name, run.env)
  })
  await t.test('every fixture gets the same bytes from the image as from the checkout', async (t) => {
    for (const [file, clock] of Object.entries(clocks)) {
      const body = readFileSync(join(FIXTURES, file))
      const [a, b] = await Promise.all([
        post(image + hookPath(file), body, token, clock),
        post(checkout + hookPath(file), body, token, clock),
      ])
      t.equal(a.status, b.status, `${file}: ${a.status}`)
      t.ok(a.body.equals(b.body), `${file}: byte-identical answers (${a.body.length} bytes)`)
    }
  })
  await t.test('a hook call without the token is refused', async (t) => {
    const body = readFileSync(join(FIXTURES, 'jobflow/sync-new.v2.json'))
    const [a, b] = await Promise.all([
      post(image + '/hooks/jobflow/sync', body, undefined),
      post(checkout + '/hooks/jobflow/sync', body, undefined),
    ])
    t.equal(a.status, 401, 'the image: 401')
    t.equal(a.body.toString(), b.body.toString(), 'the same refusal as the checkout')
  })
  await t.test("the shipped scripts are the image's", async (t) => {
    await shippedScripts(t, container, image, checkout, token)
  })
  await t.test('SIGTERM drains a call in flight and exits 0 within the grace period', async (t) => {
    await sigterm(t, {
      name,
      container,
      url: image,
      checkout,
      token,
      grace: run.terminationGraceSeconds,
      ...(run.preStopCommand !== undefined ? { preStop: run.preStopCommand } : {}),
    })
  })
}

/** The token Secret's folder, as the kubelet mounts it: group 1000 (fsGroup) may read the file (0440). */
function tokenFolder (token: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobhooks-token-'))
  chmodSync(dir, 0o755)
  const file = join(dir, 'token')
  writeFileSync(file, token)
  try {
    chownSync(file, 0, 1000)
    chmodSync(file, 0o440)
  } catch {
    chmodSync(file, 0o444) // not root: readable by anyone instead
  }
  return dir
}

/** Only what the service reads: no KUBECONFIG, no KUBERNETES_SERVICE_HOST, no test runner's NODE_OPTIONS. */
function localEnv (port: number, tokenFile: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(port),
    HOST: '127.0.0.1',
    AUTH_TOKEN_FILE: tokenFile,
    LOG_LEVEL: 'info',
  }
}

function start (command: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(command === TOOL ? {} : { env }),
  })
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += String(chunk)
  })
  child.stderr?.on('data', (chunk) => {
    output += String(chunk)
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { output: () => output, exited, child }
}

async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** The status of `url` once it answers, polled for a minute; throws with the process's output if it exits first. */
async function ready (url: string, process: Started): Promise<number> {
  let exited = false
  void process.exited.then(() => {
    exited = true
  })
  for (let i = 0; i < 240; i++) {
    if (exited) throw new Error(`exited before it was ready:\n${process.output()}`)
    const answer = await get(url).catch(() => undefined)
    if (answer !== undefined) return answer.status
    await sleep(250)
  }
  throw new Error(`${url} did not answer within a minute:\n${process.output()}`)
}

async function get (url: string): Promise<Answer> {
  const response = await fetch(url)
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) }
}

async function post (url: string, body: Buffer, token: string | undefined, clock?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (token !== undefined) headers.authorization = `Bearer ${token}`
  if (clock !== undefined) headers['x-jobhooks-now'] = clock
  const response = await fetch(url, { method: 'POST', headers, body })
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) }
}

/** `<kind>/customize*.json` → /hooks/<kind>/customize, finalize likewise, the rest sync. */
function hookPath (file: string): string {
  const [kind, name = ''] = file.split('/')
  const hook = name.startsWith('customize') ? 'customize' : name.startsWith('finalize') ? 'finalize' : 'sync'
  return `/hooks/${kind}/${hook}`
}

async function inContainer (name: string, command: string[]): Promise<string> {
  return (await tool(['exec', name, ...command])).stdout.trim()
}

async function containerSettings (t: Test, name: string, env: Record<string, string>): Promise<void> {
  t.equal(await inContainer(name, ['id', '-u']), '1000', 'uid 1000')
  t.match(await inContainer(name, ['grep', 'CapEff', '/proc/1/status']), /CapEff:\s+0+$/, 'no capability')
  t.match(
    await inContainer(name, ['grep', 'NoNewPrivs', '/proc/1/status']),
    /NoNewPrivs:\s+1$/,
    'no privilege escalation'
  )
  await t.rejects(tool(['exec', name, 'touch', '/app/written']), 'the root filesystem is read-only')
  t.equal(
    await inContainer(name, ['sh', '-c', 'touch /tmp/written && echo ok']),
    'ok',
    '/tmp (an emptyDir) is writable'
  )
  t.equal(
    await inContainer(name, ['printenv', 'NODE_OPTIONS']),
    env.NODE_OPTIONS,
    `NODE_OPTIONS=${env.NODE_OPTIONS ?? ''}`
  )
  t.equal(
    await inContainer(name, ['sh', '-c', 'wc -c < "$AUTH_TOKEN_FILE"']),
    '64',
    'the token, mounted at AUTH_TOKEN_FILE'
  )
  await t.rejects(tool(['exec', name, 'sh', '-c', 'echo x > "$AUTH_TOKEN_FILE"']), 'read-only')
}

/** A JobFlow whose first flow runs `script`: the answer carries the script in a ConfigMap. */
function flowRunning (script: string): Buffer {
  const request = JSON.parse(readFileSync(join(FIXTURES, 'jobflow/sync-new.v2.json'), 'utf8')) as {
    parent: { spec: { flows: Array<Record<string, unknown>> } }
  }
  const first = request.parent.spec.flows[0]
  if (first === undefined) throw new Error('the fixture has no flow')
  first.script = { name: script }
  return Buffer.from(JSON.stringify(request))
}

async function shippedScripts (
  t: Test,
  container: Started,
  image: string,
  checkout: string,
  token: string
): Promise<void> {
  const shipped = readdirSync(join(ROOT, 'hooks'))
    .filter((f) => !f.endsWith('.md'))
    .sort()
  const loaded = container
    .output()
    .split('\n')
    .filter((line) => line.includes('"shipped scripts loaded"'))
    .map((line) => JSON.parse(line) as { scripts: string[]; hooksDir: string })[0]
  t.same(loaded?.scripts, shipped, `the image logs the scripts it loaded: ${shipped.join(', ')}`)
  t.equal(loaded?.hooksDir, '/app/hooks', 'from /app/hooks')
  for (const script of shipped) {
    const body = flowRunning(script)
    const [a, b] = await Promise.all([
      post(image + '/hooks/jobflow/sync', body, token, clocks['jobflow/sync-new.v2.json']),
      post(checkout + '/hooks/jobflow/sync', body, token, clocks['jobflow/sync-new.v2.json']),
    ])
    t.equal(a.status, 200, `a flow running ${script}: 200`)
    t.ok(a.body.equals(b.body), `${script}: the same answer as the checkout`)
    const configMaps = (
      JSON.parse(a.body.toString()) as { children: Array<{ kind: string; data?: Record<string, string> }> }
    ).children.filter((c) => c.kind === 'ConfigMap')
    t.ok(
      configMaps.some((c) => c.data?.[script] === readFileSync(join(ROOT, 'hooks', script), 'utf8')),
      `${script} rendered into a ConfigMap as hooks/${script} has it`
    )
  }
}

interface Shutdown {
  name: string
  container: Started
  url: string
  checkout: string
  token: string
  grace: number
  preStop?: string[]
}

/**
 * As the kubelet stops a pod: the preStop hook, then SIGTERM, with a call in flight that must
 * still be answered. The call goes through Node's default agent, which keeps its connection open
 * 5 s after the answer: the server exits once that connection closes.
 */
async function sigterm (t: Test, { name, container, url, checkout, token, grace, preStop }: Shutdown): Promise<void> {
  const body = readFileSync(join(FIXTURES, 'jobflow/sync-new.v2.json'))
  const clock = clocks['jobflow/sync-new.v2.json']
  const expected = await post(checkout + '/hooks/jobflow/sync', body, token, clock)
  const started = Date.now()
  const inFlight = slowPost(url + '/hooks/jobflow/sync', body, token, clock ?? '')
  if (preStop !== undefined) await tool(['exec', name, ...preStop], grace * 1000)
  const signalled = Date.now()
  await tool(['kill', '--signal', 'TERM', name])
  await sleep(500)
  inFlight.finish()
  const answer = await inFlight.answer
  t.equal(answer.status, 200, 'the call in flight at SIGTERM is answered')
  t.ok(answer.body.equals(expected.body), 'with the same answer as the checkout')
  const code = await Promise.race([
    container.exited,
    sleep(grace * 1000 - (Date.now() - started)).then(() => 'still running'),
  ])
  const seconds = (Date.now() - started) / 1000
  t.comment(
    `preStop ${((signalled - started) / 1000).toFixed(1)} s, ` +
      `SIGTERM to exit ${((Date.now() - signalled) / 1000).toFixed(1)} s ` +
      '(the call in flight finished 0.5 s after SIGTERM)'
  )
  t.equal(
    code,
    0,
    `exit code 0 after ${seconds.toFixed(1)} s ` +
      `(${preStop !== undefined ? `preStop ${preStop.join(' ')}, then SIGTERM` : 'SIGTERM'}), ` +
      `within terminationGracePeriodSeconds ${grace}`
  )
  t.match(container.output(), /"msg":"stopped"/, 'it logged that it stopped')
}

/** A POST whose body is sent in two halves: the first now, the rest on finish(). */
function slowPost (
  url: string,
  body: Buffer,
  token: string,
  clock: string
): { finish: () => void; answer: Promise<Answer> } {
  const half = Math.floor(body.length / 2)
  const req = request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': body.length,
      authorization: `Bearer ${token}`,
      'x-jobhooks-now': clock,
    },
  })
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
  })
  req.write(body.subarray(0, half))
  return { finish: () => req.end(body.subarray(half)), answer }
}
