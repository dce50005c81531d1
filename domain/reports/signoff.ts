import { FieldValue, Timestamp } from '@google-cloud/firestore'
import type { AuditContext, AuditInput, AuditWriter } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import type { Clock } from '../../lib/clock.js'
import type { Db } from '../../lib/db.js'
import { newId, newSecret } from '../../lib/ids.js'
import {
  reportRefs,
  type ReportRecord,
  type SignatureMeaning,
  type SignatureRecord,
  type SignoffRecord,
  type SnapshotRecord,
  type StatusChange,
  type UserRef,
} from './model.js'
import type { ReportProject, ReportStore } from './store.js'

/**
 * The browser sign-off of a report (DOMAIN.md, Reports; 21 CFR 11.50, 11.70, 11.200):
 *  1. the page shows the snapshot that will be signed, with a form whose token is bound to the
 *     session, the report and the snapshot (`openPage`);
 *  2. the form's post is checked and the signer is sent to the identity provider to prove who they
 *     are again (`requestReauthentication`);
 *  3. back from the provider, with an authentication of the last five minutes by the same user in
 *     the same session, the signature is recorded and the report signed (`complete`).
 * Every step checks the same rules again (`blockersFor`), so a report that changed, a review
 * comment opened or a role removed between the steps stops the signature.
 */
export const PAGE_TTL_MS = 15 * 60 * 1000
export const REAUTH_TTL_MS = 5 * 60 * 1000
/** A signature is accepted only with an authentication at the identity provider this recent. */
export const MAX_AUTH_AGE_MS = 5 * 60 * 1000

export type Blocker =
  { kind: 'status'; status: string } | { kind: 'permission'; permission: Permission } | { kind: 'author' } | { kind: 'open_review'; count: number }

export interface Signer {
  user: UserRef
  /** The platform session the browser uses (SessionRecord.id). */
  sessionId: string
  can: (permission: Permission) => boolean
}

/** Why this signer may not sign this report now: none when they may. */
export function blockersFor(
  report: Pick<ReportRecord, 'status' | 'author' | 'open_review_comments'>,
  signer: Pick<Signer, 'user' | 'can'>,
): Blocker[] {
  const blockers: Blocker[] = []
  if (report.status !== 'in_review') blockers.push({ kind: 'status', status: report.status })
  if (!signer.can('report.sign')) blockers.push({ kind: 'permission', permission: 'report.sign' })
  if (report.author.id === signer.user.id) blockers.push({ kind: 'author' })
  if (report.open_review_comments > 0) blockers.push({ kind: 'open_review', count: report.open_review_comments })
  return blockers
}

export function describeBlocker(b: Blocker): string {
  switch (b.kind) {
    case 'status':
      return b.status === 'draft'
        ? 'the report is a draft: it is signed once it is in review'
        : `the report is ${b.status.replaceAll('_', ' ')}: only a report in review is signed`
    case 'permission':
      return `signing needs the permission ${b.permission} (a reviewer of the project)`
    case 'author':
      return 'you are the author of this report: a second person reviews and signs it'
    case 'open_review':
      return `${b.count} review comment${b.count === 1 ? ' is' : 's are'} still open: resolve ${b.count === 1 ? 'it' : 'them'} before signing`
  }
}

/** Why a step of the sign-off refused; `status` is the HTTP status of the page that says so. */
export type SignoffRefusal =
  | { kind: 'blocked'; blockers: Blocker[]; status: 403 | 409 }
  | { kind: 'changed'; status: 409; expected: string; actual: string }
  | { kind: 'token'; status: 403; detail: string }
  | { kind: 'session'; status: 403; detail: string }
  | { kind: 'reauthentication'; status: 403; detail: string }

export const refusalStatus = (blockers: Blocker[]): 403 | 409 => (blockers.some((b) => b.kind === 'permission' || b.kind === 'author') ? 403 : 409)

export function describeRefusal(r: SignoffRefusal): string {
  switch (r.kind) {
    case 'blocked':
      return r.blockers.map(describeBlocker).join('; ')
    case 'changed':
      return 'the report changed after this page was shown: what you would sign is no longer what it says. Open the sign-off page again to see the report as it is now.'
    case 'token':
    case 'session':
    case 'reauthentication':
      return r.detail
  }
}

export interface ReauthState {
  /** The session's user and id. */
  userId: string
  sessionId: string
  /** The ID token's auth_time of the session's latest authentication at the provider, and when the platform recorded it. */
  authTime?: Date
  reauthenticatedAt?: Date
  /** A re-authentication in this session by another user, refused by the admin service. */
  refused?: { at: Date; userId: string; email?: string }
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

  private event(
    project: ReportProject,
    report: ReportRecord,
    action: string,
    change?: AuditInput['change'],
    outcome?: AuditInput['outcome'],
  ): AuditInput {
    return {
      action,
      outcome,
      project_id: project.id,
      org_id: project.org_id,
      entity: { type: 'report', id: report.id, parent: report.order_id },
      change,
    }
  }

