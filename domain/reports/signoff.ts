import { Timestamp, type Transaction } from '@google-cloud/firestore'
import type { AuditContext, AuditWriter } from '../../lib/audit.js'
import type { SessionRecord } from '../../lib/auth/tokens.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { orRefuse, type Refusal } from '../../lib/decision.js'
import { newId, newSecret } from '../../lib/ids.js'
import {
  decideFormPost,
  decideSignature,
  decideSignoffPage,
  decideSnapshot,
  PAGE_TTL_MS,
  signoffRefusedEvent,
  type ReauthState,
  type ReportProject,
  type Signer,
  type SignoffDenied,
  type SignoffStop,
} from './decide.js'
import { reportRefs, type ReportRecord, type SignatureMeaning, type SignatureRecord, type SignoffRecord, type SnapshotRecord } from './model.js'
import type { ReportStore } from './store.js'

/**
 * The browser sign-off of a report (DOMAIN.md, Reports; 21 CFR 11.50, 11.70, 11.200):
 *  1. the page shows the snapshot that will be signed, with a form whose token is bound to the
 *     session, the report and the snapshot (`openPage`);
 *  2. the form's post is checked and the signer is sent to the identity provider to prove who they
 *     are again (`requestReauthentication`);
 *  3. back from the provider, with a re-authentication asked for this signature (prompt=login,
 *     max_age=0) by the same user in the same session after the post, the signature is recorded
 *     and the report signed (`complete`).
 * The rules are decide.ts's, checked again at every step on the report and its order as read in
 * the step's transaction, so that a report that changed, an order withdrawn, a review comment
 * opened or a role removed between the steps stops the signature. A refused step records
 * report.signoff_refused in the same transaction that spends its token.
 */

/** Why a step of the sign-off refused, for the page that says so: where it stopped, and the refusal (its status and detail). */
export interface SignoffRefusal {
  stop: SignoffStop
  refusal: Refusal
}

const refused = (denied: SignoffDenied) => ({ ok: false as const, refusal: { stop: denied.stop, refusal: denied.refusal } })

/** The session's re-authentication as the last step judges it (lib/auth/tokens.ts SessionRecord). */
export function reauthStateOf(session: SessionRecord): ReauthState {
  const { reauth, reauth_refused: other } = session
  return {
    userId: session.user_id,
    sessionId: session.id,
    ...(reauth
      ? {
          reauth: {
            prompt: reauth.prompt,
            maxAge: reauth.max_age,
            begunAt: reauth.begun_at?.toDate(),
            authTime: reauth.auth_time.toDate(),
            at: reauth.at.toDate(),
          },
        }
      : {}),
    ...(other ? { refused: { at: other.at.toDate(), userId: other.user_id, email: other.email } } : {}),
  }
}

export class SignoffStore {
  private readonly refs: ReturnType<typeof reportRefs>

  constructor(
    private readonly db: Db,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
    private readonly reports: ReportStore,
  ) {
    this.refs = reportRefs(db)
  }

  /** Records a refused step's report.signoff_refused in `tx` (after its reads). */
  private async recordRefused(tx: Transaction, ctx: AuditContext, report: ReportRecord, denied: SignoffDenied) {
    const e = signoffRefusedEvent(report, denied)
    ;(await this.audit.prepare(tx, { project_id: e.project_id, entity: e.entity })).write(ctx, e)
  }

  /**
   * Step 1: whether this signer may sign the report of its order now, then the snapshot to show
   * (the latest one when the report has not changed since, else a new one) and the form's token,
   * bound to the session, the report and that snapshot; all in one transaction.
   */
  async openPage(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    signer: Signer,
  ): Promise<{ ok: true; snapshot: SnapshotRecord; token: string } | { ok: false; refusal: SignoffRefusal }> {
    const token = newSecret('', 32)
    const snapshotId = newId()
    return this.db.transaction(async (tx) => {
      const state = await this.reports.snapshotState(tx, report, true)
      const order = await this.reports.readOrder(tx, state.report)
      const now = this.clock.now()
      const page = decideSignoffPage(state.report, order, signer)
      if (!page.ok) {
        await this.recordRefused(tx, ctx, state.report, page)
        return refused(page)
      }
      const taken = orRefuse(decideSnapshot(state, { id: snapshotId, by: signer.user.id, now }), {
        scope: { project_id: project.id, org_id: project.org_id },
        entity: { type: 'report', id: report.id },
      })
      const { snapshot } = taken.changes
      await this.reports.commit(tx, ctx, taken, (c) => this.reports.writeSnapshot(tx, c))
      const record: SignoffRecord = {
        stage: 'page',
        report_id: report.id,
        project_id: project.id,
        user_id: signer.user.id,
        session_id: signer.sessionId,
        snapshot_id: snapshot.id,
        sha256: snapshot.sha256,
        created: Timestamp.fromDate(now),
        expires_at: Timestamp.fromDate(new Date(now.getTime() + PAGE_TTL_MS)),
      }
      tx.create(this.refs.signoff(token), record)
      return { ok: true as const, snapshot, token }
    })
  }

