import { createHash, createVerify, type KeyObject } from 'node:crypto'

/**
 * Cloud Storage V4 signed URLs (GOOG4-RSA-SHA256, query-string authentication), both ways: the
 * signer the platform hands addresses out with, and the checker the local storage server applies
 * to the requests that use them. Both follow Google's published algorithm
 * (cloud.google.com/storage/docs/authentication/signatures) and are tested against Google's
 * conformance cases (fixtures/gcs-v4/).
 *
 *   canonical request = METHOD \n URI \n QUERY \n HEADERS \n SIGNED-HEADERS \n PAYLOAD-HASH
 *   string to sign    = GOOG4-RSA-SHA256 \n DATE \n SCOPE \n hex(sha256(canonical request))
 *   signature         = hex(RSA-SHA256(string to sign)) with the service account's key
 */
export const ALGORITHM = 'GOOG4-RSA-SHA256'
/** The longest validity Cloud Storage accepts for a V4 signed URL: 7 days. */
export const MAX_EXPIRES_SECONDS = 604_800
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
export const DEFAULT_ORIGIN = 'https://storage.googleapis.com'

/** The signature step, pluggable: a private key here, IAM Credentials signBlob in the cloud (./signers.ts). */
export interface BlobSigner {
  /** The service account e-mail the signature is made as (X-Goog-Credential). */
  readonly account: string
  /** RSA-SHA256 over the bytes, as IAM Credentials signBlob answers it. */
  sign(data: Buffer): Promise<Buffer>
}

/** RFC 3986 percent-encoding: everything but A–Z a–z 0–9 - . _ ~ (encodeURIComponent also leaves ! ' ( ) *). */
export const encodeRfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)

/** An object name in a URL path: each segment encoded, the slashes kept. */
export const encodeObjectPath = (name: string) => name.split('/').map(encodeRfc3986).join('/')

/** 20190201T090000Z */
export const goog4Timestamp = (d: Date) =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')

/** Header values are trimmed and their inner runs of whitespace collapsed to one space. */
const canonicalHeaderValue = (v: string) => v.trim().replace(/\s+/g, ' ')

const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex')

