import { Hono, type Context } from 'hono'
import { auditContext } from '../../../lib/http.js'
import { html, loginUrl } from '../../../lib/pages.js'
import { refusalDetail, refusalStatus } from '../../../lib/decision.js'
import type { Signer } from '../../../domain/reports/decide.js'
import type { SignatureMeaning } from '../../../domain/reports/model.js'
import { reauthStateOf, type SignoffRefusal } from '../../../domain/reports/signoff.js'
import type { SnapshotContent } from '../../../domain/reports/snapshot.js'
import type { ReportsEnv } from '../deps.js'
import { baseOf, letterheadOf, loadForPage, pagesHeaders, recordDenied, type PageCaller } from './common.js'
import { disagreementsHtml, documentHtml, letterheadHtml, messagePage, pageHtml, patientOf, signatureBlock, snapshotFacts } from './render.js'

/**
 * The browser sign-off of a report, under {report_url}/{id}/signoff/ (outside /api/v1 and its
 * document): the page that shows the snapshot to sign with its form, the form's post (checked,
 * then off to the identity provider to authenticate again), the return from the provider (the
 * signature), and the signed report. Each refusal is a page that says why, and an audit event.
 */
export const signoffPages = new Hono<ReportsEnv>()

/** From /{id}/signoff/ and /{id}/signoff/complete, the stylesheet and the printable view are two levels up. */
const ASSETS = '../../assets/'
/** Re-authentication: the provider asks for the password again now (prompt=login), and the ID token's auth_time must be now (max_age=0). */
const REAUTHENTICATE = { prompt: 'login', maxAge: 0 } as const

signoffPages.use('/:id/signoff', pagesHeaders)
signoffPages.use('/:id/signoff/*', pagesHeaders)

signoffPages.get('/:id/signoff', (c) => c.redirect('signoff/', 301))

const signerOf = (caller: PageCaller): Signer => ({ user: caller.user, sessionId: caller.session.id, can: caller.can })

/** A refused step's page: each reason a line (the blockers of a signer are several), with the refusal's status. */
function refusalPage(c: Context<ReportsEnv>, caller: PageCaller | undefined, { stop, refusal }: SignoffRefusal) {
  const detail = refusalDetail(refusal)
  const lines = stop === 'blocked' ? detail.split('; ') : [detail]
  const links = caller
    ? [
        { href: './', text: 'Open the sign-off page again' },
        { href: '../print', text: 'The report' },
      ]
    : []
  return c.html(messagePage({ title: 'The report was not signed', assets: ASSETS, tone: 'warn', lines, links }), refusalStatus(refusal))
}

function deniedPage(c: Context<ReportsEnv>, status: 400 | 401 | 403, line: string) {
  return c.html(messagePage({ title: 'The report was not signed', assets: ASSETS, tone: 'warn', lines: [line] }), status)
}

signoffPages.get('/:id/signoff/', async (c) => {
  const id = c.req.param('id')
  const loaded = await loadForPage(c, id, { assets: ASSETS, loginReturn: `${baseOf(c)}/${id}/signoff/` })
  if (!loaded.ok) return loaded.response
  const { caller } = loaded
  const deps = c.get('deps')
  const { report } = caller
  if (report.status === 'signed' || report.status === 'superseded') return signedPage(c, caller)
  const opened = await deps.signoffs.openPage(auditContext(c), caller.project, report, signerOf(caller))
  if (!opened.ok) return refusalPage(c, caller, opened.refusal)
  const { snapshot, token } = opened
  const content = JSON.parse(snapshot.content) as SnapshotContent
  const letterhead = await letterheadOf(c, caller.project)
  const signer =
    caller.user.name && caller.user.email ? `${caller.user.name} <${caller.user.email}>` : (caller.user.email ?? caller.user.name ?? caller.user.id)
  const header = letterheadHtml(letterhead, html`Sign-off`)
  const body = html`<p class="banner info no-print">
      You are about to sign this report as <strong>${signer}</strong>. What this page shows is the snapshot you sign: read it whole.
    </p>
    ${disagreementsHtml(content)} ${documentHtml(content)}
    <h2>What you sign</h2>
    ${snapshotFacts({ id: snapshot.id, seq: snapshot.seq, sha256: snapshot.sha256, taken_at: snapshot.taken_at.toDate().toISOString() })}
    <form class="sign" method="post" action="./">
      <input type="hidden" name="csrf_token" value="${token}" />
      <input type="hidden" name="snapshot_id" value="${snapshot.id}" />
      <input type="hidden" name="meaning" value="approved" />
      <p>
        <strong>Meaning of the signature: approved.</strong> I have reviewed this report, its variants and their classifications, and I approve it for
        release.
      </p>
      <label
        ><input type="checkbox" name="confirm" value="yes" required /> I approve report ${report.order_accession}, revision ${report.revision}, as
        shown above (SHA-256 ${snapshot.sha256.slice(0, 12)}…).</label
      >
      <p class="muted">Signing asks you to sign in again at the identity provider, to confirm it is you.</p>
      <button type="submit" id="sign">Sign: approved</button>
    </form>`
  return c.html(pageHtml({ title: `Sign-off: ${report.order_accession} revision ${report.revision}`, assets: ASSETS, header, body }), 200)
})

