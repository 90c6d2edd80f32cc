// Shutdown over a real socket: every call accepted before SIGTERM gets its whole answer, a call
// arriving after it gets 503 before any byte of an answer, and `closed` (after which the process
// exits) resolves only once those answers are written. The answers are large and read slowly, so
// that most of each is still in the server's hands when the signal comes.
import t, { type Test } from 'tap'
import { EventEmitter } from 'node:events'
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startServer, type Running } from '../src/server.js'
import { readConfig } from '../src/config.js'
import { fixture } from './helpers/fixtures.js'

const containers = [{
  name: 'main',
  image: 'busybox:1.36',
  command: ['sh', '-c', 'work'],
  args: ['--input', 'gs://datasets/input/part', '--output', 'gs://datasets/output/part']
}]

/** A new JobFlow of one step over `items` items, all started at once: an answer of ~900 bytes an item. */
function fanOut (items: number): string {
  const request = fixture<{ parent: { spec: Record<string, unknown> } }>('jobflow/sync-new.v2.json')
  request.parent.spec.flows = [{
    name: 'process',
    jobTemplate: { template: { spec: { containers } } },
    forEach: Array.from({ length: items }, (_, i) => `shard-${i}`),
    parallelism: items
  }]
  return JSON.stringify(request)
}

/** Posts a JobFlow sync; resolves with the response as soon as its head has come, its body unread. */
async function post (port: number, agent: Agent, body: string): Promise<IncomingMessage> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      agent,
      method: 'POST',
      path: '/hooks/jobflow/sync',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    }, response => {
      response.pause()
      resolve(response)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Reads the rest of a response; rejects when its connection is cut first. */
async function readAll (response: IncomingMessage): Promise<Buffer> {
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    response.on('data', (chunk: Buffer) => chunks.push(chunk))
    response.on('end', () => resolve(Buffer.concat(chunks)))
    response.on('aborted', () => reject(new Error('answer cut')))
    response.on('error', reject)
    response.resume()
  })
}

async function start (t: Test, signals: EventEmitter): Promise<{ running: Running, port: number }> {
  // A grace period the test outlives: only the answers in flight may hold the close.
  const config = { ...readConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent', shutdownGraceMs: 100_000 }
  const running = await startServer(config, signals, {})
  t.teardown(async () => { await running.app.close() })
  const { port } = running.app.server.address() as AddressInfo
  return { running, port }
}

/** A call after the signal: 503 and fastify's short message, no hook answer. */
async function lateCall (t: Test, port: number): Promise<void> {
  const agent = new Agent({ keepAlive: false })
  t.teardown(() => agent.destroy())
  const late = await post(port, agent, fanOut(1))
  t.equal(late.statusCode, 503, 'a call after SIGTERM is answered 503')
  t.same(JSON.parse((await readAll(late)).toString('utf8')), {
    error: 'Service Unavailable', message: 'Service Unavailable', statusCode: 503
  })
}

t.test('SIGTERM while an 8 MiB answer is read slowly: it arrives whole, then the server closes', async t => {
  const signals = new EventEmitter()
  const { running, port } = await start(t, signals)
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const response = await post(port, agent, fanOut(10_000))
  const size = Number(response.headers['content-length'])
  t.ok(size > 8 * 1024 * 1024, 'an answer of more than 8 MiB')
  let closed = false
  void running.closed.then(() => { closed = true })
  signals.emit('SIGTERM')
  // The server still listens while the answer is unread: a new call is refused, not served.
  await lateCall(t, port)
  // More of the answer than the sockets' buffers hold is still to write: closing waits for it.
  t.equal(closed, false, 'not closed while the answer is being written')
  const body = await readAll(response)
  t.equal(response.statusCode, 200)
  t.equal(body.length, size, 'every byte of the answer')
  t.equal(JSON.parse(body.toString('utf8')).status.phase, 'Pending')
  t.not(response.headers.connection, 'close', 'its head was sent before the signal')
  await running.closed
  t.equal(running.app.server.listening, false)
})

t.test('SIGTERM in a burst: every call accepted before it is answered whole', async t => {
  const signals = new EventEmitter()
  const { running, port } = await start(t, signals)
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const calls = 5
  // Signalled once the server has taken every call in: some are answered, some still run their hook.
  let accepted = 0
  running.app.server.on('request', () => { if (++accepted === calls) signals.emit('SIGTERM') })
  const body = fanOut(6_000)
  const responses = await Promise.all(Array.from({ length: calls }, async () => await post(port, agent, body)))
  const answers = await Promise.all(responses.map(readAll))
  t.same(responses.map(r => r.statusCode), Array(calls).fill(200), 'no call accepted before the signal is refused')
  t.same(
    answers.map((a, i) => a.length === Number(responses[i]?.headers['content-length'])),
    Array(calls).fill(true),
    'every answer whole'
  )
  t.same(answers.map(a => JSON.parse(a.toString('utf8')).status.phase), Array(calls).fill('Pending'))
  await running.closed
  t.equal(running.app.server.listening, false)
})
