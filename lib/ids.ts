import { hash, randomBytes, randomUUID } from 'node:crypto'

export const newId = () => randomUUID()

/** A secret with a recognizable prefix (`plat_pat_…`), for secret scanners and for humans. */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url')
}

/** The random part of a platform credential: 32 bytes, 43 base64url characters. */
const SECRET_CHARS = 43
/** A UUID in 16 bytes: 22 base64url characters. */
const NAMED_ID_CHARS = 22

/**
 * A credential's value that also names records by id (its account, a service token's key), after
 * its random part: `plat_pat_<43 random><22 account id>`. The names are hints for reading the
 * records in the same round trip as the credential itself; they are never trusted (the stored
 * credential says whose it is, and a hint that disagrees is ignored). An id that is not a UUID is
 * not named.
 */
export function newNamingSecret(prefix: string, ids: readonly string[]): string {
  const named = ids.every((id) => UUID_RE.test(id)) ? ids.map((id) => Buffer.from(id.replaceAll('-', ''), 'hex').toString('base64url')) : []
  return newSecret(prefix) + named.join('')
}

/** The ids a credential's value names (newNamingSecret), when it names exactly `count` of them; else none. */
export function idsNamedBy(prefix: string, value: string, count: number): string[] {
  if (value.length !== prefix.length + SECRET_CHARS + count * NAMED_ID_CHARS) return []
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const start = prefix.length + SECRET_CHARS + i * NAMED_ID_CHARS
    const hex = Buffer.from(value.slice(start, start + NAMED_ID_CHARS), 'base64url').toString('hex')
    if (hex.length !== 32) return []
    ids.push(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`)
  }
  return ids
}

/** One-shot (crypto.hash, Node 20.12): no Hash object per call; every request hashes its token. */
export const sha256 = (value: string | Buffer) => hash('sha256', value, 'hex')

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const TOKEN_PREFIX = {
  personal: 'plat_pat_',
  service: 'plat_sat_',
  session: 'plat_ses_',
  /** A CLI login's access credential (1 hour): a Bearer token like the others. */
  cliAccess: 'plat_cli_',
  /** A CLI login's refresh credential: only ever sent to POST /auth/refresh and /auth/revoke, never as a Bearer token. */
  cliRefresh: 'plat_clr_',
} as const
