/**
 * Records named the way a lab names them, wherever the CLI takes an id. Orders need nothing here:
 * every service takes an order's accession (ORD-2026-000123) where its id goes (GET /orders/{id},
 * /orders/{order_id}/variants, POST /reports, GET /reports?order_id=), so the CLI passes it on.
 * Reports have no name of their own: a report is named by its id, or by its order's accession.
 */
import { UUID_RE, type PlatformClient, type Report } from './client.js'
import { CliError, EXIT, usageError } from './errors.js'

/** Statuses of a report no one works on any more: a later revision, or a report withdrawn. */
const ENDED: ReadonlySet<Report['status']> = new Set<Report['status']>(['superseded', 'cancelled', 'entered_in_error'])

type Candidate = Pick<Report, 'id' | 'revision' | 'status' | 'template_type'>

/**
 * The report an order's accession names: of the order's reports not superseded, cancelled or
 * entered in error, the one of the highest revision (an amendment in draft before the signed
 * revision it replaces). None is a not-found; two of the same revision (two reports of one order,
 * germline and secondary findings) are a usage error listing them.
 */
export function currentReport<T extends Candidate>(order: string, reports: readonly T[]): T {
  const live = reports.filter((r) => !ENDED.has(r.status))
  const top = Math.max(...live.map((r) => r.revision))
  const newest = live.filter((r) => r.revision === top)
  const [only] = newest
  if (!only) {
    const ended = reports.length ? ` (its ${reports.length} report${reports.length === 1 ? ' has' : 's have'} ended: pass a report id)` : ''
    throw new CliError(`not found: order ${order} has no current report${ended}`, EXIT.notFound)
  }
  if (newest.length > 1) {
    const list = newest.map((r) => `${r.id} (${r.template_type}, ${r.status})`).join(', ')
    throw usageError(`order ${order} has ${newest.length} current reports: ${list}; pass the report's id`)
  }
  return only
}

/** A report by id, or by its order's id or accession (currentReport). */
export async function resolveReport(client: PlatformClient, project: string, ref: string): Promise<Report> {
  if (UUID_RE.test(ref)) return client.getReport(project, ref)
  const { items } = await client.listReports(project, { order_id: ref }, {})
  return currentReport(ref, items)
}
