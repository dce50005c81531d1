import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import type { Hono } from 'hono'
import { createAdminApp } from '../../functions/admin/service.js'
import { platformOidcEnv, startOidcProvider, type OidcCliClientSeed, type RunningOidcProvider } from '../../emulators/oidc/provider.js'
import { makeWorld, rand } from './world.js'

export const TEST_AUDIENCE = 'urn:pipeline-platform:api'

/**
 * The CLI's own client at the provider (OIDC_CLI_CLIENT_ID), as providers register one:
 *  - public: no secret, the device grant but no password grant (Entra ID, Okta);
 *  - google: Google's "TVs and Limited Input devices" client: a secret, the device grant only,
 *    opaque access tokens, and Google's device answers (verification_url, 428 while pending);
 *  - confidential: a secret, both grants, opaque access tokens (the local suite's CLI client).
 */
export type CliClientShape = 'public' | 'google' | 'confidential'

function cliClientSeed(shape: CliClientShape): OidcCliClientSeed {
  const secret = randomBytes(24).toString('base64url')
  switch (shape) {
    case 'public':
      return { client_id: 'platform-cli' }
    case 'google':
      return { client_id: 'platform-cli', client_secret: secret, opaque_access_tokens: true, google_device_answers: true }
    case 'confidential':
      return { client_id: 'platform-cli', client_secret: secret, password_grant: true, opaque_access_tokens: true }
  }
}

/** Listens on 127.0.0.1 at a free port; the app can be set after the address is known. */
export async function listen(): Promise<{ url: string; server: Server; serve(app: Hono<any>): void; stop(): Promise<void> }> {
  let fetchApp: ((req: Request) => Response | Promise<Response>) | undefined
  const server = createServer(getRequestListener((req) => (fetchApp ? fetchApp(req) : new Response('starting', { status: 503 }))))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    serve: (app) => (fetchApp = (req) => app.fetch(req)),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/**
 * The login stack of the tests: the local OIDC provider with one user and the platform's client,
 * and the admin service served on a real local port (so that redirects carry real addresses),
 * configured with the environment variables a deployment would set.
 */
export async function startLoginStack(
  extraEnv: Record<string, string> = {},
  opts: {
    otherUsers?: string[]
    /** A client of the CLI's own at the provider (OIDC_CLI_CLIENT_ID); without it the CLI's logins use the platform's client. */
    cliClient?: CliClientShape
    deviceCodeTtlSeconds?: number
    /** false: a provider that does not offer the device authorization grant (the CLI's browser login). */
    deviceFlow?: boolean
  } = {},
) {
  const admin = await listen()
  const user = { email: `ann-${rand()}@example.org`, password: randomBytes(12).toString('base64url'), name: 'Ann Example' }
  // More people at the provider, by name (a reviewer, a second signer), each with an e-mail and password of their own.
  const others = (opts.otherUsers ?? []).map((name) => ({
    email: `${name.toLowerCase().replaceAll(/\W+/g, '-')}-${rand()}@example.org`,
    password: randomBytes(12).toString('base64url'),
    name,
  }))
  const client = {
    client_id: 'platform-admin',
    client_secret: randomBytes(24).toString('base64url'),
    redirect_uris: [`${admin.url}/api/v1/auth/callback`],
  }
  const cliClient = opts.cliClient ? cliClientSeed(opts.cliClient) : undefined
  const provider = await startOidcProvider({
    users: [user, ...others],
    clients: [client, ...(cliClient ? [cliClient] : [])],
    audience: TEST_AUDIENCE,
    deviceCodeTtlSeconds: opts.deviceCodeTtlSeconds,
    deviceFlow: opts.deviceFlow,
  })
  const env: Record<string, string> = {
    ...platformOidcEnv(provider, client, TEST_AUDIENCE, cliClient),
    ADMIN_PUBLIC_URL: admin.url,
    ...extraEnv,
  }
  const world = await makeWorld(env)
  const app = createAdminApp(world.deps)
  admin.serve(app)
  return {
    world,
    app,
    env,
    adminUrl: admin.url,
    provider,
    user,
    others,
    client,
    async stop() {
      await Promise.all([admin.stop(), provider.stop()])
    },
  }
}

export type { RunningOidcProvider }

export interface StoredCookie {
  name: string
  value: string
  path: string
  attributes: Map<string, string>
}

/**
 * Just enough of a browser for login flows: follows no redirect by itself, keeps cookies per host
 * (as browsers do, whatever the port) with their paths, and sends the ones whose path matches.
 */
export class Browser {
  readonly cookies = new Map<string, StoredCookie[]>()

  cookie(url: string, name: string): StoredCookie | undefined {
    return (this.cookies.get(new URL(url).hostname) ?? []).find((c) => c.name === name)
  }

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url)
    const headers = new Headers(init.headers)
    const jar = this.cookies.get(target.hostname) ?? []
    const sent = jar.filter((c) => target.pathname === c.path || target.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
    const fromJar = sent.map((c) => `${c.name}=${c.value}`)
    if (fromJar.length) headers.set('cookie', [headers.get('cookie'), ...fromJar].filter(Boolean).join('; '))
    const res = await fetch(target, { ...init, headers, redirect: 'manual' })
    for (const line of res.headers.getSetCookie()) this.store(target, line)
    return res
  }

  /** Follows redirects like a browser does (a 303 becomes a GET), returning the first non-redirect answer. */
  async follow(url: string, init: RequestInit = {}, max = 15): Promise<{ res: Response; url: string }> {
    let current = url
    let res = await this.request(current, init)
    for (let i = 0; i < max && res.status >= 300 && res.status < 400; i++) {
      current = new URL(res.headers.get('location')!, current).href
      res = await this.request(current)
    }
    return { res, url: current }
  }

  private store(from: URL, line: string) {
    const [pair = '', ...parts] = line.split(';')
    const eq = pair.indexOf('=')
    const name = pair.slice(0, eq).trim()
    const value = pair.slice(eq + 1).trim()
    const attributes = new Map(
      parts.map((p) => {
        const [k = '', ...v] = p.trim().split('=')
        return [k.toLowerCase(), v.join('=')] as const
      }),
    )
    const defaultPath = from.pathname.slice(0, from.pathname.lastIndexOf('/')) || '/'
    const path = attributes.get('path') || defaultPath
    const expired = attributes.get('max-age') === '0' || (attributes.has('expires') && Date.parse(attributes.get('expires')!) <= Date.now())
    const jar = (this.cookies.get(from.hostname) ?? []).filter((c) => !(c.name === name && c.path === path))
    if (!expired) jar.push({ name, value, path, attributes })
    this.cookies.set(from.hostname, jar)
  }
}

