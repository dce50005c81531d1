import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto'

/**
 * The secret keys audit events and chain heads are keyed with (HMAC-SHA256), by key id. The
 * database never holds them: in the cloud they come from Secret Manager, locally from the suite's
 * data folder (docs/audit.md). New events use the active key; an event keyed with an older one
 * verifies while its key stays in the ring, so a rotation adds a key and never removes one.
 */

const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/
/** HMAC-SHA256 is keyed with at least its own output size (RFC 2104: shorter keys weaken it). */
export const AUDIT_KEY_MIN_BYTES = 32

export class AuditKeyRing {
  private constructor(
    private readonly keys: ReadonlyMap<string, KeyObject>,
    /** The key new events and chain heads are keyed with. */
    readonly activeId: string,
  ) {}

  /**
   * Parses `id:base64key[,id:base64key…]` (AUDIT_HMAC_KEYS). `active` names the key new events use
   * (AUDIT_HMAC_ACTIVE_KEY); it may be left out when the ring holds one key. Throws an Error that
   * names the faulty entry by its id or position, never a key's value. The key objects are built
   * here, once, so that keying an event costs one HMAC and no key import.
   */
  static parse(text: string, active?: string): AuditKeyRing {
    const keys = new Map<string, KeyObject>()
    const entries = text.split(',').map((e) => e.trim())
    entries.forEach((entry, i) => {
      const colon = entry.indexOf(':')
      const id = colon < 0 ? '' : entry.slice(0, colon)
      const value = entry.slice(colon + 1)
      if (colon < 0 || !KEY_ID.test(id)) {
        throw new Error(`entry ${i + 1} is not <id>:<base64 key> with an id of letters, digits, '.', '_' and '-'`)
      }
      if (keys.has(id)) throw new Error(`key ${id} appears twice`)
      const bytes = BASE64.test(value) ? Buffer.from(value, 'base64') : Buffer.alloc(0)
      if (bytes.length < AUDIT_KEY_MIN_BYTES) throw new Error(`key ${id} is not ${AUDIT_KEY_MIN_BYTES} or more bytes in base64`)
      keys.set(id, createSecretKey(bytes))
    })
    const activeId = active ?? (keys.size === 1 ? [...keys.keys()][0]! : undefined)
    if (activeId === undefined) throw new Error('the ring holds several keys: name the one new events use in AUDIT_HMAC_ACTIVE_KEY')
    if (!keys.has(activeId)) throw new Error(`the active key ${activeId} (AUDIT_HMAC_ACTIVE_KEY) is not in the ring`)
    return new AuditKeyRing(keys, activeId)
  }

  get ids(): string[] {
    return [...this.keys.keys()]
  }

  /** HMAC-SHA256 of `text` with key `id`, in hex; undefined when the ring has no such key. */
  mac(id: string, text: string): string | undefined {
    const key = this.keys.get(id)
    return key && createHmac('sha256', key).update(text).digest('hex')
  }

  /**
   * Whether `mac` is the HMAC of `text` with key `id`: true, false, or undefined when the ring has
   * no such key. Compared in constant time: the audit service answers whether a stored hash
   * verifies, and must not tell by its timing how much of a forged one is right.
   */
  verify(id: string, text: string, mac: string): boolean | undefined {
    const expected = this.mac(id, text)
    if (expected === undefined) return undefined
    return mac.length === expected.length && timingSafeEqual(Buffer.from(mac), Buffer.from(expected))
  }
}

/** A new ring entry, `<id>:<32 random bytes in base64>`: the suite's first key, a deployment's first, a rotation's next. */
export function newAuditKeyEntry(id: string): string {
  if (!KEY_ID.test(id)) throw new Error(`'${id}' is not a key id (letters, digits, '.', '_' and '-', at most 64)`)
  return `${id}:${randomBytes(AUDIT_KEY_MIN_BYTES).toString('base64')}`
}
