import type { Context } from 'hono'
import { badge, confirmView, csrfField, field, html, redirectWithNotice, renderConsole, time, type Raw } from '../../../lib/console/index.js'
import { auditContext } from '../../../lib/http.js'
import { publicBase } from '../../../lib/pages.js'
import { CLASSIFICATION_LABELS, classificationDisagreement, type AcmgClassification } from '../../../domain/reports/acmg.js'
import { blockersFor, contributorsOf, describeBlocker, transitionsFor } from '../../../domain/reports/decide.js'
import { AMENDMENT_KINDS, COMMENT_TYPES, type CommentRecord, type ReportRecord } from '../../../domain/reports/model.js'
import type { ReportStatus } from '../../../domain/reports/status.js'
import type { JoinedVariant } from '../../../domain/reports/store.js'
import type { ReportsEnv } from '../deps.js'
import { AmendReport, CreateComment, ReportTransition, UpdateComment, UpdateReport } from '../schemas.js'
import { callerOf, linksOf, parseForm, problemOf, reportOr404, reportsConsole, type Caller, type Problem } from './app.js'
import { statusBadge, TEMPLATE_OPTIONS } from './lists.js'
import { variantForm } from './variants.js'

/** One report in the console: what it says, its variants, comments and snapshots, the moves the caller may make, and its sign-off. */

/** A form of the page that was refused: which one (`edit`, `transition`, `comment`, `snapshot`, `amend`, `new`, or a variant's id), why, and what was typed. */
export interface FormState {
  form: string
  error: Problem
  values?: Record<string, string>
}

const words = (s: string | null | undefined) => (s ? s.replaceAll('_', ' ') : '')

const MOVE_LABELS: Record<ReportStatus, string> = {
  draft: 'Back to draft',
  in_review: 'Send to review',
  signed: 'Sign',
  superseded: 'Supersede',
  cancelled: 'Cancel the report',
  entered_in_error: 'Mark entered in error',
}
/** Moves that withdraw a report: they need a reason and a confirmation. */
const WITHDRAWALS = new Set<ReportStatus>(['cancelled', 'entered_in_error'])

const errorLine = (state: FormState | undefined, form: string): Raw =>
  state?.form === form ? html`<p class="notice warn" role="alert" id="error">${state.error.detail}</p>` : html``

function variantSection(caller: Caller, report: ReportRecord, v: JoinedVariant, state: FormState | undefined, base: string): Raw {
  const r = v.record
  const x = v.cached
  const name = `${x?.genes.join(', ') || 'Variant'} ${r.hgvs_c ?? x?.hgvs_c ?? ''}`
  const cls = r.acmg_classification as AcmgClassification | undefined
  const suggested = classificationDisagreement(r.acmg_classification ?? null, r.acmg_criteria)
  const key = `v${r.variant_id.replace(/[^A-Za-z0-9_-]/g, '')}`
  const mine = state?.form === r.variant_id ? state : undefined
  const editable = report.status === 'draft' && caller.can('report.draft')
  return html`<article class="card variant" id="variant-${r.variant_id}" aria-labelledby="${key}-title">
    <h3 id="${key}-title">${name}</h3>
    <dl class="facts">
      <dt>Position</dt>
      <dd>
        ${x ? html`<code>${x.assembly ?? ''} ${x.chrom}:${x.pos} ${x.ref}&gt;${x.alt}</code>` : html`<span class="muted">not in the current cache</span>`}
      </dd>
      <dt>Calls</dt>
      <dd>${x?.calls.map((call, i) => html`${i ? ', ' : ''}${call.role ?? call.sample}: ${words(call.zygosity) || 'no call'}`) ?? '–'}</dd>
      <dt>Classification</dt>
      <dd>
        ${cls ? html`<strong>${CLASSIFICATION_LABELS[cls]}</strong>` : badge('not classified', 'pending')}
        ${r.acmg_criteria.length ? html`<span class="muted">(${r.acmg_criteria.join(', ')})</span>` : ''}
        ${
          suggested
            ? html`<p class="notice warn" id="${key}-disagrees">
                The criteria combine to <strong>${CLASSIFICATION_LABELS[suggested.classification]}</strong> (${suggested.rule}).
              </p>`
            : ''
        }
      </dd>
      <dt>Inheritance</dt>
      <dd>${words(r.inheritance) || '–'}</dd>
      <dt>In the report</dt>
      <dd>${r.include_in_report ? 'included' : 'reviewed, not included'}</dd>
      ${
        r.interpretation
          ? html`<dt>Interpretation</dt>
              <dd>${r.interpretation}</dd>`
          : ''
      }
    </dl>
    ${
      editable
        ? html`<details ${mine ? html`open` : ''}>
            <summary>Change the classification</summary>
            ${variantForm({
              session: caller,
              action: `${base}/variants/${encodeURIComponent(r.variant_id)}`,
              current: r,
              key,
              submit: 'Save the variant',
              ...(mine ? { error: mine.error, ...(mine.values ? { values: mine.values } : {}) } : {}),
            })}
            <form method="post" action="${base}/variants/${encodeURIComponent(r.variant_id)}/remove" data-confirm="Take ${name} off the report?">
              ${csrfField(caller)}
              <button type="submit" class="secondary">Take it off the report</button>
            </form>
          </details>`
        : ''
    }
  </article>`
}

