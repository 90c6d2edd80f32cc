import t, { type Test } from 'tap'
import { EventEmitter } from 'node:events'
import { Agent, request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { Writable } from 'node:stream'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '../src/server.js'
import { readConfig } from '../src/config.js'
import { fixture } from './helpers/fixtures.js'
import { authority } from './helpers/certificates.js'

t.test('SIGTERM lets the hook in flight finish, then closes', async t => {
  const signals = new EventEmitter()
  // A grace period the test outlives: a server still open at its end rejects `closed`.
  const config = { ...readConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent', shutdownGraceMs: 10_000 }
  const running = await startServer(config, signals, {})
  t.teardown(async () => {
    await running.app.close()
  })
  const { port } = running.app.server.address() as AddressInfo
  // A client that keeps idle connections for ever, as Metacontroller's Go client keeps them 90 s.
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())

  const body = JSON.stringify(fixture('jobflow/sync-new.v2.json'))
  const answer = new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        agent,
        method: 'POST',
        path: '/hooks/jobflow/sync',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
      },
      res => {
        let text = ''
        res.on('data', chunk => {
          text += String(chunk)
        })
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text,
            ...(res.headers.connection !== undefined ? { connection: res.headers.connection } : {})
          })
        )
      }
    )
    req.on('error', reject)
    // Half the body now: the request is in flight when the signal comes. The signal waits for the
    // server to have routed it (a fixed sleep lost that race on a busy machine: 503 for a late request).
    running.app.server.once('request', () => {
      signals.emit('SIGTERM')
      setImmediate(() => req.end(body.slice(100)))
    })
    req.write(body.slice(0, 100))
  })
  const { status, body: text, connection } = await answer
  t.equal(status, 200)
  t.equal(JSON.parse(text).status.phase, 'Pending')
  t.equal(connection, 'close', 'the answer closes its connection: no idle one keeps the server open')
  await running.closed
  t.equal(running.app.server.listening, false, 'no longer listening')
})

t.test('settings come from the environment', async t => {
  const config = readConfig({
    PORT: '9090',
    BODY_LIMIT_BYTES: '1000',
    HOOKS_DIR: '/x',
    SHUTDOWN_GRACE_MS: '5',
    LOG_LEVEL: 'debug',
    HOST: '127.0.0.1',
    EFFECTS_CONCURRENCY: '3',
    EFFECTS_BUDGET_MS: '2500',
    WAIT_BUDGET_MS: '4000',
    HOOK_THREAD: '0',
    HOOK_DEADLINE_MS: '7000'
  })
  t.same(config, {
    port: 9090,
    host: '127.0.0.1',
    logLevel: 'debug',
    bodyLimit: 1000,
    waitBudgetMs: 4000,
    hookThread: false,
    hookDeadlineMs: 7000,
    hooksDir: '/x',
    shutdownGraceMs: 5,
    effectsConcurrency: 3,
    effectsBudgetMs: 2500,
    auth: 'required',
    credentialsReloadMs: 10_000
  })
  t.same(readConfig({ AUTH: 'none', AUTH_TOKEN_FILE: '', CREDENTIALS_RELOAD_MS: '500' }), {
    ...readConfig({}),
    auth: 'none',
    credentialsReloadMs: 500
  })
  t.match(readConfig({ AUTH_TOKEN_FILE: '/t', TLS_CERT_FILE: '/c', TLS_KEY_FILE: '/k', TLS_CLIENT_CA_FILE: '/ca' }), {
    authTokenFile: '/t',
    tlsCertFile: '/c',
    tlsKeyFile: '/k',
    tlsClientCaFile: '/ca'
  })
  t.throws(() => readConfig({ AUTH: 'off' }), /AUTH may only be "none"/)
  t.throws(() => readConfig({ TLS_CERT_FILE: '/c' }), /TLS_CERT_FILE and TLS_KEY_FILE go together/)
  t.throws(() => readConfig({ TLS_CLIENT_CA_FILE: '/ca' }), /TLS_CLIENT_CA_FILE \(mutual TLS\) needs HTTPS/)
  t.equal(readConfig({}).effectsConcurrency, 8)
  t.equal(readConfig({}).effectsBudgetMs, 5000)
  t.equal(readConfig({}).waitBudgetMs, 5000, 'half of Metacontroller\'s 10 s timeout')
  t.throws(() => readConfig({ WAIT_BUDGET_MS: '0' }), /WAIT_BUDGET_MS must be at least 1/)
  t.throws(() => readConfig({ EFFECTS_CONCURRENCY: '0' }), /EFFECTS_CONCURRENCY must be at least 1/)
  t.throws(() => readConfig({ PORT: 'eighty' }), /PORT must be a whole number/)
  t.equal(readConfig({}).port, 8080)
  t.equal(readConfig({}).host, '127.0.0.1', 'outside a cluster only this machine may call')
  t.equal(
    readConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }).host,
    '0.0.0.0',
    'in a cluster the Service and the probes reach the pod by its IP'
  )
  t.equal(readConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1', HOST: '127.0.0.1' }).host, '127.0.0.1', 'HOST wins')
  t.equal(readConfig({}).bodyLimit, 256 * 1024 * 1024)
  t.equal(readConfig({ OBJECT_MEMO_BYTES: '0' }).objectMemoBytes, 0, 'the memo may be turned off')
  t.equal(readConfig({}).objectMemoBytes, undefined, 'by default it follows the heap limit')
})