function canonicalQuery(params: Array<[string, string]>): string {
  return params
    .map(([k, v]) => [encodeRfc3986(k), encodeRfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}

export interface CanonicalParts {
  method: string
  /** The encoded path, e.g. /bucket/fastq/S1_R1.fastq.gz */
  uri: string
  /** Query parameters (decoded), without X-Goog-Signature. */
  query: Array<[string, string]>
  /** Signed headers, lowercase names, raw values. */
  headers: Record<string, string>
}

export function canonicalRequest(p: CanonicalParts): { request: string; signedHeaders: string } {
  const names = Object.keys(p.headers).sort()
  const headerBlock = names.map((n) => `${n}:${canonicalHeaderValue(p.headers[n]!)}\n`).join('')
  const signedHeaders = names.join(';')
  const payload = p.headers['x-goog-content-sha256'] ?? UNSIGNED_PAYLOAD
  return { request: [p.method, p.uri, canonicalQuery(p.query), headerBlock, signedHeaders, payload].join('\n'), signedHeaders }
}

export function stringToSign(timestamp: string, scope: string, canonical: string): string {
  return [ALGORITHM, timestamp, scope, sha256Hex(canonical)].join('\n')
}

export type UrlStyle = 'path' | 'virtual-hosted' | 'bucket-bound'

export interface SignUrlInput {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'
  bucket: string
  /** The object name; absent for a URL of the bucket itself (listing). */
  object?: string
  expiresSeconds: number
  /** The signing time (X-Goog-Date). */
  now: Date
  /**
   * Where the URL points: scheme, host and port (default https://storage.googleapis.com). Path
   * style puts the bucket in the path; virtual-hosted puts it before the host; bucket-bound means
   * the origin is the bucket's own domain.
   */
  origin?: string
  style?: UrlStyle
  /** Extension headers the request must carry with these exact values (Content-Type for an upload). */
  headers?: Record<string, string>
  queryParameters?: Record<string, string>
}

/** Builds a V4 signed URL; the signature is made by `signer` (a key, or IAM Credentials). */
export async function signUrl(input: SignUrlInput, signer: BlobSigner): Promise<string> {
  if (!Number.isInteger(input.expiresSeconds) || input.expiresSeconds < 1 || input.expiresSeconds > MAX_EXPIRES_SECONDS) {
    throw new Error(`a V4 signed URL is valid 1 to ${MAX_EXPIRES_SECONDS} seconds, not ${input.expiresSeconds}`)
  }
  // Parsed by hand: URL() would drop an explicit default port (:443) that the address must keep.
  const origin = /^(https?):\/\/([^/?#]+)\/?$/.exec(input.origin ?? DEFAULT_ORIGIN)
  if (!origin) throw new Error(`origin must be http(s)://host[:port], not ${input.origin}`)
  const [, scheme, hostPort] = origin as unknown as [string, string, string]
  const hostname = hostPort.replace(/:\d+$/, '')
  const style = input.style ?? 'path'
  const objectPath = input.object === undefined ? '' : `/${encodeObjectPath(input.object)}`
  let urlOrigin = `${scheme}://${hostPort}`
  // The signed host is the host name without a port, as Google's client libraries sign it.
  let host = hostname
  let uri: string
  if (style === 'path') {
    uri = `/${input.bucket}${objectPath}`
  } else if (style === 'virtual-hosted') {
    host = `${input.bucket}.${hostname}`
    urlOrigin = `${scheme}://${input.bucket}.${hostPort}`
    uri = objectPath || '/'
  } else {
    uri = objectPath || '/'
  }

  const timestamp = goog4Timestamp(input.now)
  const scope = `${timestamp.slice(0, 8)}/auto/storage/goog4_request`
  const headers: Record<string, string> = { host }
  for (const [name, value] of Object.entries(input.headers ?? {})) headers[name.toLowerCase()] = value
  const signedHeaderNames = Object.keys(headers).sort().join(';')
  const query: Array<[string, string]> = [
    ['X-Goog-Algorithm', ALGORITHM],
    ['X-Goog-Credential', `${signer.account}/${scope}`],
    ['X-Goog-Date', timestamp],
    ['X-Goog-Expires', String(input.expiresSeconds)],
    ['X-Goog-SignedHeaders', signedHeaderNames],
    ...Object.entries(input.queryParameters ?? {}),
  ]
  const { request } = canonicalRequest({ method: input.method, uri, query, headers })
  const signature = (await signer.sign(Buffer.from(stringToSign(timestamp, scope, request), 'utf8'))).toString('hex')
  return `${urlOrigin}${uri}?${canonicalQuery(query)}&X-Goog-Signature=${signature}`
}

/** A request as it arrived at a storage server, for checking its V4 query-string authentication. */
export interface SignedRequest {
  method: string
  /** The Host header. */
  host: string
  /** The request target's path, still percent-encoded, as received. */
  rawPath: string
  /** The request target's query string, still percent-encoded, without the '?'. */
  rawQuery: string
  /** Request headers, lowercase names (node's IncomingMessage.headers). */
  headers: Record<string, string | string[] | undefined>
}

export interface VerifyOptions {
  now: Date
  /** The public key of a service account, or undefined for an account this server does not know. */
  publicKeyFor(account: string): KeyObject | undefined
  /** How far in the future X-Goog-Date may be (clocks differ a little); default 900 s, as Cloud Storage allows. */
  clockSkewSeconds?: number
  /**
   * Canonical URIs this request may have been signed over (default: its own path). A virtual-hosted
   * request names its bucket in the host, and its path lacks it.
   */
  canonicalUris?: Array<string | undefined>
}

export interface Verified {
  ok: true
  account: string
  signedHeaders: string[]
  /** The payload hash the signature covers (x-goog-content-sha256), when it is not UNSIGNED-PAYLOAD. */
  payloadSha256?: string
  expiresAt: Date
}

export interface Refused {
  ok: false
  status: 400 | 403
  /** Cloud Storage's XML error code. */
  code: 'MalformedSecurityHeader' | 'ExpiredToken' | 'AccessDenied' | 'SignatureDoesNotMatch' | 'RequestNotYetValid'
  message: string
  stringToSign?: string
}

const refuse = (status: Refused['status'], code: Refused['code'], message: string, stringToSign?: string): Refused => ({
  ok: false,
  status,
  code,
  message,
  stringToSign,
})

const DATE_RE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/

function parseQuery(raw: string): Array<[string, string]> | undefined {
  if (!raw) return []
  const out: Array<[string, string]> = []
  for (const part of raw.split('&')) {
    if (!part) continue
    const eq = part.indexOf('=')
    const k = eq < 0 ? part : part.slice(0, eq)
    const v = eq < 0 ? '' : part.slice(eq + 1)
    try {
      out.push([decodeURIComponent(k), decodeURIComponent(v)])
    } catch {
      return undefined
    }
  }
  return out
}

/** Re-encodes a received path canonically (a client may encode a character the signer left alone, or the reverse). */
export function canonicalPath(rawPath: string): string | undefined {
  try {
    return rawPath
      .split('/')
      .map((s) => encodeRfc3986(decodeURIComponent(s)))
      .join('/')
  } catch {
    return undefined
  }
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v)

/**
 * Checks a request's V4 query-string authentication as Cloud Storage does: the algorithm, the
 * credential scope, the date and expiry window, the signed headers (which must include host, and
 * carry the values that were signed, so an upload address refuses another Content-Type) and the
 * RSA signature with the account's public key. The method is part of what is signed, so an
 * upload address cannot be used to read.
 */
export function verifySignedRequest(req: SignedRequest, opts: VerifyOptions): Verified | Refused {
  const query = parseQuery(req.rawQuery)
  if (!query) return refuse(400, 'MalformedSecurityHeader', 'The query string is not correctly percent-encoded.')
  const param = (name: string) => {
    const found = query.filter(([k]) => k === name)
    return found.length === 1 ? found[0]![1] : undefined
  }
  const algorithm = param('X-Goog-Algorithm')
  const credential = param('X-Goog-Credential')
  const date = param('X-Goog-Date')
  const expires = param('X-Goog-Expires')
  const signedHeadersParam = param('X-Goog-SignedHeaders')
  const signature = param('X-Goog-Signature')
  if (!algorithm || !credential || !date || !expires || !signedHeadersParam || !signature) {
    return refuse(
      400,
      'MalformedSecurityHeader',
      'Each of X-Goog-Algorithm, X-Goog-Credential, X-Goog-Date, X-Goog-Expires, X-Goog-SignedHeaders and X-Goog-Signature must appear once.',
    )
  }
  if (algorithm !== ALGORITHM) return refuse(400, 'MalformedSecurityHeader', `Unsupported X-Goog-Algorithm ${algorithm}; expected ${ALGORITHM}.`)
  const m = DATE_RE.exec(date)
  const signedAt = m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined
  if (!signedAt || Number.isNaN(signedAt.getTime()) || goog4Timestamp(signedAt) !== date) {
    return refuse(400, 'MalformedSecurityHeader', 'X-Goog-Date must be a UTC time as YYYYMMDDTHHMMSSZ.')
  }
  const scopeParts = credential.split('/')
  const [account, scopeDate, region, service, terminator] = scopeParts
  if (scopeParts.length !== 5 || !account || !region || service !== 'storage' || terminator !== 'goog4_request') {
    return refuse(400, 'MalformedSecurityHeader', 'X-Goog-Credential must be <service account>/<YYYYMMDD>/<region>/storage/goog4_request.')
  }
  if (scopeDate !== date.slice(0, 8)) return refuse(400, 'MalformedSecurityHeader', 'The credential scope date does not match X-Goog-Date.')
  if (!/^\d{1,6}$/.test(expires) || +expires < 1 || +expires > MAX_EXPIRES_SECONDS) {
    return refuse(400, 'MalformedSecurityHeader', `X-Goog-Expires must be a whole number of seconds from 1 to ${MAX_EXPIRES_SECONDS}.`)
  }
  const signedHeaders = signedHeadersParam.split(';')
  if (!signedHeaders.includes('host') || signedHeaders.some((h) => !h || h !== h.toLowerCase())) {
    return refuse(400, 'MalformedSecurityHeader', 'X-Goog-SignedHeaders must list lowercase header names, host among them.')
  }
  if (!/^[0-9a-f]+$/.test(signature) || signature.length % 2 !== 0) {
    return refuse(400, 'MalformedSecurityHeader', 'X-Goog-Signature must be hexadecimal.')
  }

  const expiresAt = new Date(signedAt.getTime() + Number(expires) * 1000)
  const now = opts.now.getTime()
  if (now > expiresAt.getTime()) {
    return refuse(400, 'ExpiredToken', `The provided token has expired. Request signature expired at: ${expiresAt.toISOString()}`)
  }
  if (signedAt.getTime() - now > (opts.clockSkewSeconds ?? 900) * 1000) {
    return refuse(403, 'RequestNotYetValid', `The request is not valid before ${signedAt.toISOString()}.`)
  }
  const key = opts.publicKeyFor(account)
  if (!key) return refuse(403, 'AccessDenied', `No key of ${account} is known to this server.`)

  const missing = signedHeaders.filter((h) => h !== 'host' && headerValue(req.headers[h]) === undefined)
  if (missing.length) {
    return refuse(403, 'SignatureDoesNotMatch', `The request does not carry the signed header(s) ${missing.join(', ')}.`)
  }
  const uris = opts.canonicalUris ?? [canonicalPath(req.rawPath)]
  const otherQuery = query.filter(([k]) => k !== 'X-Goog-Signature')
  const signatureBytes = Buffer.from(signature, 'hex')
  // The host is signed without its port by Google's libraries, and with it by some other signers.
  const hosts = [...new Set([req.host, req.host.replace(/:\d+$/, '')])]
  let lastStringToSign: string | undefined
  for (const uri of uris) {
    if (uri === undefined) return refuse(400, 'MalformedSecurityHeader', 'The request path is not correctly percent-encoded.')
    for (const host of hosts) {
      const headers: Record<string, string> = {}
      for (const h of signedHeaders) headers[h] = h === 'host' ? host : headerValue(req.headers[h])!
      const { request } = canonicalRequest({ method: req.method, uri, query: otherQuery, headers })
      const toSign = stringToSign(date, scopeParts.slice(1).join('/'), request)
      lastStringToSign = toSign
      const verifier = createVerify('RSA-SHA256')
      verifier.update(toSign)
      if (verifier.verify(key, signatureBytes)) {
        const payload = headers['x-goog-content-sha256']
        return { ok: true, account, signedHeaders, payloadSha256: payload && payload !== UNSIGNED_PAYLOAD ? payload : undefined, expiresAt }
      }
    }
  }
  return refuse(
    403,
    'SignatureDoesNotMatch',
    'The request signature we calculated does not match the signature you provided. Check your Google secret key and signing method.',
    lastStringToSign,
  )
}