/** Fills and submits the provider's login form found in `html`. */
export async function submitLoginForm(browser: Browser, pageUrl: string, html: string, credentials: { email: string; password: string }) {
  const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
  if (!action) throw new Error(`no login form in the page at ${pageUrl}`)
  const landed = await browser.follow(new URL(action.replace(/&amp;/g, '&'), pageUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: credentials.email, password: credentials.password }).toString(),
  })
  return submitAutoPost(browser, landed)
}

/**
 * What a browser with JavaScript does with the provider's self-submitting form (response_mode
 * form_post, or its logout of the previous account when another one signs in): posts it, and
 * follows on. Any other page is returned as it is.
 */
export async function submitAutoPost(browser: Browser, page: { res: Response; url: string }): Promise<{ res: Response; url: string }> {
  if (!(page.res.headers.get('content-type') ?? '').includes('text/html')) return page
  const html = await page.res.clone().text()
  if (!html.includes('document.forms[0].submit()')) return page
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]
  if (!action) return page
  const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')])
  const next = await browser.follow(new URL(action.replace(/&amp;/g, '&'), page.url).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
  return submitAutoPost(browser, next)
}

/** A whole browser login: /auth/login, the provider's form, the callback; returns where it landed. */
export async function browserLogin(browser: Browser, adminUrl: string, credentials: { email: string; password: string }, returnTo?: string) {
  const start = `${adminUrl}/api/v1/auth/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`
  const form = await browser.follow(start)
  if (form.res.status !== 200) throw new Error(`expected the login form, got ${form.res.status} at ${form.url}`)
  return submitLoginForm(browser, form.url, await form.res.text(), credentials)
}

/**
 * A person finishing a device login at the provider (RFC 8628 §3.3): the address with the code
 * filled in (a self-submitting form), or, where the provider gives none (Google, Entra ID), its
 * page where they type the code; then the page that shows the code to confirm, then the
 * provider's login form, or Cancel on the confirmation. Returns the last page.
 */
export async function confirmDeviceLogin(
  browser: Browser,
  login: string | { verification_uri: string; user_code: string },
  credentials: { email: string; password: string },
  opts: { cancel?: boolean } = {},
) {
  const confirmation = typeof login === 'string' ? await submitAutoPost(browser, await browser.follow(login)) : await typeDeviceCode(browser, login)
  const html = await confirmation.res.text()
  const action = /<form id="op.deviceConfirmForm" method="post" action="([^"]+)"/.exec(html)?.[1]
  if (!action) throw new Error(`no device confirmation form at ${confirmation.url}:\n${html}`)
  const fields = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map(([, k, v]) => [k!, v!.replace(/&amp;/g, '&')])
  const answered = await browser.follow(new URL(action, confirmation.url).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams([...fields, ...(opts.cancel ? [['abort', 'yes']] : [])]).toString(),
  })
  if (opts.cancel) return answered
  return submitLoginForm(browser, answered.url, await answered.res.text(), credentials)
}

/** The provider's page where the person types the code the device shows, submitted with it. */
async function typeDeviceCode(browser: Browser, login: { verification_uri: string; user_code: string }) {
  const page = await browser.follow(login.verification_uri)
  const html = await page.res.text()
  const action = /<form id="op.deviceInputForm" novalidate method="post" action="([^"]+)"/.exec(html)?.[1]
  const xsrf = /<input type="hidden" name="xsrf" value="([^"]*)"\/>/.exec(html)?.[1]
  if (!action || xsrf === undefined) throw new Error(`no code form at ${page.url}:\n${html}`)
  return browser.follow(new URL(action, page.url).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ xsrf, user_code: login.user_code }).toString(),
  })
}
