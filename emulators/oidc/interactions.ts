import type { IncomingMessage, ServerResponse } from 'node:http'
import type Provider from 'oidc-provider'
import type { Client, KoaContextWithOIDC } from 'oidc-provider'
import type { AccountStore } from './accounts.js'

const MAX_FORM_BYTES = 16 * 1024

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!)

/** Every page of the provider: one look, no outside resources. */
function page(title: string, body: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto}label,input,button{display:block;width:100%;margin:.4rem 0}
input{padding:.4rem;box-sizing:border-box}.error{color:#b00020}.code{font-size:1.6rem;font-family:monospace;letter-spacing:.1em}</style></head>
<body>${body}</body></html>`
}

function loginPage(uid: string, opts: { email?: string; error?: string; client: string }) {
  return page(
    'Sign in',
    `<h1>Sign in</h1><p>to continue to <strong>${escapeHtml(opts.client)}</strong></p>
${opts.error ? `<p class="error" role="alert">${escapeHtml(opts.error)}</p>` : ''}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="on">
<label for="email">E-mail</label><input id="email" name="email" type="email" required autofocus value="${escapeHtml(opts.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" required>
<button type="submit">Sign in</button></form>
<p><a href="/interaction/${escapeHtml(uid)}/abort">Cancel</a></p>`,
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
${problem ? `<p class="error" role="alert">${problem}</p>` : '<p>Enter the code that the device (the command line) shows.</p>'}
<label for="user_code">Code</label>${field}
<button type="submit" form="op.deviceInputForm">Continue</button>`,
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
<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button>`,
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
      send(res, 401, loginPage(details.uid, { email, error: 'Wrong e-mail or password.', client: clientId }))
      return true
    }
    await provider.interactionFinished(req, res, { login: { accountId: account.accountId } }, { mergeWithLastSubmission: false })
    return true
  }

  if (details.prompt.name === 'login') {
    send(
      res,
      200,
      loginPage(details.uid, { client: clientId, email: typeof details.params.login_hint === 'string' ? details.params.login_hint : undefined }),
    )
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
