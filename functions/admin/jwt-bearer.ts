import { decodeProtectedHeader, errors as joseErrors, exportJWK, exportPKCS8, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose'
import type { Context } from 'hono'
import type { Config } from '../../lib/config.js'
import { badRequest, unauthorized } from '../../lib/errors.js'
import { API_PREFIX } from '../../lib/http.js'
import type { ServiceKeyRecord } from '../../domain/tenancy/service-users.js'

/**
 * The JWT bearer grant of RFC 7523: a service user signs a short assertion with its private key
 * and exchanges it at the token endpoint for a short-lived platform token.
 */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
/** Asymmetric only: a symmetric or `none` algorithm would let anyone holding the public key sign. */
export const ASSERTION_ALGORITHMS = ['ES256', 'RS256'] as const
export const KEY_ALGORITHM = 'ES256'
export const MAX_ASSERTION_LIFETIME_SECONDS = 3600
const CLOCK_SKEW_SECONDS = 30

/** A fresh key pair; the caller stores the public JWK and hands the private key out once. */
export async function generateServiceKey(keyId: string) {
  const { privateKey, publicKey } = await generateKeyPair(KEY_ALGORITHM, { extractable: true })
  const meta = { kid: keyId, alg: KEY_ALGORITHM, use: 'sig' }
  return {
    publicJwk: { ...(await exportJWK(publicKey)), ...meta } as JWK,
    privateJwk: { ...(await exportJWK(privateKey)), ...meta } as JWK,
    privatePem: await exportPKCS8(privateKey),
  }
}

export interface VerifiedAssertion {
  key: ServiceKeyRecord
  jti: string
  expiresAt: Date
}

/**
 * Checks an assertion: an allow-listed algorithm matching the key named by `kid`, a key that is
 * not revoked, the signature, iss = sub = the key's service user, aud = our token endpoint, and
 * exp at most one hour ahead. `onKey` learns the key as soon as it is known, so that failures
 * with a real key can be audited. Malformed input is a 400; a failed check a 401.
 */
export async function verifyAssertion(
  assertion: string,
  opts: { audience: string[]; now: Date; loadKey: (kid: string) => Promise<ServiceKeyRecord | undefined>; onKey?: (key: ServiceKeyRecord) => void },
): Promise<VerifiedAssertion> {
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    if (assertion.split('.').length !== 3) throw new Error('not three parts')
    header = decodeProtectedHeader(assertion)
  } catch {
    throw badRequest('invalid_request: assertion is not a compact JWT')
  }
  const alg = header.alg
  if (!alg || !(ASSERTION_ALGORITHMS as readonly string[]).includes(alg)) {
    throw unauthorized(`invalid_grant: assertion algorithm '${alg ?? ''}' is not accepted; sign with ${ASSERTION_ALGORITHMS.join(' or ')}`)
  }
  if (typeof header.kid !== 'string' || !header.kid)
    throw unauthorized('invalid_grant: the assertion header needs kid, the key_id of the service key')
  const key = await opts.loadKey(header.kid)
  if (!key) throw unauthorized('invalid_grant: unknown key')
  opts.onKey?.(key)
  if (key.revoked_at) throw unauthorized('invalid_grant: the key was revoked')
  if (key.alg !== alg) throw unauthorized(`invalid_grant: key ${key.id} signs with ${key.alg}, not ${alg}`)

  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload']
  try {
    const publicKey = await importJWK(key.public_jwk, key.alg)
    ;({ payload } = await jwtVerify(assertion, publicKey, {
      algorithms: [key.alg],
      issuer: key.service_user_id,
      subject: key.service_user_id,
      audience: opts.audience,
      currentDate: opts.now,
      clockTolerance: CLOCK_SKEW_SECONDS,
      maxTokenAge: MAX_ASSERTION_LIFETIME_SECONDS,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti'],
    }))
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw unauthorized('invalid_grant: assertion expired')
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw unauthorized(`invalid_grant: claim ${err.claim} check failed (${err.reason})`)
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      throw unauthorized(`invalid_grant: the signature does not verify with key ${key.id}`)
    if (err instanceof joseErrors.JOSEError) throw unauthorized(`invalid_grant: ${err.code}`)
    throw err
  }
  const nowSeconds = Math.floor(opts.now.getTime() / 1000)
  // jose bounds iat; exp needs its own bound, or an assertion could be replayed far in the future.
  if (payload.exp! > nowSeconds + MAX_ASSERTION_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS) {
    throw unauthorized(`invalid_grant: exp may be at most ${MAX_ASSERTION_LIFETIME_SECONDS} seconds ahead`)
  }
  if (typeof payload.jti !== 'string' || !payload.jti || payload.jti.length > 256) {
    throw unauthorized('invalid_grant: jti must be a non-empty string of at most 256 characters')
  }
  return { key, jti: payload.jti, expiresAt: new Date(payload.exp! * 1000) }
}

/** The address assertions must name as aud: the configured public address, else the one this request reached. */
export function tokenEndpoint(config: Pick<Config, 'adminPublicUrl'>, c: Pick<Context, 'req'>): string {
  if (config.adminPublicUrl) return `${config.adminPublicUrl.replace(/\/+$/, '')}${API_PREFIX}/oauth/token`
  return new URL(`${API_PREFIX}/oauth/token`, new URL(c.req.url).origin).href
}

/** The kid an assertion names, unverified, for counting failed attempts per key ("-" when it names none). */
export function assertedKeyId(assertion: string): string {
  try {
    const kid = decodeProtectedHeader(assertion).kid
    return typeof kid === 'string' && kid ? kid.slice(0, 200) : '-'
  } catch {
    return '-'
  }
}