t.test('OBJECT_MEMO_BYTES sizes the memo of built objects the server keeps', async t => {
  const config = { ...readConfig({ OBJECT_MEMO_BYTES: '12345' }), host: '127.0.0.1', port: 0, logLevel: 'silent' }
  const running = await startServer(config, new EventEmitter(), {})
  t.teardown(async () => {
    await running.app.close()
  })
  // The memo is the hook thread's (src/thread/hook-thread.ts); the metrics report it.
  const metrics = await running.app.inject('/metrics')
  t.match(metrics.body, /^jobhooks_object_memo_limit_bytes 12345$/m)
  t.equal(readConfig({}).hookThread, true, 'hooks run on a thread of their own by default')
})

/** A folder of its own (t.testdir is one per test, and reset by each call). */
function scratch (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'jobhooks-server-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A kubeconfig with a cluster and a user: what makes the service apply effects. */
function kubeconfigFile (t: Test): string {
  const kubeconfig = join(scratch(t), 'kubeconfig')
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c'
    })
  )
  return kubeconfig
}

const TOKEN = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0'

/** Starts the server with `settings` (environment variables), silent, on a free port of 127.0.0.1. */
async function start (t: Test, settings: Record<string, string>, env: NodeJS.ProcessEnv = {}, logs?: string[]) {
  const config = {
    ...readConfig(settings),
    host: '127.0.0.1',
    port: 0,
    logLevel: logs !== undefined ? 'info' : 'silent'
  }
  const running = await startServer(
    config,
    new EventEmitter(),
    env,
    logs !== undefined
      ? new Writable({
        write (chunk, _e, done) {
          logs.push(String(chunk))
          done()
        }
      })
      : undefined
  )
  t.teardown(async () => {
    await running.app.close()
  })
  return { running, port: (running.app.server.address() as AddressInfo).port }
}

t.test(
  'start-up without cluster credentials records effects (dry-run) and says so once; with KUBECONFIG applies them',
  async t => {
    const logs: string[] = []
    const { running: dryRun } = await start(t, {}, {}, logs)
    t.equal(dryRun.app.effects.mode, 'dry-run')
    t.equal(logs.filter(l => l.includes('dry-run')).length, 1, 'the start-up log says dry-run once')
    const { running: cluster } = await start(t, { AUTH_TOKEN_FILE: tokenFile(t) }, { KUBECONFIG: kubeconfigFile(t) })
    t.equal(cluster.app.effects.mode, 'cluster')
  }
)

