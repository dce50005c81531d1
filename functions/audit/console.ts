import type { AuditEvent } from '../../lib/audit.js'
import { badge, consolePages, consoleProject, errorView, html, pager, renderConsole, time, type Raw, type Tone } from '../../lib/console/index.js'
import { auditContext } from '../../lib/http.js'
import { newId } from '../../lib/ids.js'
import type { ChainCheck } from '../../domain/audit/log.js'
import type { AuditDeps } from './deps.js'

/**
 * The audit history of one record in the console, {audit}/console/p/<project>/history?entity=<type>:<id>:
 * its events newest first, each with the check of its link in its hash chain that GET /events/{id}
 * makes. Read as GET /events reads a project's log (audit.read in the project: its admins and
 * auditors), and recorded as that read is (audit.queried, with the query).
 */
export const auditConsole = consolePages<AuditDeps>()

/** `type:id`, the API's entity filter for one record (a type alone would be a whole kind of record: not a history). */
const ENTITY = /^([a-z][a-z_]{0,40}):([^\s]{1,200})$/
const PAGE_SIZE = 50

const OUTCOME_TONE: Record<string, Tone> = { success: 'ok', denied: 'warn', failure: 'warn' }

function chainCell(check: ChainCheck): Raw {
  const tone: Tone = check.result === 'verified' ? 'ok' : check.result === 'failed' ? 'warn' : 'pending'
  const label = check.result === 'verified' ? 'verified' : check.result === 'failed' ? 'FAILED' : 'unverifiable'
  return html`${badge(label, tone)}${
    check.problems.length
      ? html`<ul class="problems">
          ${check.problems.map((p) => html`<li>${p}</li>`)}
        </ul>`
      : ''
  }`
}

function changeCell(e: AuditEvent): Raw {
  const change = e.change ? JSON.stringify(e.change, null, 2) : ''
  if (!change || change === '{}') return html`<span class="muted">–</span>`
  const reason = typeof e.change?.reason === 'string' ? e.change.reason : undefined
  return html`${reason ? html`<p>${reason}</p>` : ''}
    <details>
      <summary>What changed</summary>
      <pre>${change}</pre>
    </details>`
}

auditConsole.get('/p/:project/history', async (c) => {
  const caller = await consoleProject(c, 'audit.read')
  const deps = c.get('deps')
  const { project, org } = caller
  const entity = c.req.query('entity') ?? ''
  const match = ENTITY.exec(entity)
  const view = { session: caller, project: { project, ...(org ? { org } : {}) } }
  if (!match) {
    const detail = 'entity: give the record as type:id, e.g. entity=order:ORD-2026-000123 or entity=report:<report id>'
    return renderConsole(c, { ...view, ...errorView(400, detail) }, 400)
  }
  const [, type, id] = match
  const pageToken = c.req.query('page_token')
  const [result] = await Promise.all([
    deps.auditLog.list(
      { kind: 'project', project_id: project.id },
      { entity },
      { page_size: PAGE_SIZE, ...(pageToken ? { page_token: pageToken } : {}) },
    ),
    deps.audit.record(auditContext(c), {
      action: 'audit.queried',
      project_id: project.id,
      org_id: project.org_id,
      entity: { type: 'audit_query', id: newId() },
      change: { query: { entity, scope: 'project', via: 'console' } },
    }),
  ])
  const checks = await Promise.all(result.items.map((e) => deps.auditLog.checkLink(e)))
  const failed = checks.filter((x) => x.result === 'failed').length
  const body = html`<h1>History of ${type} <code>${id}</code></h1>
    <p>Every recorded action on this record, newest first, each checked against its hash chain as the audit API checks one event.</p>
    ${
      result.items.length === 0
        ? html`<p id="empty">No event of this record is in the project's audit log${pageToken ? ' on this page' : ''}.</p>`
        : html`<p class="notice ${failed ? 'warn' : 'ok'}" id="chain-summary" role="status">
              ${
                failed
                  ? `${failed} of ${result.items.length} events on this page do not verify in their chain: the log was changed outside the platform.`
                  : `The chain links of the ${result.items.length} events on this page were checked: none failed.`
              }
            </p>
            <div class="table-wrap">
              <table id="history">
                <caption>
                  Audit events of ${type} ${id}, newest first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Action</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Who</th>
                    <th scope="col">Detail</th>
                    <th scope="col">Chain</th>
                  </tr>
                </thead>
                <tbody>
                  ${result.items.map(
                    (e, i) =>
                      html`<tr>
                        <td>${time(e.occurred_at)}</td>
                        <td><code>${e.action}</code></td>
                        <td>${badge(e.outcome, OUTCOME_TONE[e.outcome] ?? 'neutral')}</td>
                        <td>
                          ${e.actor.email ?? e.actor.id}
                          <span class="muted">(${e.actor.type}${e.actor.auth_method ? `, ${e.actor.auth_method}` : ''})</span>
                        </td>
                        <td>${changeCell(e)}</td>
                        <td>${chainCell(checks[i]!)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
    }
    ${pager(c, result.nextPageToken)}`
  return renderConsole(c, { ...view, title: `History of ${type} ${id}`, body })
})
