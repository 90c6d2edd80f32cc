import t from 'tap'
import { decideTrust } from '../../src/trust/policy.js'

const open = { auth: 'required' as const }

t.test('with cluster credentials, no start without a credential check unless AUTH=none says so', async t => {
  t.throws(
    () => decideTrust(open, true),
    new RegExp('^refusing to start: with cluster credentials the service applies effects' +
      '.*AUTH_TOKEN_FILE.*TLS_CLIENT_CA_FILE.*AUTH=none')
  )
  t.same(decideTrust({ ...open, authTokenFile: '/run/token' }, true), { guarded: true })
  t.same(decideTrust({ ...open, tlsClientCaFile: '/run/ca.crt' }, true), { guarded: true })
  const none = decideTrust({ auth: 'none' }, true)
  t.equal(none.guarded, false)
  t.match(none.warning, /^AUTH=none: anything that reaches this service can make it apply effects/)
})

t.test('without cluster credentials (a local run) hooks are served as they are', async t => {
  t.same(decideTrust(open, false), { guarded: false })
  t.same(
    decideTrust({ ...open, authTokenFile: '/run/token' }, false),
    { guarded: true },
    'a token asked for is checked locally too'
  )
  t.match(decideTrust({ auth: 'none' }, false).warning, /^AUTH=none/)
})

t.test('AUTH=none with a credential setting is a contradiction', async t => {
  t.throws(
    () => decideTrust({ auth: 'none', authTokenFile: '/run/token' }, false),
    /AUTH=none turns the credential check off/
  )
})
