import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { SignUrlInput, UrlStyle } from '../../lib/storage/v4.js'

/**
 * Google's V4 signing conformance cases (googleapis/conformance-tests, storage/v1) and the dummy
 * service account they were made with, from ../shared/fixtures/gcs-v4/.
 */
export const FIXTURES = resolve(import.meta.dirname, '../../../shared/fixtures/gcs-v4')

export interface SigningCase {
  description: string
  bucket: string
  object?: string
  method: SignUrlInput['method']
  expiration: number
  timestamp: string
  expectedUrl: string
  expectedCanonicalRequest: string
  expectedStringToSign: string
  headers?: Record<string, string>
  queryParameters?: Record<string, string>
  scheme?: string
  urlStyle?: 'VIRTUAL_HOSTED_STYLE' | 'BUCKET_BOUND_HOSTNAME'
  bucketBoundHostname?: string
  hostname?: string
  clientEndpoint?: string
  emulatorHostname?: string
  universeDomain?: string
}

export const SIGNING_CASES = (JSON.parse(readFileSync(resolve(FIXTURES, 'v4_signatures.json'), 'utf8')) as { signingV4Tests: SigningCase[] })
  .signingV4Tests

export const DUMMY_ACCOUNT = JSON.parse(readFileSync(resolve(FIXTURES, 'test_service_account.not-a-test.json'), 'utf8')) as {
  client_email: string
  private_key: string
}

/**
 * A case that does not apply to a signer that signs what it serves: its canonical request covers
 * the path-style URI /test-bucket/test-object while its URL is virtual-hosted (/test-object), so no
 * server checking the URL it receives could accept it.
 */
export const NOT_APPLICABLE: Record<string, string> = {
  'Universe domain with virtual hosted style': 'its signature covers /test-bucket/test-object, its URL asks for /test-object',
}

/**
 * Where a case's URL points, resolved as Google's client libraries do: an explicit hostname, else
 * the client's endpoint, else the emulator host, else storage.<universe domain>.
 */
export function originOf(c: SigningCase): { origin: string; style: UrlStyle } {
  const scheme = c.scheme ?? 'https'
  const withScheme = (h: string) => (/^https?:\/\//.test(h) ? h : `${scheme}://${h}`)
  if (c.urlStyle === 'BUCKET_BOUND_HOSTNAME') return { origin: withScheme(c.bucketBoundHostname!), style: 'bucket-bound' }
  const origin = c.hostname
    ? withScheme(c.hostname)
    : c.clientEndpoint
      ? withScheme(c.clientEndpoint)
      : c.emulatorHostname
        ? withScheme(c.emulatorHostname)
        : `${scheme}://storage.${c.universeDomain ?? 'googleapis.com'}`
  return { origin, style: c.urlStyle === 'VIRTUAL_HOSTED_STYLE' ? 'virtual-hosted' : 'path' }
}

export function signInputOf(c: SigningCase): SignUrlInput {
  return {
    method: c.method,
    bucket: c.bucket,
    object: c.object,
    expiresSeconds: c.expiration,
    now: new Date(c.timestamp),
    headers: c.headers,
    queryParameters: c.queryParameters,
    ...originOf(c),
  }
}
