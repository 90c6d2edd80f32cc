import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Socket } from 'node:net'
import { createHookGuard, RefusalLog } from '../../src/trust/guard.js'

const OLD = 'old-token-0123456789abcdef0123456789abcdef'
const NEW = 'new-token-0123456789abcdef0123456789abcdef'
const caller = (authorization?: string) => ({
  headers: authorization === undefined ? {} : { authorization },
  socket: new Socket()
})

/** Waits until `probe` is true, polling; fails after `ms`. */
async function until (probe: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!probe()) {
    if (Date.now() > deadline) return false
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return true
}

t.test(
  'a rotated token file is read again: the new token works and the old one stops working, without a restart',
  async t => {
    const file = join(t.testdir({}), 'token')
    writeFileSync(file, `${OLD}\n`)
    const errors: string[] = []
    const infos: string[] = []
    const guard = createHookGuard({
      tokenFile: file,
      clientCertificate: false,
      reloadMs: 20,
      log: { info: m => infos.push(m), error: m => errors.push(m) }
    })
    t.teardown(guard.close)
    t.equal(guard.description, 'hook calls must carry a bearer token')
    t.equal(guard.check(caller(`Bearer ${OLD}`)), undefined)
    t.equal(guard.check(caller(`Bearer ${NEW}`)), 'wrong_token')

    writeFileSync(file, NEW)
    t.ok(await until(() => guard.check(caller(`Bearer ${NEW}`)) === undefined), 'the new token works')
    t.equal(guard.check(caller(`Bearer ${OLD}`)), 'wrong_token', 'the old one does not')
    t.match(infos, [/changed: calls must carry the new one/])

    writeFileSync(file, 'short')
    t.ok(await until(() => errors.length > 0), 'an unusable file is reported')
    t.match(errors[0], /cannot use .* any more, the previous token stays in force: .* holds a token of 5 characters/)
    t.equal(guard.check(caller(`Bearer ${NEW}`)), undefined, 'and the last good token stays in force')
  }
)

t.test('a token file that cannot be read or holds no usable token is a start-up error', async t => {
  t.throws(
    () => createHookGuard({ tokenFile: join(t.testdir({}), 'missing'), clientCertificate: false, reloadMs: 0 }),
    /ENOENT/
  )
  const file = join(t.testdir({}), 'token')
  writeFileSync(file, '\n')
  t.throws(
    () => createHookGuard({ tokenFile: file, clientCertificate: false, reloadMs: 0 }),
    /holds a token of 0 characters/
  )
})

t.test(
  'mutual TLS: a call whose client certificate the TLS layer did not verify is refused, before the token',
  async t => {
    const guard = createHookGuard({ clientCertificate: true, reloadMs: 0 })
    t.equal(guard.description, 'hook calls must carry a client certificate')
    t.equal(guard.check(caller()), 'no_client_certificate', 'plain socket: no certificate')
    const verified = Object.assign(new Socket(), { authorized: true })
    t.equal(guard.check({ headers: {}, socket: verified }), undefined)
  }
)

t.test('refusals are logged once per source per interval, with how many were not', async t => {
  let now = 0
  const log = new RefusalLog(60_000, 3, () => now)
  t.equal(log.due('10.0.0.1'), 0, 'the first refusal is logged')
  t.equal(log.due('10.0.0.1'), undefined)
  t.equal(log.due('10.0.0.1'), undefined)
  t.equal(log.due('10.0.0.2'), 0, 'another source has its own line')
  now = 60_000
  t.equal(log.due('10.0.0.1'), 2, 'the next line says how many refusals it stands for')
  t.equal(log.due('10.0.0.3'), 0)
  now = 121_000
  t.equal(log.due('10.0.0.4'), 0, 'at the bound, expired sources are forgotten first')
  t.equal(log.due('10.0.0.1'), 0)
})
