import type { Context } from 'hono'
import type { PersonalTokenRecord } from '../../../lib/auth/tokens.js'
import type { AdminEnv } from '../deps.js'
import {
  createPersonalToken,
  DEFAULT_TOKEN_DAYS,
  expiryOf,
  listPersonalTokens,
  MAX_TOKEN_DAYS,
  revokePersonalToken,
  stateOf,
} from '../personal-tokens.js'
import { adminConsole } from './app.js'
import {
  auditContext,
  badge,
  confirmView,
  csrfField,
  field,
  formRefusal,
  html,
  ownConsoleUrl,
  redirectWithNotice,
  renderConsole,
  requireConsoleSession,
  stopWithPage,
  time,
  type ConsoleSession,
  type Raw,
} from './kit.js'

/**
 * Account → CLI tokens: the person's personal access tokens (what `platform login --token-stdin`
 * takes), made, listed and revoked with the same functions as /users/me/tokens. The value is shown
 * once, in the answer to the form that made it (never stored, never in an address).
 */

const STATE_TONE = { active: 'ok', expired: 'neutral', revoked: 'warn' } as const

function tokensTable(tokens: PersonalTokenRecord[], now: Date, session: ConsoleSession): Raw {
  if (!tokens.length) return html`<p class="muted" id="no-tokens">You have no CLI tokens.</p>`
  return html`<div class="table-wrap">
    <table id="tokens">
      <caption>
        Your CLI tokens, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Token</th>
          <th scope="col">State</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Last used</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        ${tokens.map((t) => {
          const state = stateOf(t, now)
          return html`<tr id="token-${t.id}">
            <td>${t.name}</td>
            <td><code>${t.hint}…</code></td>
            <td>${badge(state, STATE_TONE[state])}</td>
            <td>${time(t.created)}</td>
            <td>${time(t.expires_at)}</td>
            <td>${t.last_used_at ? time(t.last_used_at) : 'never'}</td>
            <td>
              ${
                state === 'active'
                  ? html`<form
                      class="inline"
                      method="post"
                      action="tokens/${t.id}/revoke"
                      data-confirm="Revoke the token ${t.name}? Whatever uses it stops working at once."
                    >
                      ${csrfField(session)}<button type="submit" class="danger">Revoke<span class="visually-hidden"> ${t.name}</span></button>
                    </form>`
                  : ''
              }
            </td>
          </tr>`
        })}
      </tbody>
    </table>
  </div>`
}

function createForm(session: ConsoleSession, values: { name?: string; days?: string }, errors: { name?: string; days?: string } = {}): Raw {
  return html`<form class="stack" method="post" action="tokens" id="create-token">
    ${csrfField(session)}
    ${field({ name: 'name', label: 'Name', hint: 'What the token is for, e.g. "laptop CLI" or "CI".', value: values.name, error: errors.name, required: true })}
    ${field({
      name: 'expires_in_days',
      label: 'Expires after (days)',
      type: 'number',
      hint: `From 1 to ${MAX_TOKEN_DAYS} days.`,
      value: values.days ?? String(DEFAULT_TOKEN_DAYS),
      error: errors.days,
      required: true,
    })}
    <div><button type="submit">Create token</button></div>
  </form>`
}

async function tokensPage(
  c: Context<AdminEnv>,
  session: ConsoleSession,
  opts: {
    created?: { name: string; value: string; expires: Date }
    values?: { name?: string; days?: string }
    errors?: { name?: string; days?: string }
  } = {},
  status: 200 | 400 | 403 = 200,
) {
  const deps = c.get('deps')
  const tokens = await listPersonalTokens(deps, session.principal.user.id)
  const created = opts.created
  const body = html`<p class="crumbs"><a href="account">Account</a> › CLI tokens</p>
    <h1>CLI tokens</h1>
    <p>A CLI token lets the command-line tool act as you: <code>platform login --token-stdin</code>, then paste it. It has your roles, no more.</p>
    ${
      created
        ? html`<section class="secret" aria-labelledby="new-token-title" id="new-token">
            <h2 id="new-token-title">Your new token "${created.name}"</h2>
            <p role="alert">
              <strong>Copy it now: it is shown this once.</strong> The platform keeps only a hash of it; if you lose it, revoke it and make another.
            </p>
            <code class="value" id="token-value">${created.value}</code>
            <div class="actions">
              <button type="button" data-copy="token-value">Copy the token</button>
              <span class="muted">Expires ${time(created.expires)}.</span>
            </div>
          </section>`
        : ''
    }
    <h2>Create a token</h2>
    ${createForm(session, opts.values ?? {}, opts.errors)}
    <h2>Your tokens</h2>
    ${tokensTable(tokens, deps.clock.now(), session)}`
  c.header('Cache-Control', 'no-store')
  return renderConsole(c, { title: 'CLI tokens', section: 'account', session, body }, status)
}

adminConsole.get('/tokens', async (c) => tokensPage(c, await requireConsoleSession(c)))

adminConsole.post('/tokens', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const name = session.form.get('name')
  const days = session.form.get('expires_in_days')
  const values = { name, days }
  if (!name || name.length > 100) return tokensPage(c, session, { values, errors: { name: 'Give the token a name of 1 to 100 characters.' } }, 400)
  const n = Number(days)
  if (!/^\d+$/.test(days) || n < 1 || n > MAX_TOKEN_DAYS) {
    return tokensPage(c, session, { values, errors: { days: `A whole number of days from 1 to ${MAX_TOKEN_DAYS}.` } }, 400)
  }
  try {
    const expiresAt = expiryOf({ expires_in_days: n }, deps.clock.now())
    const created = await createPersonalToken(deps, auditContext(c), session.principal.user, { name, expiresAt })
    return tokensPage(c, session, { created: { name, value: created.value, expires: expiresAt } })
  } catch (error) {
    const refused = await formRefusal(c, error)
    return tokensPage(c, session, { values, errors: { name: refused.detail } }, refused.status === 403 ? 403 : 400)
  }
})

adminConsole.post('/tokens/:id/revoke', async (c) => {
  const session = await requireConsoleSession(c)
  const deps = c.get('deps')
  const id = c.req.param('id')
  const token = (await listPersonalTokens(deps, session.principal.user.id)).find((t) => t.id === id)
  if (!token) return stopWithPage(c, 404, 'You have no such token.')
  if (!session.form.confirmed) {
    return renderConsole(c, {
      session,
      section: 'account',
      ...confirmView({
        session,
        title: 'Revoke a CLI token',
        question: `Revoke the token "${token.name}" (${token.hint}…)? Whatever uses it stops working at once; this cannot be undone.`,
        action: ownConsoleUrl(c, `/tokens/${id}/revoke`),
        submit: 'Revoke the token',
        cancel: ownConsoleUrl(c, '/tokens'),
      }),
    })
  }
  await revokePersonalToken(deps, auditContext(c), session.principal.user.id, id)
  return redirectWithNotice(c, ownConsoleUrl(c, '/tokens'), `The token "${token.name}" is revoked.`)
})
