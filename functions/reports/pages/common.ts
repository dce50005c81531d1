import type { Context, MiddlewareHandler } from 'hono'
import { canInProject } from '../../../lib/auth/access.js'
import type { Permission } from '../../../lib/auth/roles.js'
import type { Config } from '../../../lib/config.js'
import { auditContext } from '../../../lib/http.js'
import { loginUrl, pageHeaders, pageSession, publicBase, type PageSession } from '../../../lib/pages.js'
import type { ReportRecord, UserRef } from '../../../domain/reports/model.js'
import type { ReportProject } from '../../../domain/reports/decide.js'
import type { ReportsEnv } from '../deps.js'
import { messagePage, type Letterhead } from './render.js'

/** What every report page needs: its headers, the caller's session, the report, and the answers it gives when something is missing. */

const headersByConfig = new WeakMap<Config, MiddlewareHandler>()
export const pagesHeaders: MiddlewareHandler<ReportsEnv> = (c, next) => {
  const config = c.get('deps').config
  let headers = headersByConfig.get(config)
  if (!headers) headersByConfig.set(config, (headers = pageHeaders(config)))
  return headers(c, next)
}

export const baseOf = (c: Context<ReportsEnv>) => publicBase(c)

export interface PageCaller extends PageSession {
  report: ReportRecord
  project: ReportProject
  can: (permission: Permission) => boolean
  user: UserRef
}

export type Loaded = { ok: true; caller: PageCaller } | { ok: false; response: Response }

export function notFoundPage(c: Context<ReportsEnv>, assets: string) {
  return c.html(messagePage({ title: 'Report not found', assets, tone: 'warn', lines: ['There is no such report, or you cannot see it.'] }), 404)
}

/**
 * The caller of a page and the report it names. Without a session, a GET goes to the platform's
 * login and comes back (`loginReturn`); a report the caller may not read is absent, as in the API.
 */
export async function loadForPage(c: Context<ReportsEnv>, id: string, opts: { assets: string; loginReturn?: string }): Promise<Loaded> {
  const deps = c.get('deps')
  const session = await pageSession(c)
  if (!session) {
    const login = opts.loginReturn ? loginUrl(deps.config, opts.loginReturn) : undefined
    if (login) return { ok: false, response: c.redirect(login, 302) }
    return {
      ok: false,
      response: c.html(
        messagePage({
          title: 'Sign in first',
          assets: opts.assets,
          tone: 'warn',
          lines: ['This page needs your platform session: sign in to the platform, then open it again.'],
        }),
        401,
      ),
    }
  }
  const report = await deps.reports.getAnywhere(id)
  const project = report ? { id: report.project_id, org_id: report.org_id } : undefined
  if (!report || !project || !canInProject(session.principal, project, 'report.read')) return { ok: false, response: notFoundPage(c, opts.assets) }
  const u = session.principal.user
  return {
    ok: true,
    caller: {
      ...session,
      report,
      project,
      can: (permission) => canInProject(session.principal, project, permission),
      user: { id: u.id, name: u.name, ...(u.email ? { email: u.email } : {}) },
    },
  }
}

export async function letterheadOf(c: Context<ReportsEnv>, project: ReportProject): Promise<Letterhead> {
  const { access } = c.get('deps')
  const [p, org] = await Promise.all([access.getProject(project.id), access.getOrg(project.org_id)])
  return { organization: org?.name ?? 'Laboratory', project: p?.name ?? '', ...(p?.letterhead ? { details: p.letterhead } : {}) }
}

/** Records a refusal of a page's request that is about who asks, not about the report: access.denied. */
export async function recordDenied(
  c: Context<ReportsEnv>,
  reason: string,
  scope: { project_id?: string; org_id?: string },
  entity: { type: string; id: string },
) {
  const { audit, log } = c.get('deps')
  await audit
    .record(auditContext(c), { action: 'access.denied', outcome: 'denied', ...scope, entity, change: { reason: reason.slice(0, 500) } })
    .catch((error) => log.error('audit write failed', { error }))
}
