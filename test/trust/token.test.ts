import t from 'tap'
import { checkBearer, parseToken, MIN_TOKEN_LENGTH } from '../../src/trust/token.js'

const TOKEN = 'a'.repeat(20) + '0123456789abcdef0123'
const digest = parseToken(Buffer.from(`  ${TOKEN}\n`), 'token')

t.test('the token file holds one token, trimmed as Metacontroller trims the Secret it sends', async t => {
  t.equal(checkBearer(`Bearer ${TOKEN}`, digest), undefined, 'surrounding white space is not part of the token')
  t.throws(
    () => parseToken(Buffer.from('short-token\n'), '/run/token'),
    new RegExp(`^/run/token holds a token of 11 characters: use at least ${MIN_TOKEN_LENGTH} random ones`)
  )
  t.throws(
    () => parseToken(Buffer.from(''), '/run/token'),
    /holds a token of 0 characters/,
    'an empty file is no token'
  )
  t.throws(() => parseToken(Buffer.from(`${TOKEN} ${TOKEN}`), '/run/token'), /white space inside the token/)
})

t.test('only Authorization: Bearer <the token> passes', async t => {
  t.equal(checkBearer(`Bearer ${TOKEN}`, digest), undefined)
  t.equal(checkBearer(`bearer ${TOKEN}`, digest), undefined, 'the scheme is case-insensitive')
  t.equal(checkBearer(undefined, digest), 'missing_token')
  t.equal(checkBearer('', digest), 'missing_token')
  t.equal(checkBearer(`Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`, digest), 'wrong_scheme')
  t.equal(checkBearer(`Token ${TOKEN}`, digest), 'wrong_scheme')
  t.equal(checkBearer('Bearer', digest), 'wrong_scheme', 'a scheme without a credential')
  t.equal(checkBearer(TOKEN, digest), 'wrong_scheme', 'a bare token')
  t.equal(checkBearer(`Bearer ${TOKEN}x`, digest), 'wrong_token')
  t.equal(checkBearer(`Bearer ${TOKEN.slice(0, -1)}`, digest), 'wrong_token', 'a prefix of the token')
  t.equal(checkBearer(`Bearer ${TOKEN} extra`, digest), 'wrong_scheme', 'one credential only')
})
