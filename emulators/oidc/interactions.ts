import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { Client, KoaContextWithOIDC } from 'oidc-provider'
import { CONSOLE_CSS } from '../../lib/console/style.js'
import type { AccountStore } from './accounts.js'

const MAX_FORM_BYTES = 16 * 1024

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

/**
 * Every page of the provider, in the console's look (its one stylesheet, lib/console/style.ts,
 * inline: the provider is an origin of its own), with nothing from outside: a header that says
 * whose page it is, one <main>, labelled fields.
 */
function page(title: string, body: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Local identity provider</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${CONSOLE_CSS}
main { max-width: 28rem; }
.provider-note { font-size: 0.85rem; }
.code { font-size: 1.6rem; font-family: "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; letter-spacing: 0.1em; }
form.device input[name="user_code"] { font: inherit; padding: 0.45rem 0.55rem; border: 1px solid #8a939e; border-radius: 4px; width: 100%; }
</style></head>
<body><header class="top"><span class="brand">Local identity provider</span><span class="provider-note">the local suite's sign-in, standing in for your organization's</span></header>
<main id="main">${body}</main>
<footer class="bottom">Passwords here are the local suite's test accounts (see docs/local-suite.md).</footer></body></html>`
}

interface LoginPage {
  client: string
  /** The e-mail to show: what was typed, or the platform's login_hint. */
  email?: string
  /** The platform named the person (login_hint): the field is theirs, not to be changed. */
  hinted?: boolean
  /** A re-authentication (prompt=login or max_age=0): the person confirms it is them, for `purpose` when the platform says. */
  reauthentication?: boolean
  purpose?: string
  error?: string
}

function loginPage(uid: string, opts: LoginPage) {
  const title = opts.reauthentication ? 'Confirm it is you' : 'Sign in'
  const why = opts.reauthentication
    ? opts.purpose
      ? `<p class="notice info" id="purpose">Sign in again to confirm: <strong>${escapeHtml(opts.purpose)}</strong></p>`
      : '<p class="notice info" id="purpose">Sign in again to confirm an action that needs a fresh sign-in.</p>'
    : `<p>to continue to <strong>${escapeHtml(opts.client)}</strong></p>`
  const email = opts.hinted
    ? `<input id="email" name="email" type="email" required readonly aria-describedby="email-hint" value="${escapeHtml(opts.email ?? '')}">
<span class="hint" id="email-hint">The platform asks for this account's password.</span>`
    : `<input id="email" name="email" type="email" required autofocus autocomplete="username" value="${escapeHtml(opts.email ?? '')}">`
  return page(
    title,
    `<h1>${title}</h1>${why}
${opts.error ? `<p class="notice warn" role="alert" id="error">${escapeHtml(opts.error)}</p>` : ''}
<form class="stack" method="post" action="/interaction/${escapeHtml(uid)}/login">
<div class="field"><label for="email">E-mail</label>${email}</div>
<div class="field"><label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password"${opts.hinted ? ' autofocus' : ''}></div>
<div class="actions"><button type="submit">${opts.reauthentication ? 'Confirm' : 'Sign in'}</button><a href="/interaction/${escapeHtml(uid)}/abort">Cancel</a></div></form>`,
  )
}

const clientName = (client: Client) => escapeHtml(String(client.clientName ?? client.clientId))

/**
 * The pages of the device authorization grant (RFC 8628 §3.3), which oidc-provider serves at
 * /device: the code to type (the address with the code filled in skips it), the confirmation that
 * the code is the one the device shows, which begins the sign-in and consent above, and the end.
 * oidc-provider builds the forms (with their CSRF field); these pages only frame them.
 */
export const devicePages = {
  userCodeInputSource(ctx: KoaContextWithOIDC, form: string, _out?: unknown, err?: Error) {
    const problem = !err
      ? ''
      : err.name === 'AbortedError'
        ? 'The sign-in was cancelled.'
        : err.name === 'NoCodeError' || 'userCode' in err
          ? 'That code is unknown, used or expired. Check it and try again.'
          : 'Something went wrong. Start again from the device.'
    // The form's text field has no id of its own: this one lets the label name it.
    const field = form.replace('name="user_code"', 'name="user_code" id="user_code"')
    ctx.body = page(
      'Connect a device',
      `<h1>Connect a device</h1>
${problem ? `<p class="notice warn" role="alert">${problem}</p>` : '<p>Enter the code that the device (the command line) shows.</p>'}
<div class="field"><label for="user_code">Code</label>${field}</div>
<div class="actions"><button type="submit" form="op.deviceInputForm">Continue</button></div>`,
    )
  },

  userCodeConfirmSource(ctx: KoaContextWithOIDC, form: string, client: Client, _deviceInfo: unknown, userCode: string) {
    ctx.body = page(
      'Confirm the device',
      `<h1>Confirm the device</h1>
<p><strong>${clientName(client)}</strong> asks to sign you in on a device that shows this code:</p>
<p class="code">${escapeHtml(userCode)}</p>
<p>Continue only if you started this sign-in and the code is the same. If not, cancel.</p>
${form}
<div class="actions"><button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" class="secondary" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button></div>`,
    )
  },

  successSource(ctx: KoaContextWithOIDC) {
    const client = ctx.oidc.client ? ` to <strong>${clientName(ctx.oidc.client)}</strong>` : ''
    ctx.body = page('Signed in', `<h1>Signed in</h1><p>You are signed in${client} on the device. You can close this page.</p>`)
  },
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_FORM_BYTES) throw new Error('form too large')
    chunks.push(chunk)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

/** What the authorization request says about the sign-in it asks for: whom (login_hint), whether it is a re-authentication, and what for (purpose). */
function loginContext(params: Record<string, unknown>, client: string): LoginPage {
  const hint = typeof params.login_hint === 'string' && params.login_hint ? params.login_hint : undefined
  const prompts = typeof params.prompt === 'string' ? params.prompt.split(' ') : []
  const purpose = typeof params.purpose === 'string' && params.purpose ? params.purpose.slice(0, 200) : undefined
  return {
    client,
    ...(hint ? { email: hint, hinted: true } : {}),
    reauthentication: prompts.includes('login') || params.max_age === 0 || params.max_age === '0',
    ...(purpose ? { purpose } : {}),
  }
}

function send(res: ServerResponse, status: number, html: string) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY' })
  res.end(html)
}

/**
 * The provider's own pages at /interaction/{uid}: the login form, which checks e-mail and
 * password against the in-memory accounts, and consent, which is granted without asking because
 * the only registered clients are the platform's own (first-party) applications.
 * Answers false when the request is not for an interaction page.
 */
export async function handleInteraction(provider: Provider, accounts: AccountStore, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://local')
  const match = /^\/interaction\/([\w-]+)(?:\/(login|abort))?$/.exec(url.pathname)
  if (!match) return false
  const action = match[2]

  const details = await provider.interactionDetails(req, res)
  const clientId = String(details.params.client_id ?? '')

  if (action === 'abort') {
    await provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'the user cancelled the sign-in' },
      { mergeWithLastSubmission: false },
    )
    return true
  }

  if (action === 'login') {
    if (req.method !== 'POST') {
      send(res, 405, 'method not allowed')
      return true
    }
    const form = await readForm(req)
    const email = form.get('email') ?? ''
    const account = await accounts.authenticate(email, form.get('password') ?? '')
    if (!account) {
      send(res, 401, loginPage(details.uid, { ...loginContext(details.params, clientId), email, error: 'Wrong e-mail or password.' }))
      return true
    }
    await provider.interactionFinished(req, res, { login: { accountId: account.accountId } }, { mergeWithLastSubmission: false })
    return true
  }

  if (details.prompt.name === 'login') {
    send(res, 200, loginPage(details.uid, loginContext(details.params, clientId)))
    return true
  }

  if (details.prompt.name === 'consent') {
    const accountId = details.session?.accountId
    if (!accountId) throw new Error('consent prompt without a logged-in account')
    const grant = details.grantId
      ? ((await provider.Grant.find(details.grantId)) ?? new provider.Grant({ accountId, clientId }))
      : new provider.Grant({ accountId, clientId })
    const missing = details.prompt.details as {
      missingOIDCScope?: string[]
      missingOIDCClaims?: string[]
      missingResourceScopes?: Record<string, string[]>
    }
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '))
    }
    const grantId = await grant.save()
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    return true
  }

  send(res, 400, `unsupported interaction prompt ${escapeHtml(details.prompt.name)}`)
  return true
}
