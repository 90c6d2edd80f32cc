// The one API client (src/kube/client.ts) against the one fake API server: one timeout per call,
// reads retried and writes never, Retry-After honoured, kubectl's --as and --as-group headers,
// the kubeconfig's exec credential plugin and proxy-url, and errors worded as kubectl's.
import t, { type Test } from 'tap'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { connect as netConnect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiClient, RETRY_POLICY, retryDelay, retriable, type ApiClientOptions } from '../../src/kube/client.js'
import { ConnectionError, KubeError, errorCode } from '../../src/kube/errors.js'
import { loadKubeconfig } from '../../src/kube/kubeconfig.js'
import {
  FAKE_TOKEN, failure, fakeApiServer, kubeconfigFor, listenUntilTeardown, type KubeconfigExtras
} from '../helpers/fake-api-server.js'
import { authority } from '../helpers/certificates.js'

const FAST = { retries: 2, baseDelayMs: 20, maxDelayMs: 1000 }

async function clientFor (
  t: Test, server: string, options: Partial<ApiClientOptions> = {}, extras: KubeconfigExtras = {}
): Promise<ApiClient> {
  // A directory of its own: the test's t.testdir() keeps what the test put there.
  const dir = mkdtempSync(join(tmpdir(), 'kube-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const kubeconfig = kubeconfigFor(dir, server, extras)
  const defaults = { timeoutMs: 2000, userAgent: 'test', retry: FAST }
  return await ApiClient.connect({ kubeconfig, env: {} }, { ...defaults, ...options })
}

t.test('a request carries the kubeconfig token, the content type asked for and the body; any status comes back',
  async t => {
    const fake = await fakeApiServer(t, () => ({ status: 422, body: failure(422, 'no') }))
    const client = await clientFor(t, fake.url)
    const path = '/api/v1/namespaces/a/pods/p'
    const body = { metadata: { uid: 'u' } }
    const contentType = 'application/strategic-merge-patch+json'
    const answer = await client.send({ method: 'PATCH', path, contentType, body })
    t.equal(answer.statusCode, 422)
    t.same(JSON.parse(answer.body), failure(422, 'no'))
    const [seen] = fake.requests
    t.equal(seen?.headers.authorization, `Bearer ${FAKE_TOKEN}`)
    t.equal(seen?.headers['content-type'], 'application/strategic-merge-patch+json')
    t.equal(seen?.headers['user-agent'], 'test')
    t.same(JSON.parse(seen?.body ?? ''), body)
  })

t.test('the timeout bounds a call; the caller\'s signal ends it with its own reason', async t => {
  const fake = await fakeApiServer(t, () => 'hang')
  const client = await clientFor(t, fake.url, { timeoutMs: 200 })
  const started = Date.now()
  const error = await client.get('/api/v1/pods').catch((e: unknown) => e)
  t.ok(Date.now() - started < 1500, 'gives up on time')
  t.ok(error instanceof ConnectionError)
  t.equal((error as ConnectionError).code, 'TIMEOUT')
  const host = new URL(fake.url).host
  t.equal((error as Error).message, `Unable to connect to the server: ${host} gave no answer within 0.2 s`)
  t.equal(fake.requests.length, 1, 'a timeout is not retried')
  const abort = new AbortController()
  setTimeout(() => abort.abort(new Error('the budget is spent')), 50)
  const slow = await clientFor(t, fake.url, { timeoutMs: 5000 })
  await t.rejects(slow.send({ method: 'GET', path: '/api/v1/pods', signal: abort.signal }), /the budget is spent/)
})

t.test('a read is retried on 429 and 5xx, a bounded number of times, after Retry-After', async t => {
  let refusals = 2
  const fake = await fakeApiServer(t, () => refusals-- > 0
    ? { status: 503, body: failure(503, 'etcd is slow'), headers: { 'retry-after': '0.3' } }
    : { status: 200, body: { kind: 'Pod' } })
  const client = await clientFor(t, fake.url)
  const started = Date.now()
  t.same(await client.get('/api/v1/namespaces/a/pods/p'), { kind: 'Pod' })
  t.equal(fake.requests.length, 3, 'two retries')
  t.ok(Date.now() - started >= 550, 'each after the Retry-After asked for')

  const always = await fakeApiServer(t, () => ({ status: 429, body: failure(429, 'slow down', 'TooManyRequests') }))
  const bounded = await clientFor(t, always.url)
  await t.rejects(bounded.get('/api/v1/pods'), { message: 'Error from server (TooManyRequests): slow down' })
  t.equal(always.requests.length, 1 + FAST.retries, 'at most `retries` times again')

  const notImplemented = await fakeApiServer(t, () => ({ status: 501, body: failure(501, 'no') }))
  await (await clientFor(t, notImplemented.url)).send({ method: 'GET', path: '/x' })
  t.equal(notImplemented.requests.length, 1, '501 is no passing trouble')

  const later = await fakeApiServer(t, () => ({ status: 503, body: {}, headers: { 'retry-after': '60' } }))
  const patient = await clientFor(t, later.url, { timeoutMs: 3000, retry: { ...FAST, maxDelayMs: 60_000 } })
  const answer = await patient.send({ method: 'GET', path: '/x' })
  t.equal(answer.statusCode, 503, 'a Retry-After past the timeout: the answer as it is, at once')
  t.equal(later.requests.length, 1)
})

t.test('a write is never sent twice: not on 503, not on a reset connection', async t => {
  const fake = await fakeApiServer(t, () => ({ status: 503, body: failure(503, 'etcd is slow') }))
  const client = await clientFor(t, fake.url)
  for (const method of ['POST', 'PATCH', 'DELETE', 'PUT'] as const) {
    t.equal((await client.send({ method, path: '/x', body: {} })).statusCode, 503)
  }
  t.equal(fake.requests.length, 4)

  // The first request of each kind has its connection cut: a read tries again, a write does not.
  const cut = await fakeApiServer(t, (seen, res) => {
    if (cut.requests.filter(r => r.method === seen.method).length === 1) {
      res.socket?.destroy()
      return 'handled'
    }
    return { status: 200, body: { ok: true } }
  })
  const resets = await clientFor(t, cut.url)
  t.same(await resets.get('/x'), { ok: true }, 'the read came through the second time')
  const error = await resets.create('/x', {}).catch((e: unknown) => e)
  t.ok(error instanceof ConnectionError, 'the write fails')
  t.match((error as Error).message, /^Unable to connect to the server: /)
  t.same(cut.requests.map(r => r.method), ['GET', 'GET', 'POST'])
})

t.test('--as and --as-group are impersonation headers; --as replaces the kubeconfig\'s `as`', async t => {
  const fake = await fakeApiServer(t)
  const client = await clientFor(t, fake.url, { impersonate: { user: 'jane', groups: ['dev', 'ops'] } },
    { user: { token: FAKE_TOKEN, as: 'from-kubeconfig' } })
  await client.get('/api/v1/pods')
  const [seen] = fake.requests
  t.same(seen?.headersDistinct['impersonate-user'], ['jane'])
  t.same(seen?.headersDistinct['impersonate-group'], ['dev', 'ops'], 'one header per group')
  t.equal(seen?.headers.authorization, `Bearer ${FAKE_TOKEN}`, 'the credentials stay the kubeconfig\'s')

  const asInKubeconfig = await clientFor(t, fake.url, {}, { user: { token: FAKE_TOKEN, as: 'from-kubeconfig' } })
  await asInKubeconfig.get('/api/v1/pods')
  t.same(fake.requests[1]?.headersDistinct['impersonate-user'], ['from-kubeconfig'])
  t.equal(fake.requests[1]?.headers['impersonate-group'], undefined)
})

t.test('an exec credential plugin gives the token, run again once its credential expires', async t => {
  const dir = t.testdir({})
  const count = join(dir, 'count')
  writeFileSync(count, '0')
  const script = join(dir, 'credential.mjs')
  // A credential plugin as client-go runs them: an ExecCredential on standard output.
  writeFileSync(script, `import { readFileSync, writeFileSync } from 'node:fs'
const n = Number(readFileSync(${JSON.stringify(count)}, 'utf8')) + 1
writeFileSync(${JSON.stringify(count)}, String(n))
const expiry = process.env.EXPIRES === 'past' ? new Date(Date.now() - 1000) : new Date(Date.now() + 3600000)
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',
  status: { token: 'exec-token-' + n, expirationTimestamp: expiry.toISOString() } }))
`)
  chmodSync(script, 0o755)
  const exec = (expires: string): KubeconfigExtras => ({
    user: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: [script],
        env: [{ name: 'EXPIRES', value: expires }],
        interactiveMode: 'Never'
      }
    }
  })
  const fake = await fakeApiServer(t)
  const expiring = await clientFor(t, fake.url, {}, exec('past'))
  await expiring.get('/a')
  await expiring.get('/b')
  t.same(fake.requests.map(r => r.headers.authorization), ['Bearer exec-token-1', 'Bearer exec-token-2'],
    'an expired credential is asked for again')
  const lasting = await clientFor(t, fake.url, {}, exec('future'))
  await lasting.get('/c')
  await lasting.get('/d')
  t.same(fake.requests.slice(2).map(r => r.headers.authorization), ['Bearer exec-token-3', 'Bearer exec-token-3'],
    'a valid one is kept')
  t.equal(readFileSync(count, 'utf8'), '3')

  const exit3 = { ...exec('x').user?.exec as object, args: ['-e', 'process.exit(3)'] }
  const failing = await clientFor(t, fake.url, {}, { user: { exec: exit3 } })
  await t.rejects(failing.get('/e'), { message: /^error: getting credentials/ }, 'a plugin that fails says so')
  t.equal(fake.requests.length, 4, 'and sends nothing')
})

