import type { Context } from 'hono'
import type { z } from '@hono/zod-openapi'
import type { ServiceUserRecord } from '../../../domain/tenancy/service-users.js'
import type { AdminEnv } from '../deps.js'
import { issueServiceKey, serviceUserFor } from '../routes/service-users.js'
import type { NewServiceKey } from '../schemas.js'
import { adminConsole } from './app.js'
import {
  auditContext,
  badge,
  confirmView,
  csrfField,
  html,
  ownConsoleUrl,
  redirectWithNotice,
  renderConsole,
  requireConsoleSession,
  stopWithPage,
  time,
  type ConsoleSession,
} from './kit.js'

/**
 * A service user of an organization (org admins): its project roles, its keys (public parts), a
 * new key whose private half is shown once and offered as a JSON file (the API's answer to POST
 * /service-users/{id}/keys, which is what a machine needs to sign its assertions), and revocation.
 */

async function serviceUserPage(c: Context<AdminEnv>, session: ConsoleSession, user: ServiceUserRecord, created?: z.infer<typeof NewServiceKey>) {
  const deps = c.get('deps')
  const [keys, roles] = await Promise.all([deps.serviceUsers.listKeys(user.id), deps.access.rolesOf(user.id)])
  const projects = await Promise.all([...roles.projectRoles.keys()].map((id) => deps.access.getProject(id)))
  const keyFile = created ? Buffer.from(JSON.stringify(created, null, 2)).toString('base64') : undefined
  const body = html`<p class="crumbs"><a href="${ownConsoleUrl(c, `/orgs/${user.org_id}`)}">Organization</a> › Service user</p>
    <h1>Service user ${user.name}</h1>
    <dl class="facts">
      <dt>Id</dt>
      <dd><code>${user.id}</code></dd>
      <dt>Description</dt>
      <dd>${user.description ?? '—'}</dd>
      <dt>State</dt>
      <dd>${user.disabled ? badge('disabled', 'warn') : badge('enabled', 'ok')}</dd>
      <dt>Created</dt>
      <dd>${time(user.created)}</dd>
      <dt>Project roles</dt>
      <dd>
        ${
          projects.some(Boolean)
            ? html`<ul>
                ${projects.map((p) => (p ? html`<li><a href="${ownConsoleUrl(c, `/p/${p.id}/members`)}">${p.name}</a>: ${(roles.projectRoles.get(p.id) ?? []).join(', ')}</li>` : ''))}
              </ul>`
            : html`none yet: add it to a project's members by its id`
        }
      </dd>
    </dl>
    ${
      created && keyFile
        ? html`<section class="secret" aria-labelledby="new-key-title" id="new-key">
            <h2 id="new-key-title">The new key ${created.key_id}</h2>
            <p role="alert"><strong>Save the private key now: it is shown this once.</strong> The platform keeps only the public key.</p>
            <p class="actions">
              <a class="button" id="download-key" download="service-key-${created.key_id}.json" href="data:application/json;base64,${keyFile}"
                >Download the key as a JSON file</a
              >
              <button type="button" class="secondary" data-copy="private-key">Copy the private key (PEM)</button>
            </p>
            <label for="private-key">Private key (PKCS #8 PEM)</label>
            <textarea id="private-key" class="value mono" rows="6" readonly>${created.private_key_pem}</textarea>
            <p>Sign assertions with it (header <code>kid</code> ${created.key_id}) and exchange them at <code>${created.token_endpoint}</code>.</p>
          </section>`
        : ''
    }
    <h2 id="keys-title">Keys</h2>
    ${
      keys.length
        ? html`<div class="table-wrap">
            <table id="keys" aria-labelledby="keys-title">
              <thead>
                <tr>
                  <th scope="col">Key id</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${keys.map(
                  (k) =>
                    html`<tr>
                      <td><code>${k.id}</code></td>
                      <td>${k.revoked_at ? badge('revoked', 'warn') : badge('active', 'ok')}</td>
                      <td>${time(k.created)}</td>
                      <td>${k.last_used_at ? time(k.last_used_at) : 'never'}</td>
                      <td>
                        ${
                          k.revoked_at
                            ? ''
                            : html`<form
                                class="inline"
                                method="post"
                                action="${ownConsoleUrl(c, `/service-users/${user.id}/keys/${k.id}/revoke`)}"
                                data-confirm="Revoke the key ${k.id}? The tokens obtained with it stop working at once."
                              >
                                ${csrfField(session)}<button type="submit" class="danger">
                                  Revoke<span class="visually-hidden"> key ${k.id}</span>
                                </button>
                              </form>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="muted">No keys yet.</p>`
    }
    <form method="post" action="${ownConsoleUrl(c, `/service-users/${user.id}/keys`)}" class="actions">
      ${csrfField(session)}<button type="submit" id="create-key">Create a key</button>
    </form>`
  c.header('Cache-Control', 'no-store')
  return renderConsole(c, { title: `Service user ${user.name}`, section: 'admin', session, body })
}

/** The service user of the address, as the API finds it (404 outside the caller's organizations, 403 without service_user.manage). */
async function load(c: Context<AdminEnv>) {
  const session = await requireConsoleSession(c)
  const user = await serviceUserFor(c, c.req.param('id') ?? '', 'service_user.manage')
  return { session, user }
}

adminConsole.get('/service-users/:id', async (c) => {
  const { session, user } = await load(c)
  return serviceUserPage(c, session, user)
})

adminConsole.post('/service-users/:id/keys', async (c) => {
  const { session, user } = await load(c)
  const created = await issueServiceKey(c, user)
  return serviceUserPage(c, session, user, created)
})

adminConsole.post('/service-users/:id/keys/:key/revoke', async (c) => {
  const { session, user } = await load(c)
  const deps = c.get('deps')
  const keyId = c.req.param('key')
  const key = (await deps.serviceUsers.listKeys(user.id)).find((k) => k.id === keyId)
  if (!key) return stopWithPage(c, 404, `${user.name} has no such key.`)
  if (!session.form.confirmed) {
    return renderConsole(c, {
      session,
      section: 'admin',
      ...confirmView({
        session,
        title: 'Revoke a key',
        question: `Revoke the key ${key.id} of ${user.name}? The tokens obtained with it stop working at once; this cannot be undone.`,
        action: ownConsoleUrl(c, `/service-users/${user.id}/keys/${key.id}/revoke`),
        submit: 'Revoke the key',
        cancel: ownConsoleUrl(c, `/service-users/${user.id}`),
      }),
    })
  }
  await deps.serviceUsers.revokeKey(auditContext(c), user, key.id)
  return redirectWithNotice(c, ownConsoleUrl(c, `/service-users/${user.id}`), `The key ${key.id} is revoked.`)
})
