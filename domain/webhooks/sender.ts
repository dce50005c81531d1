import { promises as dnsPromises, type LookupAddress } from 'node:dns'
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { addressesProblem, hostOf, urlProblem, type UrlPolicy } from './addresses.js'

/** How long a receiver has to answer (Standard Webhooks asks receivers to answer at once and work later). */
export const ATTEMPT_TIMEOUT_MS = 15_000

/** What an attempt got: the receiver's status, or why there was none. */
export interface SendResult {
  status_code?: number
  error?: string
}

/** Looks a host name up: every address it resolves to (the system resolver's, `dns.lookup`, unless a test gives its own). */
export type Resolve = (host: string) => Promise<LookupAddress[]>

const systemResolve: Resolve = (host) => dnsPromises.lookup(host, { all: true, verbatim: true })

export interface SendOptions {
  policy: UrlPolicy
  timeoutMs: number
  resolve?: Resolve
}

class RefusedAddress extends Error {}

/**
 * A DNS lookup that checks every address the host resolves to under `policy` and hands the
 * connection only those it checked: the check and the connection see the same answer, so a host
 * that resolves to a public address for the check and to a private one for the connection (DNS
 * rebinding) is refused instead. A name resolving to any refused address is refused entirely.
 */
function checkedLookup(policy: UrlPolicy, resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (failure: Error | null, addresses: LookupAddress[]) => {
      // The callback's two shapes: a list when asked for all (Node's happy eyeballs), else one address and its family.
      if (options.all) (callback as unknown as (e: Error | null, a: LookupAddress[]) => void)(failure, addresses)
      else callback(failure, addresses[0]?.address ?? '', addresses[0]?.family ?? 0)
    }
    resolve(hostname).then(
      (addresses) => {
        const problem = addressesProblem(
          hostname,
          addresses.map((a) => a.address),
          policy,
        )
        if (problem) answer(new RefusedAddress(problem), [])
        else answer(null, addresses)
      },
      (err: Error) => answer(err, []),
    )
  }
}

/**
 * POSTs a delivery (the node:http client: no redirect is followed, so a receiver cannot send the
 * platform on to another address). The URL is checked under the policy again first (an IP literal
 * is never looked up), then the host's addresses as the connection resolves them.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, opts: SendOptions): Promise<SendResult> {
  const { policy, timeoutMs } = opts
  const problem = urlProblem(url, policy)
  if (problem) return Promise.resolve({ error: `refused: ${problem}` })
  const target = new URL(url)
  const options: RequestOptions = {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': 'platform-webhooks/1',
    },
    lookup: checkedLookup(policy, opts.resolve ?? systemResolve),
    agent: false,
    signal: AbortSignal.timeout(timeoutMs),
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    const req = send(target, options, (res) => {
      // The answer's body is not read: only its status counts.
      res.resume()
      resolve({ status_code: res.statusCode })
    })
    req.on('error', (err) => {
      if (err instanceof RefusedAddress) resolve({ error: `refused: ${err.message}` })
      else if (err.name === 'AbortError' || err.name === 'TimeoutError') resolve({ error: `no answer within ${timeoutMs / 1000} s` })
      else resolve({ error: `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}`.slice(0, 300) })
    })
    req.end(body)
  })
}

/**
 * The URL with the addresses its host resolves to now (an IP literal is its own address), for the
 * registration's check (decide.ts urlRefusal); none when it is not a URL or does not resolve.
 */
export async function resolveUrl(text: string, policy: UrlPolicy, resolve: Resolve = systemResolve): Promise<{ url: string; addresses?: string[] }> {
  if (urlProblem(text, policy)) return { url: text }
  const host = hostOf(new URL(text))
  if (isIP(host)) return { url: text, addresses: [host] }
  try {
    return { url: text, addresses: (await resolve(host)).map((a) => a.address) }
  } catch {
    return { url: text, addresses: [] }
  }
}