/**
 * A CONNECT proxy on 127.0.0.1 that tunnels every request to `port` there, whatever host it names
 * (a name the machine cannot resolve reaches the fake only so), recording the targets asked for.
 */
async function tunnelProxy (t: Test, port: number): Promise<{ url: string, tunnels: string[] }> {
  const tunnels: string[] = []
  const proxy = createServer()
  proxy.on('connect', (req, socket) => {
    tunnels.push(req.url ?? '')
    const upstream = netConnect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.pipe(socket)
      socket.pipe(upstream)
    })
    socket.on('error', () => upstream.destroy())
    upstream.on('error', () => socket.destroy())
  })
  return { url: await listenUntilTeardown(t, proxy), tunnels }
}

t.test('the cluster\'s proxy-url carries the requests (client-node 1.4 tunnels them with CONNECT)', async t => {
  const fake = await fakeApiServer(t)
  const proxy = await tunnelProxy(t, Number(new URL(fake.url).port))
  const client = await clientFor(t, fake.url, {}, { cluster: { 'proxy-url': proxy.url } })
  t.same(await client.get('/api/v1/namespaces/a/pods/p'), {})
  t.same(proxy.tunnels, [new URL(fake.url).host], 'through the proxy')
  t.equal(fake.requests[0]?.headers.authorization, `Bearer ${FAKE_TOKEN}`)
})

