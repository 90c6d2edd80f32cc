// The names the page answers under: its own address and port, loopback's, and every interface's
// only when it listens on all of them; the token compared whole.
import t from 'tap'
import { allowedHosts, tokenMatches } from '../../../src/cli/ui/guard.js'

t.test('allowedHosts: the address listened on and loopback, at that port only', async t => {
  t.same([...allowedHosts('127.0.0.1', 8080, ['10.0.0.5'])].sort(),
    ['127.0.0.1:8080', '[::1]:8080', 'localhost:8080'])
  t.ok(allowedHosts('10.0.0.5', 8080).has('10.0.0.5:8080'), 'an address given with --address')
  t.ok(allowedHosts('fd00::5', 8080).has('[fd00::5]:8080'), 'an IPv6 address in brackets, as a Host carries it')
  const everywhere = allowedHosts('0.0.0.0', 8080, ['10.0.0.5', 'fe80::1'])
  t.ok(everywhere.has('10.0.0.5:8080') && everywhere.has('[fe80::1]:8080'), 'on every interface: each one\'s address')
  t.notOk(everywhere.has('evil.example:8080'), 'never a name another site chose')
  t.notOk(allowedHosts('127.0.0.1', 8080).has('127.0.0.1:8081'), 'nor another port')
})

t.test('tokenMatches: the whole token, nothing shorter or longer', async t => {
  t.ok(tokenMatches('abc', 'abc'))
  t.notOk(tokenMatches('ab', 'abc'))
  t.notOk(tokenMatches('abcd', 'abc'))
  t.notOk(tokenMatches(undefined, 'abc'))
})