function commentItem(caller: Caller, report: ReportRecord, cm: CommentRecord, base: string): Raw {
  const canResolve = caller.can('comment.resolve') && (report.status === 'draft' || report.status === 'in_review')
  return html`<li class="comment" id="comment-${cm.id}">
    <p>
      ${badge(cm.type, cm.type === 'review' ? (cm.resolved ? 'ok' : 'pending') : 'neutral')}
      ${cm.type === 'review' ? (cm.resolved ? badge('resolved', 'ok') : badge('open', 'warn')) : ''}
      <strong>${cm.author.name ?? cm.author.email ?? cm.author.id}</strong> <span class="muted">${time(cm.created)}</span>
    </p>
    <p>${cm.comment}</p>
    ${
      canResolve && cm.type === 'review'
        ? html`<form method="post" action="${base}/comments/${cm.id}" class="inline">
            ${csrfField(caller)}<input type="hidden" name="resolved" value="${cm.resolved ? 'no' : 'yes'}" />
            <button type="submit" class="secondary">${cm.resolved ? 'Reopen' : 'Resolve'}</button>
          </form>`
        : ''
    }
  </li>`
}

/** The report's page; `state` re-renders it with a refused form's reason next to that form (and the refusal's status). */
export async function reportPage(c: Context<ReportsEnv>, caller: Caller, report: ReportRecord, state?: FormState): Promise<Response> {
  const { reports } = c.get('deps')
  const links = linksOf(c, caller)
  const base = links.report(report.id)
  const [records, comments, snapshots, orders] = await Promise.all([
    reports.listVariantRecords(report.id),
    reports.listComments(report.id, undefined, { page_size: 100 }),
    reports.listSnapshots(report.id, { page_size: 100 }),
    reports.ordersOf([report]),
  ])
  const variants = await reports.join(report, records)
  const order = orders.get(report.order_id)
  const moves = transitionsFor(report, order, caller.can)
  const blockers = report.status === 'in_review' ? blockersFor(report, order, { user: caller.user, can: caller.can }) : []
  const isDraft = report.status === 'draft'
  const canDraft = caller.can('report.draft')
  const values = state?.values ?? {}
  const reportsBase = publicBase(c)
  const signoffUrl = `${reportsBase}/${report.id}/signoff/`
  const printUrl = `${reportsBase}/${report.id}/print`
  const title = `Report of order ${report.order_accession}, revision ${report.revision}`
  const contributors = contributorsOf(report)

  const body = html`<h1>${title}</h1>
    <p>${statusBadge(report.status)} ${report.status === 'signed' ? 'Signed: final, never edited again (amend it for a new revision).' : ''}</p>
    <dl class="facts">
      <dt>Order</dt>
      <dd>
        <a href="${links.orderReports(report.order_id)}">${report.order_accession}</a
        >${links.order(report.order_id) ? html` · <a href="${links.order(report.order_id)}">the order</a>` : ''}${links.variants(report.order_id) ? html` · <a href="${links.variants(report.order_id)}" id="order-variants">its variants</a>` : ''}
      </dd>
      <dt>Template</dt>
      <dd>${words(report.template_type)}</dd>
      <dt>Author</dt>
      <dd>${report.author.name ?? report.author.email ?? report.author.id}</dd>
      <dt>Contributors</dt>
      <dd>
        ${contributors.map((x, i) => html`${i ? ', ' : ''}${x.id === report.author.id ? (report.author.name ?? report.author.email ?? x.id) : x.id === caller.user.id ? 'you' : x.id} <span class="muted">(${x.did.map(words).join(', ')})</span>`)}
      </dd>
      <dt>Summary</dt>
      <dd>${report.summary ?? html`<span class="muted">none</span>`}</dd>
      <dt>Conclusion</dt>
      <dd id="conclusion">${report.conclusion ?? html`<span class="muted">none written</span>`}</dd>
      <dt>Updated</dt>
      <dd>${time(report.updated)}</dd>
    </dl>
    <p class="actions">
      <a href="${printUrl}" id="print">The printable report</a>
      ${links.history('report', report.id) ? html`<a href="${links.history('report', report.id)}" id="history">Its history</a>` : ''}
    </p>

    ${
      report.status === 'in_review'
        ? html`<section aria-labelledby="signoff-title" class="card" id="signoff">
            <h2 id="signoff-title">Sign-off</h2>
            ${
              blockers.length
                ? html`<p>You cannot sign it now:</p>
                    <ul id="blockers">
                      ${blockers.map((b) => html`<li>${describeBlocker(b)}</li>`)}
                    </ul>`
                : html`<p>You may sign this report. The sign-off page shows exactly what you sign, then asks you to sign in again.</p>
                    <p><a href="${signoffUrl}" class="button" id="to-signoff">Open the sign-off page</a></p>`
            }
          </section>`
        : ''
    }
    ${
      moves.filter((m) => m !== 'signed').length
        ? html`<section aria-labelledby="moves-title">
            <h2 id="moves-title">Status</h2>
            ${errorLine(state, 'transition')}
            ${moves
              .filter((m) => m !== 'signed')
              .map((to) =>
                WITHDRAWALS.has(to)
                  ? html`<form method="post" action="${base}/transition" class="stack" data-confirm="${MOVE_LABELS[to]}? This cannot be undone.">
                      ${csrfField(caller)}<input type="hidden" name="to" value="${to}" />
                      ${field({ id: `reason-${to}`, name: 'reason', label: `Reason (${words(to)})`, value: values.to === to ? values.reason : '' })}
                      <p class="actions"><button type="submit" class="danger" id="move-${to}">${MOVE_LABELS[to]}</button></p>
                    </form>`
                  : html`<form method="post" action="${base}/transition" class="inline">
                      ${csrfField(caller)}<input type="hidden" name="to" value="${to}" />
                      <button type="submit" id="move-${to}">${MOVE_LABELS[to]}</button>
                    </form>`,
              )}
          </section>`
        : ''
    }
    ${
      isDraft && canDraft
        ? html`<section aria-labelledby="edit-title">
            <h2 id="edit-title">Edit the draft</h2>
            <form method="post" action="${base}/edit" class="stack" id="edit-report">
              ${csrfField(caller)} ${errorLine(state, 'edit')}
              ${field({ name: 'template_type', label: 'Template', value: values.template_type ?? report.template_type, options: TEMPLATE_OPTIONS })}
              ${field({ name: 'summary', label: 'Summary', value: values.summary ?? report.summary ?? '', multiline: true })}
              ${field({ name: 'conclusion', label: 'Conclusion', value: values.conclusion ?? report.conclusion ?? '', multiline: true, hint: 'Needed before the report goes to review' })}
              ${field({ name: 'notes', label: 'Notes', value: values.notes ?? report.notes ?? '', multiline: true })}
              <p class="actions"><button type="submit" id="save-report">Save</button></p>
            </form>
          </section>`
        : ''
    }

    <section aria-labelledby="variants-title">
      <h2 id="variants-title">Variants (${variants.length})</h2>
      ${variants.length ? variants.map((v) => variantSection(caller, report, v, state, base)) : html`<p>No variant yet.</p>`}
      ${
        isDraft && canDraft
          ? html`<details ${state?.form === 'new' ? html`open` : ''}>
              <summary>Add a variant by its id</summary>
              <p>
                Or choose it among
                ${links.variants(report.order_id) ? html`<a href="${links.variants(report.order_id)}">the order's variants</a>` : "the order's variants"}
                and "Add to report".
              </p>
              ${variantForm({
                session: caller,
                action: `${base}/variants`,
                askId: true,
                submit: 'Add the variant',
                ...(state?.form === 'new' ? { error: state.error, values } : {}),
              })}
            </details>`
          : ''
      }
    </section>

    <section aria-labelledby="comments-title">
      <h2 id="comments-title">Comments (${report.comment_count}; ${report.open_review_comments} open review)</h2>
      ${
        comments.items.length
          ? html`<ul class="comments" id="comments">
              ${comments.items.map((cm) => commentItem(caller, report, cm, base))}
            </ul>`
          : html`<p>No comment yet.</p>`
      }
      ${
        caller.can('comment.write') && (report.status === 'draft' || report.status === 'in_review')
          ? html`<form method="post" action="${base}/comments" class="stack" id="add-comment">
              ${csrfField(caller)} ${errorLine(state, 'comment')}
              ${field({
                name: 'type',
                label: 'Kind',
                value: values.type ?? 'review',
                options: COMMENT_TYPES.map((t) => ({ value: t, label: t === 'review' ? 'review (blocks signing until resolved)' : t })),
              })}
              ${field({ name: 'comment', label: 'Comment', value: values.comment ?? '', multiline: true })}
              <p class="actions"><button type="submit" id="post-comment">Post the comment</button></p>
            </form>`
          : ''
      }
    </section>

    <section aria-labelledby="snapshots-title">
      <h2 id="snapshots-title">Snapshots (${report.snapshot_count})</h2>
      <p>A snapshot is the report's content at one moment, with its SHA-256: a signature names the one it signed.</p>
      ${
        snapshots.items.length
          ? html`<div class="table-wrap">
              <table id="snapshots">
                <caption class="visually-hidden">
                  Snapshots, oldest first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">No.</th>
                    <th scope="col">Taken</th>
                    <th scope="col">Status then</th>
                    <th scope="col">SHA-256</th>
                  </tr>
                </thead>
                <tbody>
                  ${snapshots.items.map(
                    (s) =>
                      html`<tr>
                        <td>${s.seq}</td>
                        <td>${time(s.taken_at)}</td>
                        <td>${words(s.report_status)}</td>
                        <td><code class="hash">${s.sha256}</code></td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
          : ''
      }
      ${
        canDraft && (isDraft || report.status === 'in_review')
          ? html`<form method="post" action="${base}/snapshots" class="inline">
              ${csrfField(caller)} ${errorLine(state, 'snapshot')}<button type="submit" class="secondary" id="take-snapshot">
                Take a snapshot now
              </button>
            </form>`
          : ''
      }
    </section>

    ${
      report.status === 'signed' && canDraft && !report.pending_revision
        ? html`<section aria-labelledby="amend-title">
            <h2 id="amend-title">Amend</h2>
            <form method="post" action="${base}/amend" class="stack" id="amend">
              ${csrfField(caller)} ${errorLine(state, 'amend')}
              ${field({ name: 'reason', label: 'Why the signed report is amended', value: values.reason ?? '' })}
              ${field({ name: 'kind', label: 'Kind', value: values.kind ?? 'amended', options: AMENDMENT_KINDS.map((k) => ({ value: k, label: k })) })}
              <p class="actions"><button type="submit">Start revision ${report.revision + 1}</button></p>
            </form>
          </section>`
        : ''
    }`
  return renderConsole(c, { ...caller.view, title, body, crumbs: [{ href: links.reports, text: 'Reports' }] }, state?.error.status ?? 200)
}

reportsConsole.get('/p/:project/reports/:id', async (c) => {
  const caller = await callerOf(c, 'report.read')
  return reportPage(c, caller, await reportOr404(c, caller))
})

const formValues = (caller: Caller, names: string[]) => Object.fromEntries(names.map((n) => [n, caller.form.get(n)]))

reportsConsole.post('/p/:project/reports/:id/edit', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const values = formValues(caller, ['template_type', 'summary', 'conclusion', 'notes'])
  try {
    const patch = parseForm(UpdateReport, {
      template_type: values.template_type || undefined,
      summary: values.summary || null,
      conclusion: values.conclusion || null,
      notes: values.notes || null,
    })
    await c.get('deps').reports.update(auditContext(c), caller.scope, report.id, patch, caller.user.id)
    return redirectWithNotice(c, linksOf(c, caller).report(report.id), 'Draft saved.')
  } catch (error) {
    return reportPage(c, caller, report, { form: 'edit', error: await problemOf(c, error), values })
  }
})

reportsConsole.post('/p/:project/reports/:id/transition', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const values = formValues(caller, ['to', 'reason'])
  const to = values.to as ReportStatus
  const base = linksOf(c, caller).report(report.id)
  // A withdrawal without JavaScript's dialog is confirmed on a page of its own first.
  if (WITHDRAWALS.has(to) && !caller.form.confirmed && values.reason) {
    return renderConsole(c, {
      ...caller.view,
      ...confirmView({
        session: caller,
        title: MOVE_LABELS[to],
        question: `${MOVE_LABELS[to]} (report of order ${report.order_accession}, revision ${report.revision})? Reason: ${values.reason}. This cannot be undone.`,
        action: `${base}/transition`,
        fields: { to, reason: values.reason },
        submit: MOVE_LABELS[to],
        cancel: base,
      }),
    })
  }
  try {
    const input = parseForm(ReportTransition, { to: values.to, ...(values.reason ? { reason: values.reason } : {}) })
    const moved = await c.get('deps').reports.transition(auditContext(c), caller.scope, report.id, input, caller.can, caller.user.id)
    return redirectWithNotice(c, base, `The report is now ${words(moved.status)}.`)
  } catch (error) {
    return reportPage(c, caller, report, { form: 'transition', error: await problemOf(c, error), values })
  }
})

