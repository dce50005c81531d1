import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import { canInProject, type OrgRecord, type Principal, type ProjectRecord } from '../auth/access.js'
import type { Config } from '../config.js'
import type { AppEnv } from '../http.js'
import { html, publicBase, Raw } from '../pages.js'
import { csrfField } from './csrf.js'
import type { PageSession } from '../pages.js'

/**
 * The one layout of the console, whichever service serves the page: a header with the platform's
 * name, the current project (and where to switch it), the signed-in user and sign-out; the
 * sections' navigation across services (addresses from `config.publicUrls`); a <main>; a footer.
 */

export type Section = 'runs' | 'subjects' | 'orders' | 'reports' | 'account' | 'admin'

/** Each section: its service and its address under that service's /console (project pages take the project's id; without one, the service's /console opens the default project). */
const SECTIONS: ReadonlyArray<{ section: Section; label: string; service: string; path: (project?: string) => string }> = [
  { section: 'runs', label: 'Runs', service: 'compute', path: (p) => (p ? `/console/p/${p}/runs` : '/console') },
  { section: 'subjects', label: 'Subjects', service: 'clinical', path: (p) => (p ? `/console/p/${p}/subjects` : '/console') },
  { section: 'orders', label: 'Orders', service: 'clinical', path: (p) => (p ? `/console/p/${p}/orders` : '/console') },
  { section: 'reports', label: 'Reports', service: 'reports', path: (p) => (p ? `/console/p/${p}/reports` : '/console') },
  { section: 'account', label: 'Account', service: 'admin', path: () => '/console/account' },
  { section: 'admin', label: 'Admin', service: 'admin', path: () => '/console/orgs' },
]

/** A service's console address (`/console/...` under its public base), or undefined where the service's address is not configured. */
export function consoleUrl(config: Config, service: string, path: string): string | undefined {
  const base = config.publicUrls[service]
  return base ? `${base}${path}` : undefined
}

/**
 * The audit history of a record (the audit service's console), for a person who may read it there
 * (audit.read: project admins and auditors); undefined for anyone else, or where the audit service
 * has no address. `type` is the audit events' entity type (`order`, `subject`, `run`, `report`, …).
 */
export function historyUrl(
  config: Config,
  who: { principal: Principal; project: Pick<ProjectRecord, 'id' | 'org_id'> },
  type: string,
  id: string,
): string | undefined {
  if (!canInProject(who.principal, who.project, 'audit.read')) return undefined
  return consoleUrl(config, 'audit', `/console/p/${who.project.id}/history?entity=${encodeURIComponent(`${type}:${id}`)}`)
}

/** An address of the serving service's own console (`path` after /console), absolute under its public base: for redirects, which a front end's path prefix would break if built from the request's path. */
export const ownConsoleUrl = <E extends AppEnv>(c: Context<E>, path: string) => `${publicBase(c)}/console${path}`

/** The project chooser of the admin console (the header's "Switch project"). */
export const projectChooserUrl = (config: Config) => consoleUrl(config, 'admin', '/console/projects')

export type Tone = 'ok' | 'warn' | 'info' | 'pending' | 'neutral'

