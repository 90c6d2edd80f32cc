// The bearer token hook calls must carry: Metacontroller sends it from a Secret
// (`authorization.secretRef` on each webhook) and the service reads the same Secret, mounted as a
// file, to compare.
import { createHash, timingSafeEqual } from 'node:crypto'

/** Why a call's credentials were refused; also the label of the refusals metric. */
export type Refusal = 'missing_token' | 'wrong_scheme' | 'wrong_token' | 'no_client_certificate'

/** Shorter tokens are refused at start-up: the token is the whole of the service's trust. */
export const MIN_TOKEN_LENGTH = 32

/**
 * The token in a token file: the whole content without surrounding white space, as
 * Metacontroller trims the Secret's value before it sends it.
 */
export function parseToken (contents: Buffer, file: string): Buffer {
  const token = contents.toString('utf8').trim()
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(`${file} holds a token of ${token.length} characters: ` +
      `use at least ${MIN_TOKEN_LENGTH} random ones (the README's install makes 64)`)
  }
  if (/\s/.test(token)) throw new Error(`${file} holds white space inside the token: it must be one token`)
  return digest(token)
}

/**
 * Checks an Authorization header against the token's digest. Both sides are hashed first, so
 * the comparison takes the same time whatever the header holds, its length included.
 */
export function checkBearer (header: string | undefined, tokenDigest: Buffer): Refusal | undefined {
  if (header === undefined || header === '') return 'missing_token'
  const match = /^(\S+) +(\S+)\s*$/.exec(header)
  // The scheme is case-insensitive (RFC 9110); Metacontroller sends its `type`, Bearer by default.
  if (match === null || (match[1] as string).toLowerCase() !== 'bearer') return 'wrong_scheme'
  return timingSafeEqual(digest(match[2] as string), tokenDigest) ? undefined : 'wrong_token'
}

function digest (token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}
