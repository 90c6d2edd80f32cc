import t from 'tap'
import { EventEmitter } from 'node:events'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startServer } from '../src/server.js'
import { readConfig } from '../src/config.js'
import { fixture } from './helpers/fixtures.js'

t.test('SIGTERM lets the hook in flight finish, then closes', async t => {
  const signals = new EventEmitter()
  const config = { ...readConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent' }
  const running = await startServer(config, signals, {})
  t.teardown(async () => { await running.app.close() })
  const { port } = running.app.server.address() as AddressInfo

  const body = JSON.stringify(fixture('jobflow/sync-new.v2.json'))
  const answer = new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/hooks/jobflow/sync', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, res => {
      let text = ''
      res.on('data', chunk => { text += String(chunk) })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    // Half the body now: the request is in flight when the signal comes.
    req.write(body.slice(0, 100))
    setTimeout(() => {
      signals.emit('SIGTERM')
      setTimeout(() => req.end(body.slice(100)), 50)
    }, 50)
  })
  const { status, body: text } = await answer
  t.equal(status, 200)
  t.equal(JSON.parse(text).status.phase, 'Pending')
  await running.closed
  t.equal(running.app.server.listening, false, 'no longer listening')
})

t.test('settings come from the environment', async t => {
  const config = readConfig({ PORT: '9090', BODY_LIMIT_BYTES: '1000', HOOKS_DIR: '/x', SHUTDOWN_GRACE_MS: '5', LOG_LEVEL: 'debug', HOST: '127.0.0.1', EFFECTS_CONCURRENCY: '3', EFFECTS_BUDGET_MS: '2500' })
  t.same(config, { port: 9090, host: '127.0.0.1', logLevel: 'debug', bodyLimit: 1000, hooksDir: '/x', shutdownGraceMs: 5, effectsConcurrency: 3, effectsBudgetMs: 2500 })
  t.equal(readConfig({}).effectsConcurrency, 8)
  t.equal(readConfig({}).effectsBudgetMs, 5000)
  t.throws(() => readConfig({ EFFECTS_CONCURRENCY: '0' }), /EFFECTS_CONCURRENCY must be at least 1/)
  t.throws(() => readConfig({ PORT: 'eighty' }), /PORT must be a whole number/)
  t.equal(readConfig({}).port, 8080)
  t.equal(readConfig({}).bodyLimit, 64 * 1024 * 1024)
})

t.test('start-up without cluster credentials records effects (dry-run); with KUBECONFIG applies them', async t => {
  const config = { ...readConfig({}), host: '127.0.0.1', port: 0, logLevel: 'silent' }
  const dryRun = await startServer(config, new EventEmitter(), {})
  t.teardown(async () => { await dryRun.app.close() })
  t.equal(dryRun.app.effects.mode, 'dry-run')

  const kubeconfig = join(t.testdir({}), 'kubeconfig')
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c'
  }))
  const cluster = await startServer(config, new EventEmitter(), { KUBECONFIG: kubeconfig })
  t.teardown(async () => { await cluster.app.close() })
  t.equal(cluster.app.effects.mode, 'cluster')
})