signoffPages.post('/:id/signoff/', async (c) => {
  const deps = c.get('deps')
  const id = c.req.param('id')
  // A signature is a person's act in their browser: never a token's, never from another site.
  if (c.req.header('authorization') !== undefined) {
    await recordDenied(c, 'sign-off form posted with an Authorization header instead of a browser session', {}, { type: 'report', id })
    return deniedPage(c, 403, 'A report is signed in a browser, with your platform session: a request with a Bearer token cannot sign it.')
  }
  const origin = c.req.header('origin')
  if (!origin || !deps.config.publicOrigins.includes(origin)) {
    await recordDenied(c, `cross-origin sign-off form (Origin: ${origin?.slice(0, 200) ?? 'none'})`, {}, { type: 'report', id })
    return deniedPage(c, 403, 'This form did not come from the platform (cross-origin request): nothing was signed.')
  }
  const loaded = await loadForPage(c, id, { assets: ASSETS })
  if (!loaded.ok) return loaded.response
  const { caller } = loaded
  const { report, project } = caller
  const form = await c.req.parseBody()
  const token = typeof form.csrf_token === 'string' ? form.csrf_token : ''
  const snapshotId = typeof form.snapshot_id === 'string' ? form.snapshot_id : ''
  if (!token || token.length > 200) {
    await recordDenied(
      c,
      'sign-off form without its security token',
      { project_id: project.id, org_id: project.org_id },
      {
        type: 'report',
        id,
      },
    )
    return deniedPage(c, 403, "The form's security token is missing: open the sign-off page again and sign from it.")
  }
  if (form.meaning !== 'approved') return deniedPage(c, 400, 'The only meaning a signature here can have is "approved".')
  if (form.confirm !== 'yes') return deniedPage(c, 400, 'Tick the box that says you approve the report, then sign.')
  const result = await deps.signoffs.requestReauthentication(
    auditContext(c),
    project,
    report,
    { token, snapshotId, meaning: form.meaning as SignatureMeaning },
    signerOf(caller),
  )
  if (!result.ok) {
    if (result.refusal.stop === 'token')
      await recordDenied(
        c,
        `sign-off form refused: ${refusalDetail(result.refusal.refusal)}`,
        { project_id: project.id, org_id: project.org_id },
        { type: 'report', id },
      )
    return refusalPage(c, caller, result.refusal)
  }
  // The provider's page says what is being signed: the report, its order and the patient (the admin service names the signer).
  const snapshot = await deps.reports.getSnapshot(report.id, result.snapshotId)
  const patient = snapshot ? patientOf(JSON.parse(snapshot.content) as SnapshotContent) : 'not recorded'
  const login = loginUrl(deps.config, `${baseOf(c)}/${id}/signoff/complete`, {
    ...REAUTHENTICATE,
    purpose: `Sign report ${report.order_accession}, revision ${report.revision}, for patient ${patient}: approved`,
  })
  if (!login) return deniedPage(c, 403, 'The platform has no login configured (ADMIN_PUBLIC_URL): a signature cannot be confirmed.')
  return c.redirect(login, 303)
})

signoffPages.get('/:id/signoff/complete', async (c) => {
  const deps = c.get('deps')
  const id = c.req.param('id')
  // No login from here: a new session would not be the one the sign-off was started in.
  const loaded = await loadForPage(c, id, { assets: ASSETS })
  if (!loaded.ok) return loaded.response
  const { caller } = loaded
  const result = await deps.signoffs.complete(auditContext(c), caller.project, caller.report, signerOf(caller), reauthStateOf(caller.session))
  if (!result.ok) {
    if (result.refusal.stop === 'token') {
      await recordDenied(
        c,
        `sign-off completion refused: ${refusalDetail(result.refusal.refusal)}`,
        { project_id: caller.project.id, org_id: caller.project.org_id },
        { type: 'report', id },
      )
    }
    return refusalPage(c, caller, result.refusal)
  }
  return c.redirect('signed', 303)
})

signoffPages.get('/:id/signoff/signed', async (c) => {
  const loaded = await loadForPage(c, c.req.param('id'), { assets: ASSETS, loginReturn: `${baseOf(c)}/${c.req.param('id')}/signoff/signed` })
  if (!loaded.ok) return loaded.response
  return signedPage(c, loaded.caller)
})

async function signedPage(c: Context<ReportsEnv>, caller: PageCaller) {
  const { report } = caller
  if (report.status !== 'signed' && report.status !== 'superseded') {
    return c.html(
      messagePage({
        title: 'Not signed',
        assets: ASSETS,
        tone: 'warn',
        lines: [`This report is ${report.status.replaceAll('_', ' ')}: it has not been signed.`],
        links: [{ href: './', text: 'The sign-off page' }],
      }),
      409,
    )
  }
  const letterhead = await letterheadOf(c, caller.project)
  const header = letterheadHtml(letterhead, html`Sign-off`)
  const body = html`<h1>Report ${report.order_accession}, revision ${report.revision}: signed</h1>
    <p class="banner ${report.status === 'signed' ? 'ok' : 'warn'}" id="status">
      ${
        report.status === 'signed'
          ? 'Signed. The report is final.'
          : html`Signed, and since superseded by report <code>${report.superseded_by}</code>.`
      }
    </p>
    ${signatureBlock(report.signatures)}
    <p><a href="../print" id="print">The signed report, to view and print</a></p>`
  return c.html(pageHtml({ title: `Signed: ${report.order_accession} revision ${report.revision}`, assets: ASSETS, header, body }), 200)
}
