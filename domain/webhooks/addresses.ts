import { BlockList, isIP } from 'node:net'

/**
 * Where a webhook may be sent. In the cloud (`public`) only to https:// addresses on the public
 * internet: a webhook URL is chosen by a project's administrator and fetched by the platform from
 * inside Google Cloud, so an address of the platform's own network, of the metadata server
 * (169.254.169.254, which hands out the functions' access tokens), or any other special-purpose
 * range would let a tenant make the platform call what only it can reach (server-side request
 * forgery). The local suite and its tests (`local`) deliver to receivers on this machine, over
 * plain http too. The policy is checked at registration, on the addresses the host resolves to then,
 * and again on every delivery, on the addresses the connection is then made to (a host that
 * resolved to a public address at registration may resolve to a private one later: DNS rebinding).
 */
export type UrlPolicy = 'public' | 'local'

/**
 * The IANA special-purpose address registries (IPv4 and IPv6), with private, loopback, link-local
 * (the metadata server), shared (carrier-grade NAT), documentation, benchmarking, multicast and
 * reserved ranges, and the IPv6 prefixes that embed an IPv4 address another way than the mapped one
 * (NAT64, 6to4, Teredo), whose IPv4 part could be any of the above.
 */
const REFUSED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]
const REFUSED_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
]

const REFUSED = new BlockList()
for (const [net, prefix] of REFUSED_V4) REFUSED.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of REFUSED_V6) REFUSED.addSubnet(net, prefix, 'ipv6')

/** Host names that are the metadata server whatever they resolve to (Google's, and the bare name its resolver answers). */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'metadata.goog'])

/** `::ffff:a.b.c.d` or `::ffff:xxxx:xxxx` (an IPv4 address in IPv6 clothing) → `a.b.c.d`. */
function mappedV4(address: string): string | undefined {
  const m = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address)
  if (!m) return undefined
  if (m[1]) return m[1]
  const hi = parseInt(m[2]!, 16)
  const lo = parseInt(m[3]!, 16)
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.')
}

/** Whether a webhook may be sent to this IP address under the `public` policy. */
export function isPublicAddress(address: string): boolean {
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const v4 = mappedV4(plain.toLowerCase())
  if (v4) return isPublicAddress(v4)
  const family = isIP(plain)
  if (family === 0) return false
  return !REFUSED.check(plain, family === 4 ? 'ipv4' : 'ipv6')
}

/** A URL's host as DNS or an IP literal names it (brackets of an IPv6 literal removed, no trailing dot). */
export const hostOf = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()

export const MAX_URL_LENGTH = 2048

/**
 * What is wrong with a webhook URL itself under `policy`, before any address is looked up: not a
 * URL, a scheme other than https (http too, locally), credentials in it (they would be sent to
 * whoever the host is, and shown to every reader of the hook), a fragment,
 * a host that names the metadata server, or is an IP literal or a single-label name (resolved
 * by the platform's own network's search domains) that the policy refuses.
 */
export function urlProblem(text: string, policy: UrlPolicy): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `at most ${MAX_URL_LENGTH} characters`
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'not an absolute URL'
  }
  const schemes = policy === 'public' ? ['https:'] : ['https:', 'http:']
  if (!schemes.includes(url.protocol)) return policy === 'public' ? 'must be https://' : 'must be http:// or https://'
  if (url.username || url.password) return 'must not carry a user name or password'
  if (url.hash) return 'must not have a fragment'
  if (policy === 'local') return undefined
  const host = hostOf(url)
  if (METADATA_HOSTS.has(host)) return `${host} is the metadata server`
  if (isIP(host) && !isPublicAddress(host)) return `${host} is not a public address`
  if (!host.includes('.')) return `${host} is not a public host name`
  return undefined
}

/**
 * What is wrong with the addresses a webhook's host resolved to under `policy`: none at all, or
 * any that is not public (a name that resolves to a public and a private address is refused: the
 * connection could be made to either).
 */
export function addressesProblem(host: string, addresses: readonly string[], policy: UrlPolicy): string | undefined {
  if (!addresses.length) return `${host} does not resolve to any address`
  if (policy === 'local') return undefined
  const refused = addresses.find((a) => !isPublicAddress(a))
  return refused === undefined ? undefined : `${host} resolves to ${refused}, which is not a public address`
}
