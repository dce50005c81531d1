import { createHash, randomBytes, randomUUID } from 'node:crypto'

export const newId = () => randomUUID()

/** A secret with a recognizable prefix (`plat_pat_…`), for secret scanners and for humans. */
export function newSecret(prefix: string, bytes = 32): string {
  return prefix + randomBytes(bytes).toString('base64url')
}

export const sha256 = (value: string | Buffer) => createHash('sha256').update(value).digest('hex')

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const TOKEN_PREFIX = {
  personal: 'plat_pat_',
  service: 'plat_sat_',
  session: 'plat_ses_',
} as const