/** An instant as people read it (UTC, to the minute) in a <time> with the exact value; '—' for none. */
export function time(at: Date | { toDate(): Date } | string | undefined | null): Raw {
  if (!at) return html`—`
  const d = typeof at === 'string' ? new Date(at) : at instanceof Date ? at : at.toDate()
  if (Number.isNaN(d.getTime())) return html`—`
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`
}

/** A status written out (never colour alone). */
export const badge = (text: string, tone: Tone = 'neutral'): Raw => html`<span class="badge ${tone}">${text}</span>`

const NOTICE_COOKIE = 'console_notice'

/**
 * After a successful form, the page it redirects to says what happened in one line: the text rides
 * in a short-lived cookie of the console's path (never in the address, where a link from anywhere
 * could put words in the platform's mouth), read and cleared by the next page rendered.
 */
export function redirectWithNotice<E extends AppEnv>(c: Context<E>, location: string, notice: string): Response {
  setCookie(c, NOTICE_COOKIE, encodeURIComponent(notice.slice(0, 300)), {
    path: '/console',
    httpOnly: true,
    sameSite: 'Lax',
    maxAge: 60,
    secure: new URL(c.req.url).protocol === 'https:' || publicBase(c).startsWith('https:'),
  })
  return c.redirect(location, 303)
}

function takeNotice<E extends AppEnv>(c: Context<E>): string | undefined {
  const value = getCookie(c, NOTICE_COOKIE)
  if (value === undefined) return undefined
  deleteCookie(c, NOTICE_COOKIE, { path: '/console' })
  try {
    return decodeURIComponent(value)
  } catch {
    return undefined
  }
}

export interface ConsoleView {
  title: string
  body: Raw
  /** The signed-in caller (absent on a page shown before sign-in, e.g. an error). */
  session?: PageSession
  /** The project the page is about, and its organization (the header shows both). */
  project?: { project: ProjectRecord; org?: OrgRecord }
  /** The navigation entry to mark as current. */
  section?: Section
  /** Breadcrumbs above the title: links, then the page's own name. */
  crumbs?: Array<{ href: string; text: string }>
  /** Reload the page every so many seconds (a list while something is still running; see console.js). */
  refresh?: number
}

/** The whole HTML page. The assets are absolute under the serving service's public base, so a page renders the same at any depth. */
export function consoleDocument<E extends AppEnv>(c: Context<E>, view: ConsoleView): string {
  const config = c.get('deps').config
  const assets = `${publicBase(c)}/console/assets`
  const projectId = view.project?.project.id
  const notice = takeNotice(c)
  const nav = SECTIONS.flatMap((s) => {
    const href = consoleUrl(config, s.service, s.path(projectId))
    return href ? [html`<li><a href="${href}" ${view.section === s.section ? html` aria-current="page"` : ''}>${s.label}</a></li>`] : []
  })
  const chooser = projectChooserUrl(config)
  const signOut = consoleUrl(config, 'admin', '/console/sign-out')
  const user = view.session?.principal.user
  const home = consoleUrl(config, 'admin', '/console') ?? `${publicBase(c)}/console`
  const body = html`<a class="skip" href="#main">Skip to the content</a>
    <header class="top">
      <a class="brand" href="${home}">Pipeline Platform</a>
      <div class="who">
        ${
          view.project
            ? html`<span id="current-project"
                >Project: <strong>${view.project.org ? `${view.project.org.name} / ` : ''}${view.project.project.name}</strong></span
              >`
            : ''
        }
        ${user && chooser ? html`<a href="${chooser}" id="switch-project">Switch project</a>` : ''}
        ${user ? html`<span id="signed-in-user">Signed in as <strong>${user.name || user.email || user.id}</strong></span>` : ''}
        ${
          user && signOut && view.session
            ? html`<form class="inline" method="post" action="${signOut}">
                ${csrfField(view.session)}<button type="submit" class="link" id="sign-out">Sign out</button>
              </form>`
            : ''
        }
      </div>
    </header>
    ${
      user
        ? html`<nav class="sections" aria-label="Sections">
            <ul>
              ${nav}
            </ul>
          </nav>`
        : ''
    }
    <main id="main" tabindex="-1" ${view.refresh ? html` data-refresh="${view.refresh}"` : ''}>
      ${
        view.crumbs?.length
          ? html`<nav class="crumbs" aria-label="Breadcrumbs">
              ${view.crumbs.map((l) => html`<a href="${l.href}">${l.text}</a> › `)}${view.title}
            </nav>`
          : ''
      }
      ${notice ? html`<p class="notice ok" role="status" id="notice">${notice}</p>` : ''}
      <div id="live" class="visually-hidden" aria-live="polite"></div>
      ${view.body}
    </main>
    <footer class="bottom">Pipeline Platform console · clinical genomics · every action here is recorded in the audit log</footer>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${html`${view.title}`} · Pipeline Platform</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${html`${assets}`}/console.css">
<script src="${html`${assets}`}/console.js" defer></script></head>
<body>
${body}
</body></html>`
}

/** Answers with a console page. */
export function renderConsole<E extends AppEnv>(
  c: Context<E>,
  view: ConsoleView,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 412 | 429 | 500 = 200,
): Response {
  return c.html(consoleDocument(c, view), status)
}

/** A page that says why something cannot be shown or done, with the status that says the same. */
export function errorView(status: number, detail: string, extra?: Raw): Pick<ConsoleView, 'title' | 'body'> {
  const title =
    status === 401
      ? 'Sign in first'
      : status === 403
        ? 'Not allowed'
        : status === 404
          ? 'Not found'
          : status === 409 || status === 412
            ? 'Not possible now'
            : status >= 500
              ? 'Something went wrong'
              : 'Not accepted'
  return {
    title,
    body: html`<h1>${title}</h1>
      <p class="notice warn" role="alert" id="error">${detail}</p>
      ${extra ?? ''}`,
  }
}

/** Page-token pagination: a "Next" link with the API's `next_page_token` (and back to the first page), keeping the page's other query parameters. */
export function pager<E extends AppEnv>(c: Context<E>, nextPageToken: string | undefined | null): Raw {
  const url = new URL(c.req.url)
  const onLater = url.searchParams.has('page_token')
  if (!nextPageToken && !onLater) return html``
  const next = new URLSearchParams(url.searchParams)
  if (nextPageToken) next.set('page_token', nextPageToken)
  const first = new URLSearchParams(url.searchParams)
  first.delete('page_token')
  return html`<nav class="pager" aria-label="Pages">
    ${onLater ? html`<a href="?${first.toString()}" id="first-page">First page</a>` : ''}
    ${nextPageToken ? html`<a href="?${next.toString()}" id="next-page" rel="next">Next page</a>` : ''}
  </nav>`
}

/** A labelled form field with its hint and its error (the refusal's text next to the field it is about). */
export function field(opts: {
  name: string
  label: string
  type?: 'text' | 'email' | 'password' | 'number' | 'date' | 'datetime-local'
  value?: string
  hint?: string
  error?: string
  required?: boolean
  readonly?: boolean
  autocomplete?: string
  /** A <select> of these options instead of an input. */
  options?: ReadonlyArray<{ value: string; label: string }>
  /** A <textarea> instead of an input (longer text: an interpretation, a comment). */
  multiline?: boolean
  /** Its element id, where the same form is repeated on a page (one per variant of a report); `f-<name>` otherwise. */
  id?: string
}): Raw {
  const id = opts.id ?? `f-${opts.name}`
  const described = [opts.hint ? `${id}-hint` : '', opts.error ? `${id}-error` : ''].filter(Boolean).join(' ')
  const common = html`id="${id}"
  name="${opts.name}"${described ? html` aria-describedby="${described}"` : ''}${
    opts.error ? html` aria-invalid="true"` : ''
  }${opts.required ? html` required` : ''}`
  const control = opts.options
    ? html`<select ${common}>
        ${opts.options.map((o) => html`<option value="${o.value}" ${o.value === opts.value ? html` selected` : ''}>${o.label}</option>`)}
      </select>`
    : opts.multiline
      ? html`<textarea ${common} rows="3" ${opts.readonly ? html` readonly` : ''}>${opts.value ?? ''}</textarea>`
      : html`<input
          ${common}
          type="${opts.type ?? 'text'}"
          value="${opts.value ?? ''}"
          ${opts.readonly ? html` readonly` : ''}${opts.autocomplete ? html` autocomplete="${opts.autocomplete}"` : ''}
        />`
  return html`<div class="field">
    <label for="${id}">${opts.label}</label>
    ${opts.hint ? html`<span class="hint" id="${id}-hint">${opts.hint}</span>` : ''} ${control}
    ${opts.error ? html`<span class="error" id="${id}-error">${opts.error}</span>` : ''}
  </div>`
}

/**
 * The confirmation page of a dangerous action (the path without JavaScript; with it, console.js
 * asks in a dialog and sends `confirmed=yes`): the question and a form that posts the same fields
 * again, confirmed.
 */
export function confirmView(opts: {
  session: PageSession
  title: string
  question: string
  action: string
  fields?: Record<string, string>
  submit: string
  cancel: string
}): Pick<ConsoleView, 'title' | 'body'> {
  return {
    title: opts.title,
    body: html`<h1>${opts.title}</h1>
      <p id="question">${opts.question}</p>
      <form method="post" action="${opts.action}" class="actions">
        ${csrfField(opts.session)} ${Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}
        <input type="hidden" name="confirmed" value="yes" />
        <button type="submit" class="danger" id="confirm">${opts.submit}</button>
        <a href="${opts.cancel}" class="button secondary">Cancel</a>
      </form>`,
  }
}

export { Raw }