t.test('HTTPS_PROXY / HTTP_PROXY carry the requests when the kubeconfig names no proxy, as kubectl\'s', async t => {
  const fake = await fakeApiServer(t)
  const port = new URL(fake.url).port
  const proxy = await tunnelProxy(t, Number(port))
  const client = await clientFor(t, `http://api.cluster.invalid:${port}`, { env: { HTTP_PROXY: proxy.url } })
  t.same(await client.get('/api/v1/namespaces/a/pods/p'), {})
  t.same(proxy.tunnels, [`api.cluster.invalid:${port}`], 'through the proxy, by the server\'s name')
  const direct = await clientFor(t, fake.url, { env: { HTTP_PROXY: proxy.url } })
  t.same(await direct.get('/api/v1/namespaces/a/pods/q'), {})
  t.equal(proxy.tunnels.length, 1, 'a loopback server is reached directly')
})

t.test('errors read as kubectl\'s', async t => {
  const fake = await fakeApiServer(t, seen => seen.url.includes('missing')
    ? { status: 404, body: failure(404, 'jobflows.jobhooks.io "missing" not found', 'NotFound') }
    : seen.url.includes('forbidden')
      ? { status: 403, body: failure(403, 'jobflows.jobhooks.io is forbidden') }
      : seen.url.includes('text')
        ? { status: 200, body: 'not json' }
        : { status: 500, body: 'a proxy\'s page' })
  const client = await clientFor(t, fake.url, { retry: { ...FAST, retries: 0 } })
  const missing = await client.get('/apis/jobhooks.io/v1alpha1/namespaces/a/jobflows/missing').catch((e: unknown) => e)
  t.ok(missing instanceof KubeError)
  t.equal((missing as Error).message, 'Error from server (NotFound): jobflows.jobhooks.io "missing" not found')
  t.equal(errorCode(missing), 404)
  await t.rejects(client.get('/forbidden'),
    { message: 'Error from server (Forbidden): jobflows.jobhooks.io is forbidden' },
    'a Status without a reason: the reason of its code')
  await t.rejects(client.get('/other'), { message: 'Error from server (InternalError): a proxy\'s page' })
  await t.rejects(client.get('/text'), { message: 'error: the answer to GET /text is not a JSON object' })
  const refused = await clientFor(t, 'http://127.0.0.1:1')
  await t.rejects(refused.get('/x'), {
    message: 'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?',
    code: 'ECONNREFUSED'
  })
})

