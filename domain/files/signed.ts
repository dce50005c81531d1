import type { ProjectStorage } from '../../lib/storage.js'
import { signUrl } from '../../lib/storage/v4.js'

/** The validity of every signed address the platform hands out (the spec's 900 seconds). */
export const SIGNED_URL_TTL_SECONDS = 900

/** The signing time of an address: whole seconds, as X-Goog-Date counts them, and when the address expires. */
export function validity(now: Date) {
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000)
  return { now: at, expiresAt: new Date(at.getTime() + SIGNED_URL_TTL_SECONDS * 1000) }
}

/**
 * A V4 address for one method on one object of a project's bucket, signed as the project's
 * service account (`account`), valid SIGNED_URL_TTL_SECONDS from `now`, binding `headers` (their
 * names as given). The file service's addresses and the console's download links are both these.
 */
export async function signedAddress(
  storage: ProjectStorage,
  target: { account: string; bucket: string; method: 'GET' | 'PUT' | 'POST'; path: string },
  { now, expiresAt }: ReturnType<typeof validity>,
  headers: Readonly<Record<string, string>> = {},
) {
  const { account, bucket, method, path } = target
  const url = await signUrl(
    { method, bucket, object: path, expiresSeconds: SIGNED_URL_TTL_SECONDS, now, origin: storage.origin, headers },
    storage.signer(account),
  )
  return { url, expires_in_seconds: SIGNED_URL_TTL_SECONDS, expires_at: expiresAt.toISOString(), method, headers }
}