t.test('safe by default: with cluster credentials and no credential check the service does not start', async t => {
  const config = { ...readConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent' }
  await t.rejects(
    startServer(config, new EventEmitter(), { KUBECONFIG: kubeconfigFile(t) }),
    /^refusing to start: with cluster credentials/
  )
  const logs: string[] = []
  const { running, port } = await start(t, { AUTH: 'none' }, { KUBECONFIG: kubeconfigFile(t) }, logs)
  t.equal(running.app.effects.mode, 'cluster')
  t.ok(
    logs.some(l => /"level":40.*AUTH=none: anything that reaches this service can make it apply effects/.test(l)),
    'AUTH=none on purpose starts, with a warning'
  )
  t.equal(
    (await call({ port, path: '/hooks/jobflow/sync', body: fixture('jobflow/sync-new.v2.json') })).status,
    200,
    'and serves without a check'
  )
})

t.test('with AUTH_TOKEN_FILE, hooks need the token over the wire; a rotated token works without a restart', async t => {
  const file = tokenFile(t)
  const { port } = await start(
    t,
    { AUTH_TOKEN_FILE: file, CREDENTIALS_RELOAD_MS: '50' },
    { KUBECONFIG: kubeconfigFile(t) }
  )
  const body = fixture('jobflow/sync-new.v2.json')
  t.equal((await call({ port, path: '/hooks/jobflow/sync', body })).status, 401)
  t.equal((await call({ port, path: '/hooks/jobflow/sync', body, token: TOKEN })).status, 200)
  t.equal((await call({ port, path: '/healthz' })).status, 200)
  const rotated = TOKEN.replace(/0/g, 'a')
  writeFileSync(file, rotated)
  const deadline = Date.now() + 5_000
  while ((await call({ port, path: '/hooks/jobflow/sync', body, token: rotated })).status !== 200) {
    if (Date.now() > deadline) throw new Error('the rotated token never worked')
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.equal(
    (await call({ port, path: '/hooks/jobflow/sync', body, token: TOKEN })).status,
    401,
    'the old token stopped working'
  )
})

t.test('HTTPS, and mutual TLS: a hook call needs a client certificate of the trusted CA; probes need none', async t => {
  const ca = authority('jobhooks test CA')
  const other = authority('another CA')
  const server = ca.issue('jobhooks.jobhooks-system.svc', 'server')
  const dir = scratch(t)
  const files = {
    TLS_CERT_FILE: join(dir, 'tls.crt'),
    TLS_KEY_FILE: join(dir, 'tls.key'),
    TLS_CLIENT_CA_FILE: join(dir, 'ca.crt')
  }
  writeFileSync(files.TLS_CERT_FILE, server.cert)
  writeFileSync(files.TLS_KEY_FILE, server.key)
  writeFileSync(files.TLS_CLIENT_CA_FILE, ca.cert)
  const { port } = await start(t, { ...files, CREDENTIALS_RELOAD_MS: '50' }, { KUBECONFIG: kubeconfigFile(t) })
  const body = fixture('jobflow/sync-new.v2.json')
  const tls = { ca: ca.cert }
  t.equal(
    (await call({ port, path: '/healthz', tls })).status,
    200,
    "the kubelet's probe, without a client certificate"
  )
  t.equal((await call({ port, path: '/hooks/jobflow/sync', body, tls })).status, 401, 'a hook call without one')
  t.equal(
    (
      await call({
        port,
        path: '/hooks/jobflow/sync',
        body,
        tls: { ...tls, ...other.issue('metacontroller', 'client') }
      })
    ).status,
    401,
    'with one of another CA'
  )
  const metacontroller = ca.issue('metacontroller', 'client')
  t.equal(
    (await call({ port, path: '/hooks/jobflow/sync', body, tls: { ...tls, ...metacontroller } })).status,
    200,
    'with one the CA signed'
  )

  // A renewed server certificate (cert-manager writes the Secret again) is served without a restart.
  const renewed = ca.issue('jobhooks renewed', 'server')
  writeFileSync(files.TLS_CERT_FILE, renewed.cert)
  writeFileSync(files.TLS_KEY_FILE, renewed.key)
  const deadline = Date.now() + 5_000
  while ((await call({ port, path: '/healthz', tls })).peer !== 'jobhooks renewed') {
    if (Date.now() > deadline) throw new Error('the renewed certificate was never served')
    await new Promise(resolve => setTimeout(resolve, 25))
  }
  t.pass('the renewed certificate is served')
})

t.test('TLS files that cannot be used stop the start', async t => {
  const dir = t.testdir({ 'tls.crt': 'not a certificate', 'tls.key': 'not a key' })
  const config = {
    ...readConfig({ TLS_CERT_FILE: join(dir, 'tls.crt'), TLS_KEY_FILE: join(dir, 'tls.key') }),
    host: '127.0.0.1',
    port: 0,
    logLevel: 'silent'
  }
  await t.rejects(startServer(config, new EventEmitter(), {}), /PEM|certificate|key/i)
})

function tokenFile (t: Test): string {
  const file = join(scratch(t), 'token')
  writeFileSync(file, `${TOKEN}\n`)
  return file
}

/** One request over the wire; the answer's status and, over TLS, the common name of the server's certificate. */
async function call (options: {
  port: number
  path: string
  body?: unknown
  token?: string
  tls?: { ca: string; cert?: string; key?: string }
}): Promise<{ status: number; peer?: string }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  const headers: Record<string, string> = {
    ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {})
  }
  const send = options.tls !== undefined ? httpsRequest : httpRequest
  return await new Promise((resolve, reject) => {
    const req = send(
      {
        host: '127.0.0.1',
        port: options.port,
        method: payload === undefined ? 'GET' : 'POST',
        path: options.path,
        headers,
        agent: false,
        ...(options.tls ?? {})
      },
      res => {
        const peer =
          'getPeerCertificate' in res.socket
            ? String((res.socket as TLSSocket).getPeerCertificate().subject?.CN)
            : undefined
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ...(peer !== undefined ? { peer } : {}) }))
      }
    )
    req.on('error', reject)
    req.end(payload)
  })
}