t.test('a stream: the answer once it starts, kept open past the timeout; an error status read as kubectl\'s',
  async t => {
    const fake = await fakeApiServer(t, (seen, res) => {
      if (seen.url.includes('missing')) return { status: 404, body: failure(404, 'pods "missing" not found') }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"type":"ADDED"}\n')
      setTimeout(() => res.end('{"type":"MODIFIED"}\n'), 400)
      return 'handled'
    })
    const client = await clientFor(t, fake.url, { timeoutMs: 200 })
    const stream = await client.stream('/api/v1/pods?watch=1')
    let text = ''
    for await (const chunk of stream) text += String(chunk)
    t.equal(text, '{"type":"ADDED"}\n{"type":"MODIFIED"}\n', 'read to its end, past the 200 ms timeout')
    await t.rejects(client.stream('/api/v1/pods/missing'),
      { message: 'Error from server (NotFound): pods "missing" not found' })
    const abort = new AbortController()
    const hanging = await fakeApiServer(t, () => 'hang')
    const silent = await clientFor(t, hanging.url, { timeoutMs: 200 })
    await t.rejects(silent.stream('/w', abort.signal), { code: 'TIMEOUT' }, 'a stream that never starts times out')
  })

t.test('the retry policy, alone', async t => {
  t.same(RETRY_POLICY, { retries: 2, baseDelayMs: 250, maxDelayMs: 5000 })
  t.equal(retryDelay(1, undefined, RETRY_POLICY), 250)
  t.equal(retryDelay(2, undefined, RETRY_POLICY), 500)
  t.equal(retryDelay(1, '2', RETRY_POLICY), 2000, 'Retry-After in seconds')
  t.equal(retryDelay(1, '120', RETRY_POLICY), 5000, 'never longer than maxDelayMs')
  const now = Date.parse('2026-01-02T03:04:05Z')
  t.equal(retryDelay(1, 'Fri, 02 Jan 2026 03:04:06 GMT', RETRY_POLICY, now), 1000, 'Retry-After as a date')
  t.equal(retryDelay(1, 'soon', RETRY_POLICY), 250, 'one that cannot be read is ignored')
  t.ok(retriable(429) && retriable(500) && retriable(503) && retriable(504))
  t.notOk(retriable(501) || retriable(404) || retriable(409) || retriable(200))
  t.ok(retriable(undefined, Object.assign(new Error('x'), { code: 'ECONNRESET' })))
  t.notOk(retriable(undefined, new Error('a credential plugin failed')))
})

t.test('a client for the current context of a loaded kubeconfig knows its namespace', async t => {
  const file = kubeconfigFor(t.testdir({}), 'http://127.0.0.1:6443', 'team-a')
  const loaded = await loadKubeconfig({ kubeconfig: file })
  const client = await ApiClient.connect({ kubeconfig: file }, { timeoutMs: 1000, userAgent: 'test' })
  t.equal(client.contextNamespace, 'team-a')
  t.equal(client.server.href, 'http://127.0.0.1:6443/')
  t.equal(loaded.source, file)
})

t.test('TLS as the kubeconfig says: the CA file (relative to the kubeconfig), else no trust', async t => {
  const ca = authority('cluster CA')
  const fake = await fakeApiServer(t, undefined, ca.issue('127.0.0.1', 'server'))
  const dir = mkdtempSync(join(tmpdir(), 'kube-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'ca.pem'), ca.cert)
  const options = { timeoutMs: 2000, userAgent: 'test', retry: FAST }
  const trusting = kubeconfigFor(dir, fake.url, {
    file: 'trusting', cluster: { 'insecure-skip-tls-verify': false, 'certificate-authority': 'ca.pem' }
  })
  const client = await ApiClient.connect({ kubeconfig: trusting }, options)
  t.same(await client.get('/api/v1/pods'), {}, 'the server is trusted through the CA file')
  t.equal(fake.requests[0]?.headers.authorization, `Bearer ${FAKE_TOKEN}`)
  const wary = kubeconfigFor(dir, fake.url, { file: 'wary', cluster: { 'insecure-skip-tls-verify': false } })
  await t.rejects((await ApiClient.connect({ kubeconfig: wary }, options)).get('/api/v1/pods'),
    { message: /^Unable to connect to the server: .*(certificate|self.signed)/ }, 'an unknown CA is refused')
  const skipping = kubeconfigFor(dir, fake.url, { file: 'skipping' })
  t.same(await (await ApiClient.connect({ kubeconfig: skipping }, options)).get('/api/v1/pods'), {},
    'insecure-skip-tls-verify trusts any certificate')
})
