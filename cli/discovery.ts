import { HttpError, PlatformClient, UnreachableError } from './client.js'
import { CliError, EXIT, isLocalAddress, type ExitCode } from './errors.js'
import type { Discovered } from './settings.js'

/**
 * The platform from one address: its admin service's discovery document (GET /api/v1/service-info)
 * names every service's address, the identity provider and the environment. docs/discovery.md.
 */

const LOGIN_METHODS = new Set(['browser', 'password'])

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The document as the platform sends it, checked field by field: anything else is not a platform's. */
export function readServiceInfo(text: string): Omit<Discovered, 'url' | 'read_at'> {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    throw new Error('its answer is not JSON')
  }
  if (!isRecord(doc)) throw new Error('its answer is not a JSON object')
  const { environment, version, services, identity_provider: idp } = doc
  if (typeof environment !== 'string' || !environment) throw new Error('its answer names no environment')
  if (version !== undefined && version !== null && typeof version !== 'string') throw new Error('its version is not readable')
  if (!isRecord(services) || !Object.values(services).every((url) => typeof url === 'string' && /^https?:\/\//.test(url))) {
    throw new Error("its answer has no services' addresses")
  }
  if (idp !== null && !(isRecord(idp) && typeof idp.issuer === 'string')) throw new Error('its identity provider is not readable')
  const methods = idp?.cli_login_methods
  if (idp && methods !== null && !(Array.isArray(methods) && methods.every((m) => LOGIN_METHODS.has(m as string)))) {
    throw new Error("its identity provider's login methods are not readable")
  }
  return {
    environment,
    version: version ?? null,
    services: Object.fromEntries(Object.entries(services).map(([name, url]) => [name, (url as string).replace(/\/+$/, '')])),
    identity_provider: idp ? { issuer: idp.issuer as string, cli_login_methods: methods as Array<'browser' | 'password'> | null } : null,
  }
}

/**
 * Reads the discovery document at `url` (the admin service's address). Every failure says that the
 * platform was not found there and why: no answer (exit code 8), an answer that is not a platform's
 * (3: the address is wrong), a platform that fails (8).
 */
export async function discover(url: string, opts: { userAgent?: string; signal?: AbortSignal } = {}): Promise<Discovered> {
  const notFound = (reason: string, code: ExitCode = EXIT.usage) => new CliError(`cannot find the platform at ${url}: ${reason}`, code)
  let text: string
  try {
    text = await new PlatformClient({ baseUrl: () => url, userAgent: opts.userAgent, signal: opts.signal }).serviceInfo()
  } catch (error) {
    if (error instanceof UnreachableError) {
      const hint = isLocalAddress(url) ? 'is the local suite running? (npm start)' : 'check the address and your network'
      throw notFound(`${hint} (${error.reason})`, EXIT.unavailable)
    }
    if (error instanceof HttpError && error.status >= 500) throw notFound(`it answered ${error.status}: ${error.detail}`, EXIT.unavailable)
    if (error instanceof HttpError) {
      throw notFound(`GET ${url}/api/v1/service-info answered ${error.status} (${error.detail}): give the address of the platform's admin service`)
    }
    throw error
  }
  try {
    return { url, read_at: new Date().toISOString(), ...readServiceInfo(text) }
  } catch (error) {
    throw notFound(`${(error as Error).message}: give the address of the platform's admin service`)
  }
}