  /**
   * Step 2: the form was posted (decideFormPost). The token is spent either way; on success the
   * pending sign-off waits for the signer to come back from the identity provider, replacing any
   * earlier one of this session for this report.
   */
  async requestReauthentication(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    form: { token: string; snapshotId: string; meaning: SignatureMeaning },
    signer: Signer,
  ): Promise<{ ok: true; snapshotId: string } | { ok: false; refusal: SignoffRefusal }> {
    return this.db.transaction(async (tx) => {
      const pageRef = this.refs.signoff(form.token)
      const page = (await tx.get(pageRef)).data() as SignoffRecord | undefined
      const current = await this.reports.currentContent(report, tx)
      const order = await this.reports.readOrder(tx, current.report)
      const earlier = await tx.get(this.pendingQuery(signer.sessionId, report.id))
      const decision = decideFormPost({ page, form, report: current.report, order, sha256: current.sha256, signer, now: this.clock.now() })
      if (!decision.ok) {
        // A token that is not this page's is not the page's to spend: the page records access.denied instead.
        if (decision.stop === 'token') return refused(decision)
        await this.recordRefused(tx, ctx, current.report, decision)
        tx.delete(pageRef)
        return refused(decision)
      }
      await this.reports.commit(tx, ctx, decision, ({ pending }) => {
        tx.delete(pageRef)
        for (const d of earlier.docs) tx.delete(d.ref)
        tx.create(this.refs.signoffs().doc(newId()), pending)
      })
      return { ok: true as const, snapshotId: decision.changes.pending.snapshot_id }
    })
  }

  private pendingQuery(sessionId: string, reportId: string) {
    return this.refs.signoffs().where('session_id', '==', sessionId).where('report_id', '==', reportId).where('stage', '==', 'reauth')
  }

  /**
   * Step 3: back from the identity provider (decideSignature). In one transaction: the signature,
   * the report signed, the revision it amends superseded, and their audit events. The pending
   * sign-off is spent either way.
   */
  async complete(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    signer: Signer,
    session: ReauthState,
  ): Promise<{ ok: true; report: ReportRecord; signature: SignatureRecord } | { ok: false; refusal: SignoffRefusal }> {
    return this.db.transaction(async (tx) => {
      const found = (await tx.get(this.pendingQuery(session.sessionId, report.id))).docs[0]
      const pending = found?.data() as SignoffRecord | undefined
      // Whose it is when another session is waiting: the browser came back with someone else's session.
      const others = pending
        ? []
        : (await tx.get(this.refs.signoffs().where('report_id', '==', report.id).where('stage', '==', 'reauth'))).docs.map(
            (d) => d.data() as SignoffRecord,
          )
      const current = await this.reports.currentContent(report, tx)
      const order = await this.reports.readOrder(tx, current.report)
      const replaced = current.report.replaces
        ? ((await tx.get(this.refs.report(current.report.replaces))).data() as ReportRecord | undefined)
        : undefined
      const decision = decideSignature({
        pending,
        othersPending: others.some((o) => o.user_id !== session.userId),
        report: current.report,
        order,
        replaced,
        sha256: current.sha256,
        signer,
        session,
        now: this.clock.now(),
      })
      if (!decision.ok) {
        // Without a live pending sign-off there was nothing of this session's to refuse: the page records access.denied.
        if (pending && decision.stop !== 'token') await this.recordRefused(tx, ctx, current.report, decision)
        if (found) tx.delete(found.ref)
        return refused(decision)
      }
      await this.reports.commit(tx, ctx, decision, (c) => {
        tx.delete(found!.ref)
        tx.set(this.refs.report(c.report.id), c.report)
        if (c.superseded) tx.set(this.refs.report(c.superseded.id), c.superseded)
      })
      return { ok: true as const, report: decision.changes.report, signature: decision.changes.signature }
    })
  }
}
