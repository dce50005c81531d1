import type { Context } from 'hono'
import type { z } from '@hono/zod-openapi'
import { canInProject } from '../../../lib/auth/access.js'
import type { Permission } from '../../../lib/auth/roles.js'
import {
  checkForm,
  consolePages,
  consoleProject,
  consoleUrl,
  historyUrl,
  errorView,
  formRefusal,
  renderConsole,
  type ConsoleProject,
  type ConsoleView,
} from '../../../lib/console/index.js'
import { ApiError } from '../../../lib/errors.js'
import type { ReportProject } from '../../../domain/reports/decide.js'
import type { ReportRecord, UserRef } from '../../../domain/reports/model.js'
import type { ReportsDeps, ReportsEnv } from '../deps.js'

/**
 * The report service's console, {reports}/console/...: the project's reports, an order's reports
 * and its new drafts, one report with its variants, comments, snapshots and status moves, and the
 * way to its sign-off. Every page calls the report store the API's routes call, with the same
 * permission (consoleProject: `canInProject`) and `auditContext`, so a page's change is recorded and
 * refused exactly as the API's.
 */
export const reportsConsole = consolePages<ReportsDeps>()

/** What every handler of a project page has: the caller, the project as the report rules name it, the page's frame. */
export interface Caller extends ConsoleProject {
  scope: ReportProject
  can: (permission: Permission) => boolean
  user: UserRef
  view: Pick<ConsoleView, 'session' | 'project' | 'section'>
}

export async function callerOf(c: Context<ReportsEnv>, permission: Permission): Promise<Caller> {
  const s = await consoleProject(c, permission)
  const u = s.principal.user
  return {
    ...s,
    scope: { id: s.project.id, org_id: s.project.org_id },
    can: (p) => canInProject(s.principal, s.project, p),
    user: { id: u.id, name: u.name, ...(u.email ? { email: u.email } : {}) },
    view: { session: s, project: { project: s.project, ...(s.org ? { org: s.org } : {}) }, section: 'reports' },
  }
}

/** A form whose fields the API's schema refuses, by field. */
class Invalid extends Error {
  constructor(readonly errors: Record<string, string>) {
    super('invalid form')
  }
}

/** A form's fields checked with the API's own schema for the same change (the kernel's checkForm); thrown as Invalid when they do not pass. */
export function parseForm<T extends z.ZodType>(schema: T, values: unknown): z.infer<T> {
  const checked = checkForm(schema, values)
  if (!checked.ok) throw new Invalid(checked.errors)
  return checked.data
}

/** Why a form was refused, as its page shows it: the status, the text, and the fields it is about. */
export interface Problem {
  status: 400 | 403 | 404 | 409 | 412
  detail: string
  errors: Record<string, string>
}

/**
 * The problem of a refused form: its fields (Invalid, a 400), or the store's refusal (the kernel's
 * formRefusal: a decision's 403 records access.denied as the API does). Anything else is thrown on.
 */
export async function problemOf(c: Context<ReportsEnv>, error: unknown): Promise<Problem> {
  if (error instanceof Invalid) {
    return {
      status: 400,
      detail: Object.entries(error.errors)
        .map(([field, why]) => `${field}: ${why}`)
        .join('; '),
      errors: error.errors,
    }
  }
  return { ...(await formRefusal(c, error)), errors: {} }
}

/** A report of the project, or the 404 page (another project's report is absent, as in the API). */
export async function reportOr404(c: Context<ReportsEnv>, caller: Caller): Promise<ReportRecord> {
  const report = await c.get('deps').reports.get(caller.project.id, c.req.param('id') ?? '')
  if (!report) throw new ApiError(404, 'There is no such report in this project.')
  return report
}

/** The addresses of the other services' pages a report page links to. */
export function linksOf(c: Context<ReportsEnv>, caller: Caller) {
  const config = c.get('deps').config
  const p = caller.project.id
  return {
    reports: `/console/p/${p}/reports`,
    orderReports: (orderId: string) => `/console/p/${p}/orders/${orderId}/reports`,
    report: (id: string) => `/console/p/${p}/reports/${id}`,
    order: (orderId: string) => consoleUrl(config, 'clinical', `/console/p/${p}/orders/${orderId}`),
    variants: (orderId: string) => consoleUrl(config, 'variant_cache', `/console/p/${p}/orders/${orderId}/variants`),
    history: (type: string, id: string) => historyUrl(config, caller, type, id),
  }
}

export const errorPage = (c: Context<ReportsEnv>, caller: Caller, problem: Problem) =>
  renderConsole(c, { ...caller.view, ...errorView(problem.status, problem.detail) }, problem.status)
