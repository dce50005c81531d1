import { createHmac } from 'node:crypto'
import type { AuditKeyRing } from '../../lib/audit-keys.js'

/**
 * Signing as the Standard Webhooks specification says (https://www.standardwebhooks.com/, its
 * spec.md), so that a receiver verifies a delivery with any of its libraries: the headers
 * `webhook-id` (the message's id, the same on every attempt: the receiver's key for ignoring a
 * repeat), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
 * (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several separated by spaces while a
 * rotated secret is still honoured), keyed with the secret's bytes (`whsec_<base64>`).
 */
export const SECRET_PREFIX = 'whsec_'

/**
 * A webhook's signing secret, never stored: it is derived from the platform's key ring (the keys of
 * the audit log, held in Secret Manager and never in the database) as HMAC-SHA256(key, label, hook
 * id, generation), so that the database holds only which key and which generation, and a reader of
 * the database cannot sign as the platform. HMAC is a pseudorandom function: a receiver who knows
 * its secret learns nothing of the key or of any other hook's secret. A rotation takes the next
 * generation. The key ring never drops a key (lib/audit-keys.ts), so a secret stays derivable.
 */
export function deriveSecret(keys: AuditKeyRing, ref: SecretRef, hookId: string): string {
  const mac = keys.mac(ref.key_id, `webhook-signing-secret\n${hookId}\n${ref.generation}`)
  if (mac === undefined) throw new Error(`webhook ${hookId}: the key ${ref.key_id} of its secret is not in the key ring`)
  return SECRET_PREFIX + Buffer.from(mac, 'hex').toString('base64')
}

/** Which secret: the key it is derived with and its generation (1, then one more per rotation). */
export interface SecretRef {
  key_id: string
  generation: number
}

/** The `v1,<base64>` signature of one message with one secret. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The three headers of one attempt, signed with each secret given (the current one first). */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  }
}