  /** Records a refused step (the page says why): report.signoff_refused, outcome denied. */
  async recordRefusal(ctx: AuditContext, project: ReportProject, report: ReportRecord, refusal: SignoffRefusal): Promise<void> {
    await this.audit.record(
      ctx,
      this.event(project, report, 'report.signoff_refused', { reason: `${refusal.kind}: ${describeRefusal(refusal)}`.slice(0, 500) }, 'denied'),
    )
  }

  /**
   * Step 1: the snapshot to show (the latest one when the report has not changed since, else a new
   * one) and the form's token, bound to the session, the report and that snapshot.
   */
  async openPage(
    ctx: AuditContext,
    project: ReportProject,
    report: ReportRecord,
    signer: Signer,
  ): Promise<{ ok: true; snapshot: SnapshotRecord; token: string } | { ok: false; refusal: SignoffRefusal }> {
    const blockers = blockersFor(report, signer)
    if (blockers.length) return { ok: false, refusal: { kind: 'blocked', blockers, status: refusalStatus(blockers) } }
    const snapshot = await this.reports.takeSnapshot(ctx, project, report, signer.user.id, { reuse: true })
    const token = newSecret('', 32)
    const now = this.clock.now()
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
    await this.refs.signoff(token).create(record)
    return { ok: true, snapshot, token }
  }

