import { Hono, type Context } from 'hono'
import { html, type Raw } from '../../../lib/pages.js'
import type { ReportRecord } from '../../../domain/reports/model.js'
import type { SnapshotContent } from '../../../domain/reports/snapshot.js'
import type { ReportsEnv } from '../deps.js'
import { baseOf, letterheadOf, loadForPage, pagesHeaders } from './common.js'
import { REPORT_CSS } from './style.js'
import { documentHtml, letterheadHtml, pageHtml, patientOf, signatureBlock, snapshotFacts } from './render.js'

/**
 * The printable report, {report_url}/{id}/print: the document a clinician files. A signed report
 * prints exactly the snapshot its signature names (with the signature block and the hash), a
 * report under way prints what it says now under a banner that it is not signed. For a browser
 * with a platform session; programs read the same content, and its hash, from the snapshots API.
 */
export const printPages = new Hono<ReportsEnv>()

const ASSETS = '../assets/'
const utc = (d: Date) =>
  d
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC')

printPages.get('/assets/report.css', (c) =>
  c.body(REPORT_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }),
)

printPages.use('/:id/print', pagesHeaders)
printPages.use('/:id/print.css', pagesHeaders)

/** A CSS string: every character but plain letters, digits and spaces as a CSS escape, so no text ends it or the rule. */
const cssString = (text: string) =>
  `"${[...text].map((ch) => (/[A-Za-z0-9 ,.()]/.test(ch) ? ch : `\\${ch.codePointAt(0)!.toString(16)} `)).join('')}"`

/** Who and what the report is about, as every printed page names them. */
const runningHead = (content: SnapshotContent, revision: number) =>
  `Patient ${patientOf(content)} · Order ${content.order.accession} · Report revision ${revision}`

/**
 * The printed report's running header and page numbers (CSS paged media margin boxes), for this
 * report: a stylesheet of its own, since the pages allow no inline style. Read with the same
 * session and permission as the report, and never cached (it names the patient).
 */
printPages.get('/:id/print.css', async (c) => {
  const id = c.req.param('id')
  const loaded = await loadForPage(c, id, { assets: ASSETS })
  if (!loaded.ok)
    return c.body('/* sign in to read this report */', loaded.response.status as 401 | 404, { 'Content-Type': 'text/css; charset=utf-8' })
  const { content } = await printedContent(c, loaded.caller.report)
  const css = `@page { @top-left { content: ${cssString(runningHead(content, loaded.caller.report.revision))}; font-size: 8pt; color: #5b6470; } }\n`
  return c.body(css, 200, { 'Content-Type': 'text/css; charset=utf-8' })
})

/** What a report prints: the snapshot its last signature names, else what it says now. */
async function printedContent(c: Context<ReportsEnv>, report: ReportRecord) {
  const { reports } = c.get('deps')
  const signature = report.signatures.at(-1)
  const signedSnapshot = signature ? await reports.getSnapshot(report.id, signature.snapshot_id) : undefined
  if (signedSnapshot) return { content: JSON.parse(signedSnapshot.content) as SnapshotContent, signedSnapshot }
  const current = await reports.currentContent(report)
  return { content: current.content, current }
}

function banner(report: ReportRecord): Raw {
  const reason = report.status_history.at(-1)?.reason
  switch (report.status) {
    case 'draft':
    case 'in_review':
      return html`<p class="banner warn" id="status">${report.status === 'draft' ? 'DRAFT' : 'IN REVIEW'}: not signed, not for clinical use.</p>`
    case 'cancelled':
      return html`<p class="banner warn" id="status">CANCELLED: not for clinical use.${reason ? ` Reason: ${reason}` : ''}</p>`
    case 'entered_in_error':
      return html`<p class="banner warn" id="status">ENTERED IN ERROR: this report must not be used.${reason ? ` Reason: ${reason}` : ''}</p>`
    case 'superseded':
      return html`<p class="banner warn" id="status">
        SUPERSEDED by a later revision (report <code>${report.superseded_by}</code>): refer to that revision.
      </p>`
    case 'signed':
      return html`<p class="banner ok" id="status">
        ${report.revision > 1 ? `Amended report (revision ${report.revision}): final.` : 'Final report.'}
      </p>`
  }
}

printPages.get('/:id/print', async (c) => {
  const id = c.req.param('id')
  const loaded = await loadForPage(c, id, { assets: ASSETS, loginReturn: `${baseOf(c)}/${id}/print` })
  if (!loaded.ok) return loaded.response
  const { report, project } = loaded.caller
  const { reports } = c.get('deps')
  const signature = report.signatures.at(-1)
  const { content, signedSnapshot, current } = await printedContent(c, report)
  let facts: Raw
  if (signedSnapshot) {
    facts = snapshotFacts({
      id: signedSnapshot.id,
      seq: signedSnapshot.seq,
      sha256: signedSnapshot.sha256,
      taken_at: signedSnapshot.taken_at.toDate().toISOString(),
    })
  } else {
    facts = html`<table class="fields">
      <tr>
        <th>SHA-256 of this content</th>
        <td class="hash" id="sha256">${current?.sha256}</td>
      </tr>
    </table>`
  }
  const replaced = report.replaces ? await reports.get(report.project_id, report.replaces) : undefined
  const replacedSignature = replaced?.signatures.at(-1)
  const letterhead = await letterheadOf(c, project)
  const issued = signature ? utc(signature.at.toDate()) : 'not issued'
  const header = letterheadHtml(letterhead, html`Order ${report.order_accession}<br />Report revision ${report.revision}<br />Issued ${issued}`)
  const body = html`${banner(report)} ${documentHtml(content)}
    ${
      replaced && replacedSignature
        ? html`<p class="muted">
            This revision replaces revision ${replaced.revision} (report <code>${replaced.id}</code>), signed ${utc(replacedSignature.at.toDate())} by
            ${replacedSignature.signer.name ?? replacedSignature.signer.email ?? replacedSignature.signer.id}.
          </p>`
        : ''
    }
    <h2>Signature</h2>
    ${report.signatures.length ? signatureBlock(report.signatures) : html`<p class="muted">Not signed.</p>`} ${facts}
    ${letterhead.details?.footer ? html`<p class="muted">${letterhead.details.footer}</p>` : ''}`
  const footer = html`<footer>
    Report <code>${report.id}</code> · revision ${report.revision} · ${report.order_accession} ·
    ${letterhead.details?.laboratory ?? letterhead.organization}. The SHA-256 identifies the signed content: anyone who can read the report re-derives
    it from its snapshot.
  </footer>`
  return c.html(
    pageHtml({
      title: `${report.order_accession} report, revision ${report.revision}`,
      assets: ASSETS,
      header,
      body,
      footer,
      stylesheets: ['print.css'],
    }),
    200,
  )
})