reportsConsole.post('/p/:project/reports/:id/comments', async (c) => {
  const caller = await callerOf(c, 'comment.write')
  const report = await reportOr404(c, caller)
  const values = formValues(caller, ['type', 'comment'])
  try {
    const input = parseForm(CreateComment, values)
    await c.get('deps').reports.addComment(auditContext(c), caller.scope, report.id, input, caller.user)
    return redirectWithNotice(c, `${linksOf(c, caller).report(report.id)}#comments`, 'Comment posted.')
  } catch (error) {
    return reportPage(c, caller, report, { form: 'comment', error: await problemOf(c, error), values })
  }
})

reportsConsole.post('/p/:project/reports/:id/comments/:comment', async (c) => {
  const caller = await callerOf(c, 'report.read')
  const report = await reportOr404(c, caller)
  try {
    const input = parseForm(UpdateComment, { resolved: caller.form.get('resolved') === 'yes' })
    const comment = await c
      .get('deps')
      .reports.updateComment(auditContext(c), caller.scope, report.id, c.req.param('comment'), input, { id: caller.user.id, can: caller.can })
    return redirectWithNotice(c, `${linksOf(c, caller).report(report.id)}#comments`, comment.resolved ? 'Comment resolved.' : 'Comment reopened.')
  } catch (error) {
    return reportPage(c, caller, report, { form: 'comment', error: await problemOf(c, error) })
  }
})

reportsConsole.post('/p/:project/reports/:id/snapshots', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  try {
    const snapshot = await c.get('deps').reports.takeSnapshot(auditContext(c), caller.scope, report, caller.user.id)
    return redirectWithNotice(c, linksOf(c, caller).report(report.id), `Snapshot ${snapshot.seq} taken: SHA-256 ${snapshot.sha256.slice(0, 12)}….`)
  } catch (error) {
    return reportPage(c, caller, report, { form: 'snapshot', error: await problemOf(c, error) })
  }
})

reportsConsole.post('/p/:project/reports/:id/amend', async (c) => {
  const caller = await callerOf(c, 'report.draft')
  const report = await reportOr404(c, caller)
  const values = formValues(caller, ['reason', 'kind'])
  try {
    const input = parseForm(AmendReport, { reason: values.reason, kind: values.kind || undefined })
    const amended = await c.get('deps').reports.amend(auditContext(c), caller.scope, report.id, input, caller.user)
    return redirectWithNotice(c, linksOf(c, caller).report(amended.id), `Revision ${amended.revision} started as a draft.`)
  } catch (error) {
    return reportPage(c, caller, report, { form: 'amend', error: await problemOf(c, error), values })
  }
})