  /**
   * Step 2: the form was posted. Its token must be the page's (same session, report and snapshot,
   * unused, unexpired); the report must still say what the snapshot says and the signer may still
   * sign it. The token is spent either way; on success the pending sign-off, bound the same way and
   * valid five minutes, waits for the signer to come back from the identity provider (replacing
   * any earlier one of this session for this report).
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
      const now = this.clock.now()
      const tokenProblem = !page
        ? 'the form has no valid security token: open the sign-off page again and sign from it'
        : page.stage !== 'page' || page.report_id !== report.id || page.snapshot_id !== form.snapshotId
          ? 'the form does not belong to this sign-off: open the sign-off page again and sign from it'
          : page.expires_at.toMillis() <= now.getTime()
            ? 'the sign-off page has expired: open it again'
            : page.session_id !== signer.sessionId || page.user_id !== signer.user.id
              ? 'the form was shown in another session: sign from a page you opened yourself'
              : undefined
      if (tokenProblem || !page) return { ok: false as const, refusal: { kind: 'token' as const, status: 403 as const, detail: tokenProblem ?? '' } }
      const current = await this.reports.currentContent(report, tx)
      const earlier = await tx.get(this.pendingQuery(signer.sessionId, report.id))
      const blockers = blockersFor(current.report, signer)
      const chain = await this.audit.prepare(tx, { project_id: project.id, entity: { type: 'report', id: report.id } })
      tx.delete(pageRef)
      let refusal: SignoffRefusal | undefined
      if (blockers.length) refusal = { kind: 'blocked', blockers, status: refusalStatus(blockers) }
      else if (current.sha256 !== page.sha256) refusal = { kind: 'changed', status: 409, expected: page.sha256, actual: current.sha256 }
      if (refusal) {
        chain.write(
          ctx,
          this.event(
            project,
            current.report,
            'report.signoff_refused',
            { reason: `${refusal.kind}: ${describeRefusal(refusal)}`.slice(0, 500) },
            'denied',
          ),
        )
        return { ok: false as const, refusal }
      }
      for (const d of earlier.docs) tx.delete(d.ref)
      const pending: SignoffRecord = {
        ...page,
        stage: 'reauth',
        meaning: form.meaning,
        created: Timestamp.fromDate(now),
        expires_at: Timestamp.fromDate(new Date(now.getTime() + REAUTH_TTL_MS)),
      }
      tx.create(this.refs.signoffs().doc(newId()), pending)
      chain.write(
        ctx,
        this.event(project, current.report, 'report.signoff_started', {
          reason: `snapshot ${page.snapshot_id} sha256:${page.sha256}; meaning ${form.meaning}; re-authentication requested`,
        }),
      )
      return { ok: true as const, snapshotId: page.snapshot_id }
    })
  }

  private pendingQuery(sessionId: string, reportId: string) {
    return this.refs.signoffs().where('session_id', '==', sessionId).where('report_id', '==', reportId).where('stage', '==', 'reauth')
  }

  /**
   * Step 3: back from the identity provider. The pending sign-off must be this session's and
   * unexpired, the session's user must have authenticated again after the form was posted and
   * within the last five minutes (not someone else), and every rule must still hold on the report
   * as it is now, which must hash as the snapshot did. Then, in one transaction: the signature,
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
      const now = this.clock.now()
      if (!found || !pending) {
        // Say whose it is when another session is waiting: the browser came back with someone else's session.
        const others = await tx.get(this.refs.signoffs().where('report_id', '==', report.id).where('stage', '==', 'reauth'))
        const theirs = others.docs.map((d) => d.data() as SignoffRecord).find((o) => o.user_id !== session.userId)
        return {
          ok: false as const,
          refusal: theirs
            ? {
                kind: 'session' as const,
                status: 403 as const,
                detail: "this sign-off was started by another user: this browser's session is not theirs, and nothing was signed",
              }
            : {
                kind: 'token' as const,
                status: 403 as const,
                detail: 'no sign-off of this report is waiting in this session (it was completed, or it expired): open the sign-off page again',
              },
        }
      }
      if (pending.expires_at.toMillis() <= now.getTime()) {
        tx.delete(found.ref)
        return {
          ok: false as const,
          refusal: { kind: 'token' as const, status: 403 as const, detail: 'this sign-off has expired (five minutes): open the sign-off page again' },
        }
      }

      const current = await this.reports.currentContent(report, tx)
      const replaced = current.report.replaces
        ? ((await tx.get(this.refs.report(current.report.replaces))).data() as ReportRecord | undefined)
        : undefined
      const supersedes = replaced?.status === 'signed' ? replaced : undefined
      const audit = await this.audit.prepareMany(tx, [
        { project_id: project.id, entity: { type: 'report', id: report.id } },
        ...(supersedes ? [{ project_id: project.id, entity: { type: 'report', id: supersedes.id } }] : []),
      ])
      tx.delete(found.ref)

      const refusal = this.completionRefusal(pending, current, signer, session, now)
      if (refusal) {
        audit.write(
          ctx,
          this.event(
            project,
            current.report,
            'report.signoff_refused',
            { reason: `${refusal.kind}: ${describeRefusal(refusal)}`.slice(0, 500) },
            'denied',
          ),
        )
        return { ok: false as const, refusal }
      }

      const at = Timestamp.fromDate(now)
      const signature: SignatureRecord = {
        signer: signer.user,
        at,
        meaning: pending.meaning ?? 'approved',
        snapshot_id: pending.snapshot_id,
        sha256: pending.sha256,
        auth_time: Timestamp.fromDate(session.authTime!),
      }
      const reason = `signed by ${signer.user.email ?? signer.user.id} (${signature.meaning}); snapshot ${pending.snapshot_id} sha256:${pending.sha256}`
      const change: StatusChange = { from: 'in_review', to: 'signed', by: signer.user.id, at, reason }
      const signed: ReportRecord = {
        ...current.report,
        status: 'signed',
        signatures: [...current.report.signatures, signature],
        status_history: [...current.report.status_history, change],
        updated: at,
      }
      tx.update(this.refs.report(report.id), {
        status: signed.status,
        signatures: signed.signatures,
        status_history: signed.status_history,
        updated: at,
      })
      audit.write(ctx, this.event(project, signed, 'report.signed', { from: 'in_review', to: 'signed', reason }))
      if (supersedes) {
        const superseded: StatusChange = {
          from: 'signed',
          to: 'superseded',
          by: signer.user.id,
          at,
          reason: `revision ${signed.revision} (report ${signed.id}) signed`,
        }
        tx.update(this.refs.report(supersedes.id), {
          status: 'superseded',
          superseded_by: signed.id,
          pending_revision: FieldValue.delete(),
          status_history: [...supersedes.status_history, superseded],
          updated: at,
        })
        audit.write(ctx, this.event(project, supersedes, 'report.superseded', { from: 'signed', to: 'superseded', reason: superseded.reason }))
      }
      return { ok: true as const, report: signed, signature }
    })
  }

  private completionRefusal(
    pending: SignoffRecord,
    current: { report: ReportRecord; sha256: string },
    signer: Signer,
    session: ReauthState,
    now: Date,
  ): SignoffRefusal | undefined {
    if (session.sessionId !== pending.session_id || session.userId !== pending.user_id || signer.user.id !== pending.user_id) {
      return { kind: 'session', status: 403, detail: 'this sign-off was started in another session, by another user: the session is not theirs' }
    }
    const started = pending.created.toMillis()
    if (session.refused && session.refused.at.getTime() >= started) {
      return {
        kind: 'session',
        status: 403,
        detail: `you signed in again as ${session.refused.email ?? 'another user'}, not as ${signer.user.email ?? 'the user who started this sign-off'}: the signature must be the signer's own. Nothing was signed.`,
      }
    }
    if (!session.authTime || !session.reauthenticatedAt || session.reauthenticatedAt.getTime() < started) {
      return {
        kind: 'reauthentication',
        status: 403,
        detail: 'you did not sign in again at the identity provider for this signature: start the sign-off again',
      }
    }
    if (now.getTime() - session.authTime.getTime() > MAX_AUTH_AGE_MS) {
      return {
        kind: 'reauthentication',
        status: 403,
        detail: 'your sign-in at the identity provider is more than five minutes old: start the sign-off again',
      }
    }
    const blockers = blockersFor(current.report, signer)
    if (blockers.length) return { kind: 'blocked', blockers, status: refusalStatus(blockers) }
    if (current.sha256 !== pending.sha256) return { kind: 'changed', status: 409, expected: pending.sha256, actual: current.sha256 }
    return undefined
  }
}
