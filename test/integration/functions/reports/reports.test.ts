import { readFileSync } from 'node:fs'
import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import { rfc8785Json } from '../../../../lib/canonical.js'
import { sha256 } from '../../../../lib/ids.js'
import { verifySnapshotText } from '../../../../domain/reports/snapshot.js'
import { REPORT_TEMPLATES } from '../../../../domain/reports/template.js'
import { AdminStore } from '../../../../domain/tenancy/store.js'
import { cachedVariant, makeReportsWorld, moveOrder, signThroughStore, storeSignoff } from '../../../support/reports.js'

/**
 * The report service's JSON API: drafts and their edits, variants of the order's cache with their
 * overrides, comments, snapshots, status moves, and what a signature changes (signed through the
 * sign-off's store here; the browser flow is signoff.test.ts).
 */
describe('reports', async () => {
  const w = await makeReportsWorld()
  const analyst = await w.caller(['analyst'])
  const reviewer = await w.caller(['reviewer'])
  const reviewer2 = await w.caller(['reviewer'])
  const viewer = await w.caller(['viewer'])
  const as = (caller: { token: string }) => ({ token: caller.token })

  const events = async (reportId: string) => {
    const q = await w.deps.db.col('audit_events').where('entity.id', '==', reportId).get()
    return q.docs.map((d) => d.data()).sort((a, b) => a.seq - b.seq)
  }

  /** A draft by the analyst, with its variants added (classified) and a conclusion: ready for review. */
  async function readyForReview() {
    const d = await w.draft({ token: analyst.token, body: { conclusion: 'Positive.' } })
    for (const v of d.variants) {
      const res = await w.api('POST', `/reports/${d.report.id}/variants`, {
        ...as(analyst),
        body: { variant_id: v.id, acmg_classification: 'pathogenic', acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'] },
      })
      expect(res.status).toBe(201)
    }
    return d
  }
  async function inReview() {
    const d = await readyForReview()
    const res = await w.api('POST', `/reports/${d.report.id}/transition`, { ...as(analyst), body: { to: 'in_review' } })
    expect(res.status).toBe(200)
    return d
  }
  async function signed() {
    const d = await inReview()
    await signThroughStore(w, d.report.id, reviewer)
    return d
  }

  describe('drafts', () => {
    it('creates a draft for an order of the project by accession, with its author and what the caller may do with it', async () => {
      const { order } = await w.orderWithVariants(0)
      const res = await w.api('POST', '/reports', { ...as(analyst), body: { order_id: order.accession, summary: 'Trio genome.' } })
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        order_id: order.id,
        order_accession: order.accession,
        status: 'draft',
        template_type: 'germline_diagnostic',
        summary: 'Trio genome.',
        author: { id: analyst.user.id },
        revision: 1,
        signatures: [],
        variant_count: 0,
        sign_off: null,
        // No conclusion yet: not ready for review; an analyst may not cancel.
        available_transitions: [],
      })
      expect(res.body.print_url).toMatch(new RegExp(`/${res.body.id}/print$`))
      expect((await w.api('GET', `/reports/${res.body.id}`)).body.available_transitions).toEqual(['cancelled', 'entered_in_error'])
    })

    it('answers 404 for an order the project does not have, and 409 for an order that is still a draft', async () => {
      const other = await w.otherProject()
      const { order: foreign } = await w.orderWithVariants(0, other.project)
      // Accessions are per project: another project's order is found by its id only, and not here.
      for (const order_id of [foreign.id, 'ORD-1999-000001', '00000000-0000-4000-8000-000000000000']) {
        const res = await w.api('POST', '/reports', { body: { order_id } })
        expect(res.status, order_id).toBe(404)
        expect(res.body.detail).toContain('order')
      }
      const { makeOrder } = await import('../../../support/clinical.js')
      const draftOrder = await makeOrder(w.kernel, w.project, 'draft')
      const res = await w.api('POST', '/reports', { body: { order_id: draftOrder.id } })
      expect(res.status).toBe(409)
      expect(res.body.detail).toMatch(/is draft/)
    })

    it('lists the reports newest first, filtered by order (id or accession), status and template type, in pages', async () => {
      const { order } = await w.orderWithVariants(0)
      const ids: string[] = []
      for (const template_type of ['germline_diagnostic', 'secondary_findings', 'secondary_findings']) {
        ids.push((await w.api('POST', '/reports', { body: { order_id: order.id, template_type } })).body.id)
      }
      const byOrder = await w.api('GET', `/reports?order_id=${order.accession}`)
      expect(byOrder.body.map((r: any) => r.id)).toEqual([...ids].reverse())
      expect((await w.api('GET', `/reports?order_id=${order.id}&template_type=secondary_findings`)).body.map((r: any) => r.id)).toEqual([
        ids[2],
        ids[1],
      ])
      expect((await w.api('GET', `/reports?order_id=${order.id}&status=signed`)).body).toEqual([])
      expect((await w.api('GET', '/reports?order_id=ORD-1999-000001')).body).toEqual([])
      const first = await w.api('GET', `/reports?order_id=${order.id}&page_size=2`)
      expect(first.body).toHaveLength(2)
      const token = first.headers.get('x-next-page-token')!
      expect(first.headers.get('link')).toContain('rel="next"')
      const second = await w.api('GET', `/reports?order_id=${order.id}&page_size=2&page_token=${token}`)
      expect(second.body.map((r: any) => r.id)).toEqual([ids[0]])
      expect((await w.api('GET', `/reports?status=draft&page_size=2&page_token=${token}`)).status).toBe(400)
    })

    it('updates a draft (null clears a field) and records the changed fields', async () => {
      const { report } = await w.draft({ token: analyst.token, body: { notes: 'n', summary: 's' } })
      const res = await w.api('PATCH', `/reports/${report.id}`, {
        ...as(analyst),
        body: { notes: null, conclusion: 'Negative.', template_type: 'negative' },
      })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ summary: 's', conclusion: 'Negative.', template_type: 'negative' })
      expect(res.body.notes).toBeUndefined()
      expect((await events(report.id)).map((e) => [e.action, e.change?.fields])).toContainEqual([
        'report.updated',
        ['conclusion', 'notes', 'template_type'],
      ])
      expect((await w.api('PATCH', `/reports/${report.id}`, { body: { author: 'me' } })).status).toBe(400)
    })

    it('deletes a draft with its variants, comments and snapshots', async () => {
      const { report, variants } = await w.draft()
      await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id } })
      await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'general', comment: 'x' } })
      await w.api('POST', `/reports/${report.id}/snapshots`)
      expect((await w.api('DELETE', `/reports/${report.id}`)).status).toBe(204)
      expect((await w.api('GET', `/reports/${report.id}`)).status).toBe(404)
      for (const col of ['report_variants', 'report_comments', 'report_snapshots']) {
        expect((await w.deps.db.col(col).where('report_id', '==', report.id).get()).size, col).toBe(0)
      }
      expect((await events(report.id)).at(-1)).toMatchObject({ action: 'report.deleted', change: { from: 'draft' } })
    })

    it("answers 404 for another project's report, as if it did not exist", async () => {
      const { report } = await w.draft()
      const other = await w.otherProject()
      for (const [method, path] of [
        ['GET', `/reports/${report.id}`],
        ['PATCH', `/reports/${report.id}`],
        ['GET', `/reports/${report.id}/variants`],
        ['GET', `/reports/${report.id}/comments`],
        ['POST', `/reports/${report.id}/snapshots`],
      ] as const) {
        const res = await w.api(method, path, { project: other.project.id, body: method === 'PATCH' ? { notes: 'x' } : undefined })
        expect(res.status, `${method} ${path}`).toBe(404)
      }
    })
  })

  describe('variants', () => {
    it("adds a variant of the order's cache with its overrides, criteria written canonically, and shows the cache's values beside them", async () => {
      const { report, variants } = await w.draft()
      const v = variants[0]!
      const res = await w.api('POST', `/reports/${report.id}/variants`, {
        body: {
          variant_id: v.id,
          acmg_classification: 'likely_pathogenic',
          acmg_criteria: ['ps2', 'pm2_supporting', 'PP3'],
          inheritance: 'de_novo',
          hgvs_p: 'p.(Arg853Gln)',
        },
      })
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        variant_id: v.id,
        in_cache: true,
        variant: {
          id: v.id,
          genes: v.genes,
          chrom: v.chrom,
          pos: v.pos,
          hgvs_p: 'p.Arg853Gln',
          calls: [{ role: 'proband', zygosity: 'het' }, {}, {}],
        },
        acmg_classification: 'likely_pathogenic',
        acmg_criteria: ['PS2', 'PM2_Supporting', 'PP3'],
        criteria_suggest: { classification: 'likely_pathogenic' },
        hgvs_p: 'p.(Arg853Gln)',
        transcript: null,
        include_in_report: true,
      })
      const got = await w.api('GET', `/reports/${report.id}`)
      expect(got.body).toMatchObject({ variant_count: 1, unclassified_count: 0 })
      expect((await events(report.id)).at(-1)).toMatchObject({ action: 'report.variant_added', change: { reason: `variant ${v.id}` } })
    })

    it('answers 404 naming a variant that is not in the order’s current cache, and 409 for one already on the report', async () => {
      const { report, variants } = await w.draft()
      const missing = cachedVariant().id
      const res = await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: missing } })
      expect(res.status).toBe(404)
      expect(res.body.detail).toContain(missing)
      // Another order's variant is not this order's.
      const { variants: others } = await w.orderWithVariants(1)
      expect((await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: others[0]!.id } })).status).toBe(404)
      expect((await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id } })).status).toBe(201)
      expect((await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id } })).status).toBe(409)
    })

    it.each([
      [['PM7'], 'acmg_criteria.0'],
      [['PM2_Moderate'], "PM2's own strength"],
      [['PM2', 'PM2_Supporting'], 'already applied'],
      [['BA1_Strong'], 'stands alone'],
      [['BS1_Moderate'], '_Strong, _Supporting'],
    ])('refuses the criteria %j with a 400 naming the item (%s)', async (criteria, message) => {
      const { report, variants } = await w.draft()
      const res = await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id, acmg_criteria: criteria } })
      expect(res.status).toBe(400)
      expect(res.body.detail).toContain('acmg_criteria.')
      expect(res.body.detail).toContain(message)
    })

    it("changes overrides (null clears one, and the cache's value shows again), lists and removes variants", async () => {
      const { report, variants } = await w.draft()
      for (const v of variants) await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: v.id, transcript: 'NM_021007.3' } })
      const v = variants[1]!
      const patched = await w.api('PATCH', `/reports/${report.id}/variants/${encodeURIComponent(v.id)}`, {
        body: {
          transcript: null,
          acmg_classification: 'uncertain_significance',
          include_in_report: false,
          interpretation: 'Inherited from an unaffected parent.',
        },
      })
      expect(patched.status).toBe(200)
      expect(patched.body).toMatchObject({ transcript: null, acmg_classification: 'uncertain_significance', include_in_report: false })
      const list = await w.api('GET', `/reports/${report.id}/variants`)
      expect(list.body.map((x: any) => x.variant_id)).toEqual(variants.map((x) => x.id))
      expect(list.body[0].transcript).toBe('NM_021007.3')
      expect((await w.api('GET', `/reports/${report.id}/variants?page_size=1`)).headers.get('x-next-page-token')).toBeTruthy()
      expect((await w.api('GET', `/reports/${report.id}/variants/${v.id}`)).body.interpretation).toBe('Inherited from an unaffected parent.')
      expect((await w.api('DELETE', `/reports/${report.id}/variants/${v.id}`)).status).toBe(204)
      expect((await w.api('GET', `/reports/${report.id}/variants/${v.id}`)).status).toBe(404)
      expect((await w.api('DELETE', `/reports/${report.id}/variants/${v.id}`)).status).toBe(404)
      expect((await w.api('GET', `/reports/${report.id}`)).body).toMatchObject({ variant_count: 1, unclassified_count: 1 })
    })

    it('keeps the overrides through a rebuild of the cache that finds the same variant, and says when a rebuild no longer has it', async () => {
      const { order, report, variants } = await w.draft()
      const [kept, dropped] = variants as [(typeof variants)[0], (typeof variants)[0]]
      for (const v of variants)
        await w.api('POST', `/reports/${report.id}/variants`, {
          body: { variant_id: v.id, acmg_classification: 'pathogenic', interpretation: 'mine' },
        })
      // The rebuilt cache: the same call with another depth; the other variant is gone.
      w.cache.replace(w.project.id, order.id, { ...kept, samples: kept.samples.map((s) => ({ ...s, depth: 77 })) })
      const list = (await w.api('GET', `/reports/${report.id}/variants`)).body
      expect(list[0]).toMatchObject({
        variant_id: kept.id,
        in_cache: true,
        acmg_classification: 'pathogenic',
        interpretation: 'mine',
        variant: { calls: [{ depth: 77 }, {}, {}] },
      })
      expect(list[1]).toMatchObject({
        variant_id: dropped.id,
        in_cache: false,
        variant: null,
        acmg_classification: 'pathogenic',
        interpretation: 'mine',
      })
    })
  })

  describe('comments', () => {
    it('takes comments of each type, lists them oldest first and by type, and counts the open review comments', async () => {
      const { report } = await w.draft({ token: analyst.token })
      const made = []
      for (const [type, comment] of [
        ['review', 'Add the segregation.'],
        ['internal', 'Sanger ordered.'],
        ['general', 'Family informed.'],
      ]) {
        const res = await w.api('POST', `/reports/${report.id}/comments`, { ...as(reviewer), body: { type, comment } })
        expect(res.status).toBe(201)
        expect(res.body).toMatchObject({ type, comment, author: { id: reviewer.user.id }, resolved: null })
        made.push(res.body.id)
      }
      expect((await w.api('GET', `/reports/${report.id}/comments`)).body.map((c: any) => c.id)).toEqual(made)
      expect((await w.api('GET', `/reports/${report.id}/comments?type=internal`)).body.map((c: any) => c.id)).toEqual([made[1]])
      expect((await w.api('GET', `/reports/${report.id}`)).body).toMatchObject({ comment_count: 3, open_review_comments: 1 })
      expect((await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'praise', comment: 'x' } })).status).toBe(400)
      expect((await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'general', comment: '' } })).status).toBe(400)
    })

    it('lets only its author edit a comment, and only a reviewer resolve or reopen it', async () => {
      const { report } = await w.draft({ token: analyst.token })
      const c = (await w.api('POST', `/reports/${report.id}/comments`, { ...as(analyst), body: { type: 'review', comment: 'Check PP3.' } })).body
      const path = `/reports/${report.id}/comments/${c.id}`
      const edited = await w.api('PATCH', path, { ...as(analyst), body: { comment: 'Check PP3 and PM2.' } })
      expect(edited.status).toBe(200)
      expect(edited.body).toMatchObject({ comment: 'Check PP3 and PM2.', edited_at: expect.any(String) })
      const byOther = await w.api('PATCH', path, { ...as(reviewer), body: { comment: 'mine now' } })
      expect(byOther.status).toBe(403)
      expect(byOther.body.detail).toBe('only its author edits a comment')
      const denied = (await w.deps.db.col('audit_events').where('action', '==', 'access.denied').where('actor.id', '==', reviewer.user.id).get()).docs
      expect(denied.map((d) => d.get('change.reason'))).toContain(`edit of comment ${c.id} by someone other than its author`)
      const byAnalyst = await w.api('PATCH', path, { ...as(analyst), body: { resolved: true } })
      expect(byAnalyst.status).toBe(403)
      expect(byAnalyst.body.detail).toBe('permission comment.resolve is required')
      const resolved = await w.api('PATCH', path, { ...as(reviewer), body: { resolved: true } })
      expect(resolved.body.resolved).toEqual({ by: reviewer.user.id, at: expect.any(String) })
      expect((await w.api('GET', `/reports/${report.id}`)).body.open_review_comments).toBe(0)
      expect((await w.api('PATCH', path, { ...as(analyst), body: { comment: 'again' } })).status).toBe(409)
      const reopened = await w.api('PATCH', path, { ...as(reviewer2), body: { resolved: false } })
      expect(reopened.body.resolved).toBeNull()
      expect((await w.api('GET', `/reports/${report.id}`)).body.open_review_comments).toBe(1)
      expect((await events(report.id)).map((e) => e.action)).toEqual(
        expect.arrayContaining(['report.comment_added', 'report.comment_edited', 'report.comment_resolved', 'report.comment_reopened']),
      )
      expect((await w.api('PATCH', path, { body: {} })).status).toBe(400)
    })
  })

  describe('snapshots', () => {
    it('takes immutable snapshots whose every hash re-derives from the stored JSON and from the content the API returns', async () => {
      const { report, variants } = await w.draft({ token: analyst.token })
      await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id, acmg_classification: 'pathogenic' } })
      await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'review', comment: 'Fine.' } })
      const first = await w.api('POST', `/reports/${report.id}/snapshots`)
      expect(first.status).toBe(201)
      expect(first.body).toMatchObject({
        seq: 1,
        report_status: 'draft',
        content: { format: 'platform.report-snapshot/2', report: { id: report.id, template: REPORT_TEMPLATES.germline_diagnostic } },
      })
      // The same content hashes the same; a change changes the hash.
      const again = await w.api('POST', `/reports/${report.id}/snapshots`)
      expect(again.body.sha256).toBe(first.body.sha256)
      await w.api('PATCH', `/reports/${report.id}`, { body: { conclusion: 'Positive.' } })
      const third = await w.api('POST', `/reports/${report.id}/snapshots`)
      expect(third.body.sha256).not.toBe(first.body.sha256)

      const listed = await w.api('GET', `/reports/${report.id}/snapshots`)
      expect(listed.body.map((s: any) => s.seq)).toEqual([1, 2, 3])
      for (const s of listed.body) expect(sha256(rfc8785Json(s.content))).toBe(s.sha256)
      expect(listed.body.map((s: any) => s.canonicalization)).toEqual(['rfc8785', 'rfc8785', 'rfc8785'])
      const stored = await w.deps.db.col('report_snapshots').where('report_id', '==', report.id).get()
      expect(stored.size).toBe(3)
      for (const d of stored.docs) expect(verifySnapshotText(d.get('content'), d.get('sha256'), d.get('canonicalization'))).toBe(true)
      // The snapshot froze the cache's values and the order's people.
      const content = third.body.content
      expect(content.variants[0]).toMatchObject({ variant_id: variants[0]!.id, in_cache: true, variant: { genes: variants[0]!.genes } })
      expect(content.order.samples.map((s: any) => s.role)).toEqual(['proband', 'mother', 'father'])
      expect(content.order.samples[0].subject).toMatchObject({ display_name: 'Doe, Jamie', birth_date: '2019-04-02' })
      expect(content.comments).toEqual([expect.objectContaining({ type: 'review', comment: 'Fine.', resolved: null })])
      expect((await w.api('GET', `/reports/${report.id}`)).body.latest_snapshot).toMatchObject({ seq: 3, sha256: third.body.sha256 })
      expect((await events(report.id)).filter((e) => e.action === 'report.snapshot_taken')).toHaveLength(3)
    })

    it('serves a snapshot taken before snapshots recorded their canonicalization as legacy, and it still verifies', async () => {
      const { report } = await w.draft({ token: analyst.token })
      // Stored text and hash as the platform wrote them then (test/fixtures/reports/legacy-snapshot.json says how).
      const legacy = JSON.parse(readFileSync(new URL('../../../fixtures/reports/legacy-snapshot.json', import.meta.url), 'utf8'))
      const id = crypto.randomUUID()
      await w.deps.db.col('report_snapshots').doc(id).set({
        id,
        report_id: report.id,
        project_id: report.project_id,
        seq: 1,
        content: legacy.content,
        sha256: legacy.sha256,
        taken_by: analyst.user.id,
        taken_at: Timestamp.now(),
        report_status: 'draft',
      })
      const listed = await w.api('GET', `/reports/${report.id}/snapshots`)
      expect(listed.body).toEqual([expect.objectContaining({ id, sha256: legacy.sha256, canonicalization: 'legacy' })])
      const stored = (await w.deps.db.col('report_snapshots').doc(id).get()).data()!
      expect(verifySnapshotText(stored.content, stored.sha256, 'legacy')).toBe(true)
    })
  })

  describe('status moves', () => {
    it('sends a draft to review only with a conclusion and every included variant classified, naming what is missing', async () => {
      const { report, variants } = await w.draft({ token: analyst.token })
      await w.api('POST', `/reports/${report.id}/variants`, { body: { variant_id: variants[0]!.id } })
      const refused = await w.api('POST', `/reports/${report.id}/transition`, { ...as(analyst), body: { to: 'in_review' } })
      expect(refused.status).toBe(409)
      expect(refused.body.detail).toContain('it has no conclusion')
      expect(refused.body.detail).toContain('1 included variant has no ACMG classification')
      await w.api('PATCH', `/reports/${report.id}`, { body: { conclusion: 'Negative.' } })
      await w.api('PATCH', `/reports/${report.id}/variants/${variants[0]!.id}`, { body: { include_in_report: false } })
      const moved = await w.api('POST', `/reports/${report.id}/transition`, { ...as(analyst), body: { to: 'in_review' } })
      expect(moved.status).toBe(200)
      expect(moved.body).toMatchObject({ status: 'in_review', available_transitions: ['draft'] })
      expect(moved.body.status_history).toEqual([{ from: 'draft', to: 'in_review', by: analyst.user.id, at: expect.any(String) }])
      // In review the content is fixed: no PATCH, no variant changes; comments go on.
      expect((await w.api('PATCH', `/reports/${report.id}`, { body: { notes: 'x' } })).status).toBe(409)
      expect((await w.api('PATCH', `/reports/${report.id}/variants/${variants[0]!.id}`, { body: { include_in_report: true } })).status).toBe(409)
      expect((await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'review', comment: 'ok' } })).status).toBe(201)
      expect((await w.api('POST', `/reports/${report.id}/transition`, { ...as(analyst), body: { to: 'draft' } })).body.status).toBe('draft')
    })

    it('shows a reviewer where to sign and why they may not, and never signs through the JSON API', async () => {
      const { report } = await inReview()
      const mine = await w.api('GET', `/reports/${report.id}`, as(analyst))
      expect(mine.body.sign_off.blockers).toEqual([
        'signing needs the permission report.sign (a reviewer of the project)',
        'you are the author of this report (you also added or removed variants and sent it to review): a second person, who did not change it, reviews and signs it',
      ])
      const theirs = await w.api('GET', `/reports/${report.id}`, as(reviewer))
      expect(theirs.body.sign_off).toEqual({ url: `http://localhost/${report.id}/signoff/`, blockers: [] })
      expect(theirs.body.available_transitions).toEqual(['draft'])
      const res = await w.api('POST', `/reports/${report.id}/transition`, { ...as(reviewer), body: { to: 'signed' } })
      expect(res.status).toBe(409)
      expect(res.body.detail).toContain('signed in a browser, through its sign-off page')
    })

    it('cancels with a reason and the report.cancel permission, and marks any report entered in error', async () => {
      const { report } = await w.draft({ token: analyst.token })
      const byAnalyst = await w.api('POST', `/reports/${report.id}/transition`, { ...as(analyst), body: { to: 'cancelled', reason: 'duplicate' } })
      expect(byAnalyst.status).toBe(403)
      expect(byAnalyst.body.detail).toBe('permission report.cancel is required')
      expect((await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'cancelled' } })).status).toBe(400)
      const cancelled = await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'cancelled', reason: 'duplicate' } })
      expect(cancelled.body).toMatchObject({ status: 'cancelled', available_transitions: ['entered_in_error'] })
      expect((await w.api('DELETE', `/reports/${report.id}`)).status).toBe(409)
      const error = await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'entered_in_error', reason: 'wrong patient' } })
      expect(error.body).toMatchObject({ status: 'entered_in_error', available_transitions: [] })
      const conflict = await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'draft' } })
      expect(conflict.status).toBe(409)
      expect(conflict.body.detail).toMatch(/from entered_in_error to draft; allowed: none/)
      expect((await events(report.id)).filter((e) => e.action === 'report.transitioned').map((e) => [e.change.to, e.change.reason])).toEqual([
        ['cancelled', 'duplicate'],
        ['entered_in_error', 'wrong patient'],
      ])
    })
  })

  describe('four eyes: nobody who changed a report signs it', () => {
    const refusedAs = async (reportId: string, who: { user: { id: string; name: string } }) => {
      const page = await (await storeSignoff(w, reportId, who)).open()
      expect(page.ok).toBe(false)
      return page.ok ? undefined : page.refusal
    }

    it('refuses a reviewer who edited the conclusion and sent the report to review, and records who changed it', async () => {
      const { report } = await readyForReview()
      expect((await w.api('PATCH', `/reports/${report.id}`, { ...as(reviewer), body: { conclusion: 'Positive, as I read it.' } })).status).toBe(200)
      expect((await w.api('POST', `/reports/${report.id}/transition`, { ...as(reviewer), body: { to: 'in_review' } })).status).toBe(200)
      const got = await w.api('GET', `/reports/${report.id}`, as(reviewer))
      expect(got.body.contributors).toEqual([
        { id: analyst.user.id, did: ['created', 'changed_variants'] },
        { id: reviewer.user.id, did: ['edited', 'sent_to_review'] },
      ])
      expect(got.body.sign_off.blockers).toEqual([
        'you changed this report (you edited its text and sent it to review): a second person, who did not change it, reviews and signs it',
      ])
      await expect(signThroughStore(w, report.id, reviewer)).rejects.toThrow(/you changed this report/)
      expect((await w.api('GET', `/reports/${report.id}`)).body).toMatchObject({ status: 'in_review', signatures: [] })
      // A second reviewer, who changed nothing, signs it.
      await signThroughStore(w, report.id, reviewer2)
      expect((await w.api('GET', `/reports/${report.id}`)).body.signatures[0].signer.id).toBe(reviewer2.user.id)
    })

    type Change = (reportId: string, variantIds: string[]) => [method: string, path: string, body?: unknown]
    it.each<[string, string, Change]>([
      ['edits the summary', 'edited', (id) => ['PATCH', `/reports/${id}`, { summary: 'Trio genome, reviewed.' }]],
      ['edits the notes', 'edited', (id) => ['PATCH', `/reports/${id}`, { notes: 'Coverage 30x.' }]],
      ['changes the template type', 'edited', (id) => ['PATCH', `/reports/${id}`, { template_type: 'secondary_findings' }]],
      ['adds a variant', 'changed_variants', (id, v) => ['POST', `/reports/${id}/variants`, { variant_id: v[2], acmg_classification: 'benign' }]],
      ['removes a variant', 'changed_variants', (id, v) => ['DELETE', `/reports/${id}/variants/${v[1]}`]],
      ['changes an override', 'changed_overrides', (id, v) => ['PATCH', `/reports/${id}/variants/${v[0]}`, { interpretation: 'Mine.' }]],
    ])('refuses as signer a reviewer who %s, when the author sends it to review', async (_, did, change) => {
      const d = await w.draft({ token: analyst.token, n: 3, body: { conclusion: 'Positive.' } })
      const ids = d.variants.map((v) => v.id)
      for (const id of ids.slice(0, 2)) {
        await w.api('POST', `/reports/${d.report.id}/variants`, { ...as(analyst), body: { variant_id: id, acmg_classification: 'pathogenic' } })
      }
      const [method, path, body] = change(d.report.id, ids)
      expect((await w.api(method, path, { ...as(reviewer), body })).status).toBeLessThan(300)
      expect((await w.api('POST', `/reports/${d.report.id}/transition`, { ...as(analyst), body: { to: 'in_review' } })).status).toBe(200)
      expect((await w.api('GET', `/reports/${d.report.id}`)).body.contributors).toContainEqual({ id: reviewer.user.id, did: [did] })
      const refusal = await refusedAs(d.report.id, reviewer)
      expect(refusal).toMatchObject({ stop: 'blocked', refusal: { kind: 'forbidden' } })
      expect(JSON.stringify(refusal)).toContain('you changed this report')
    })

    it('refuses in the final step, inside the signing transaction, a signer who sent the report to review after posting the form', async () => {
      const { report } = await inReview()
      const steps = await storeSignoff(w, report.id, reviewer)
      expect((await steps.open()).ok).toBe(true)
      expect((await steps.post()).ok).toBe(true)
      // Back to draft and to review again, by the signer: the content, and so its hash, are unchanged.
      expect((await w.api('POST', `/reports/${report.id}/transition`, { ...as(analyst), body: { to: 'draft' } })).status).toBe(200)
      expect((await w.api('POST', `/reports/${report.id}/transition`, { ...as(reviewer), body: { to: 'in_review' } })).status).toBe(200)
      await steps.reauthenticate()
      const done = await steps.complete()
      expect(done).toMatchObject({ ok: false, refusal: { stop: 'blocked', refusal: { kind: 'forbidden' } } })
      expect(JSON.stringify(done)).toContain('you changed this report (you sent it to review)')
      expect((await w.api('GET', `/reports/${report.id}`)).body).toMatchObject({ status: 'in_review', signatures: [] })
      expect((await events(report.id)).at(-1)).toMatchObject({ action: 'report.signoff_refused', outcome: 'denied' })
    })

    it("counts an amendment's own contributors: its author does not sign it, the signed revision's author may", async () => {
      // Revision 1: written by a reviewer, signed by another.
      const d = await w.draft({ token: reviewer.token, body: { conclusion: 'Negative.' } })
      await w.api('POST', `/reports/${d.report.id}/transition`, { ...as(reviewer), body: { to: 'in_review' } })
      await signThroughStore(w, d.report.id, reviewer2)
      // Revision 2: the analyst amends, edits and sends it to review.
      const rev2 = (await w.api('POST', `/reports/${d.report.id}/amendments`, { ...as(analyst), body: { reason: 'New segregation data' } })).body.id
      await w.api('PATCH', `/reports/${rev2}`, { ...as(analyst), body: { conclusion: 'Negative, corrected.' } })
      await w.api('POST', `/reports/${rev2}/transition`, { ...as(analyst), body: { to: 'in_review' } })
      const got = await w.api('GET', `/reports/${rev2}`, as(reviewer))
      expect(got.body.contributors).toEqual([{ id: analyst.user.id, did: ['amended', 'edited', 'sent_to_review'] }])
      expect(got.body.sign_off.blockers).toEqual([])
      expect(JSON.stringify(await refusedAs(rev2, analyst))).toContain('you are the author of this revision')
      await signThroughStore(w, rev2, reviewer)
      expect((await w.api('GET', `/reports/${d.report.id}`)).body.status).toBe('superseded')
    })
  })

  describe('withdrawn orders: cancelled or entered in error', () => {
    it.each(['cancelled', 'entered_in_error'] as const)(
      'refuses every change of a report, and a new report, once its order is %s, naming the status; the report can still be withdrawn',
      async (status) => {
        const d = await w.draft({ token: analyst.token, n: 3, body: { conclusion: 'Positive.' } })
        const [v0, v1, v2] = d.variants.map((v) => v.id)
        for (const id of [v0, v1])
          await w.api('POST', `/reports/${d.report.id}/variants`, { body: { variant_id: id, acmg_classification: 'pathogenic' } })
        const before = (await w.api('GET', `/reports/${d.report.id}`)).body
        await moveOrder(w.kernel, w.project, d.order.id, status, 'wrong patient')
        for (const [method, path, body] of [
          ['POST', '/reports', { order_id: d.order.id }],
          ['PATCH', `/reports/${d.report.id}`, { conclusion: 'Changed.' }],
          ['POST', `/reports/${d.report.id}/variants`, { variant_id: v2 }],
          ['PATCH', `/reports/${d.report.id}/variants/${v0}`, { interpretation: 'x' }],
          ['DELETE', `/reports/${d.report.id}/variants/${v1}`, undefined],
          ['POST', `/reports/${d.report.id}/transition`, { to: 'in_review' }],
        ] as const) {
          const res = await w.api(method, path, { body })
          expect(res.status, `${method} ${path}`).toBe(409)
          expect(res.body.detail, `${method} ${path}`).toContain(`order ${d.order.accession} is ${status}`)
        }
        const after = (await w.api('GET', `/reports/${d.report.id}`)).body
        expect(after).toEqual({ ...before, available_transitions: ['cancelled', 'entered_in_error'] })
        const withdrawn = await w.api('POST', `/reports/${d.report.id}/transition`, { body: { to: 'cancelled', reason: 'order withdrawn' } })
        expect(withdrawn.body).toMatchObject({ status: 'cancelled' })
      },
    )

    it.each(['cancelled', 'entered_in_error'] as const)(
      'does not sign a report whose order is %s: not on the page, not in the final step',
      async (status) => {
        const early = await inReview()
        await moveOrder(w.kernel, w.project, early.order.id, status, 'wrong patient')
        const page = await (await storeSignoff(w, early.report.id, reviewer)).open()
        expect(page).toMatchObject({ ok: false, refusal: { stop: 'blocked', refusal: { kind: 'conflict' } } })
        expect(JSON.stringify(page)).toContain(`order ${early.order.accession} is ${status}`)
        expect((await w.api('GET', `/reports/${early.report.id}`, as(reviewer))).body.sign_off.blockers).toEqual([
          `order ${early.order.accession} is ${status}: a report of a cancelled order, or of one entered in error, is not signed`,
        ])

        // Withdrawn between the form's post and the return from the identity provider: the signing transaction reads it.
        const late = await inReview()
        const steps = await storeSignoff(w, late.report.id, reviewer)
        expect((await steps.open()).ok).toBe(true)
        expect((await steps.post()).ok).toBe(true)
        await moveOrder(w.kernel, w.project, late.order.id, status, 'wrong patient')
        await steps.reauthenticate()
        const done = await steps.complete()
        expect(done).toMatchObject({ ok: false, refusal: { stop: 'blocked', refusal: { kind: 'conflict' } } })
        expect(JSON.stringify(done)).toContain(`order ${late.order.accession} is ${status}`)
        expect((await w.api('GET', `/reports/${late.report.id}`)).body).toMatchObject({ status: 'in_review', signatures: [] })
      },
    )

    it('refuses to amend a signed report whose order was entered in error: it is marked entered in error instead', async () => {
      const { order, report } = await signed()
      await moveOrder(w.kernel, w.project, order.id, 'entered_in_error', 'wrong patient')
      const amended = await w.api('POST', `/reports/${report.id}/amendments`, { ...as(analyst), body: { reason: 'Corrected the patient' } })
      expect(amended.status).toBe(409)
      expect(amended.body.detail).toContain(`order ${order.accession} is entered_in_error`)
      const marked = await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'entered_in_error', reason: 'wrong patient' } })
      expect(marked.body).toMatchObject({ status: 'entered_in_error', available_transitions: [] })
    })
  })

  describe('signed reports and amendments', () => {
    it('never changes a signed report: PATCH, DELETE, variants and comments answer 409', async () => {
      const { report, variants } = await signed()
      const got = await w.api('GET', `/reports/${report.id}`)
      expect(got.body).toMatchObject({ status: 'signed', sign_off: null, signatures: [{ signer: { id: reviewer.user.id }, meaning: 'approved' }] })
      expect(got.body.signatures[0].sha256).toBe(got.body.latest_snapshot.sha256)
      for (const [method, path, body] of [
        ['PATCH', `/reports/${report.id}`, { notes: 'x' }],
        ['DELETE', `/reports/${report.id}`, undefined],
        ['POST', `/reports/${report.id}/variants`, { variant_id: variants[0]!.id }],
        ['PATCH', `/reports/${report.id}/variants/${variants[0]!.id}`, { interpretation: 'x' }],
        ['DELETE', `/reports/${report.id}/variants/${variants[0]!.id}`, undefined],
        ['POST', `/reports/${report.id}/comments`, { type: 'general', comment: 'x' }],
      ] as const) {
        const res = await w.api(method, path, { body })
        expect(res.status, `${method} ${path}`).toBe(409)
      }
      expect((await w.api('PATCH', `/reports/${report.id}`, { body: { notes: 'x' } })).body.detail).toContain('amend a signed report to change it')
    })

    it('amends a signed report as a new revision that replaces it, and supersedes the old one when the new one is signed', async () => {
      const { report } = await signed()
      await w.api('POST', `/reports/${report.id}/comments`, { body: { type: 'general', comment: 'x' } })
      const amended = await w.api('POST', `/reports/${report.id}/amendments`, {
        ...as(analyst),
        body: { reason: 'Reclassified after segregation', kind: 'corrected' },
      })
      expect(amended.status).toBe(201)
      expect(amended.body).toMatchObject({
        status: 'draft',
        revision: 2,
        replaces: report.id,
        author: { id: analyst.user.id },
        amendment: { kind: 'corrected', reason: 'Reclassified after segregation', by: analyst.user.id },
        variant_count: 2,
        signatures: [],
      })
      const rev2 = amended.body.id as string
      expect((await w.api('GET', `/reports/${report.id}`)).body).toMatchObject({ status: 'signed', pending_revision: rev2 })
      const again = await w.api('POST', `/reports/${report.id}/amendments`, { body: { reason: 'again' } })
      expect(again.status).toBe(409)
      expect(again.body.detail).toContain(rev2)
      expect((await w.api('GET', `/reports/${rev2}/variants`)).body.every((v: any) => v.acmg_classification === 'pathogenic')).toBe(true)

      await w.api('PATCH', `/reports/${rev2}`, { ...as(analyst), body: { conclusion: 'Positive, corrected.' } })
      await w.api('POST', `/reports/${rev2}/transition`, { ...as(analyst), body: { to: 'in_review' } })
      await signThroughStore(w, rev2, reviewer2)
      const old = await w.api('GET', `/reports/${report.id}`)
      expect(old.body).toMatchObject({ status: 'superseded', superseded_by: rev2, available_transitions: ['entered_in_error'] })
      expect(old.body.pending_revision).toBeUndefined()
      expect(old.body.signatures).toHaveLength(1)
      expect((await w.api('GET', `/reports/${rev2}`)).body.status).toBe('signed')
      expect((await w.api('POST', `/reports/${report.id}/amendments`, { body: { reason: 'x' } })).status).toBe(409)
      const actions = (await events(report.id)).map((e) => e.action)
      expect(actions).toEqual(expect.arrayContaining(['report.signed', 'report.amended', 'report.superseded']))
      expect((await events(rev2)).map((e) => e.action)).toEqual(expect.arrayContaining(['report.created', 'report.signoff_started', 'report.signed']))
    })

    it('frees the signed report for another amendment when its draft amendment is deleted', async () => {
      const { report } = await signed()
      const rev2 = (await w.api('POST', `/reports/${report.id}/amendments`, { body: { reason: 'typo' } })).body.id
      expect((await w.api('DELETE', `/reports/${rev2}`)).status).toBe(204)
      expect((await w.api('GET', `/reports/${report.id}`)).body.pending_revision).toBeUndefined()
      expect((await w.api('POST', `/reports/${report.id}/amendments`, { body: { reason: 'typo, again' } })).status).toBe(201)
      expect((await w.api('POST', `/reports/${report.id}/amendments`, { body: {} })).status).toBe(400)
    })

    it('prints a report in a browser session: the signed snapshot of a signed one, banners on those not to be used', async () => {
      const { report } = await signed()
      const session = await w.deps.tokens.createSession({ userId: viewer.user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
      const print = async (id: string, cookie = `platform_session=${session.value}`) => {
        const res = await w.app.request(`/${id}/print`, { headers: { cookie } })
        return { status: res.status, headers: res.headers, text: (await res.text()).replace(/\s+/g, ' ') }
      }
      const final = await print(report.id)
      expect(final.status).toBe(200)
      expect(final.headers.get('content-security-policy')).toContain("default-src 'none'")
      expect(final.headers.get('referrer-policy')).toBe('same-origin')
      expect(final.headers.get('cache-control')).toBe('no-store')
      const got = (await w.api('GET', `/reports/${report.id}`)).body
      expect(final.text).toContain('Final report.')
      expect(final.text).toContain(got.signatures[0].sha256)
      expect(final.text).toContain('Electronically signed')
      expect(final.text).toContain('Test Lab')
      await new AdminStore(w.deps.db, w.deps.audit, w.deps.clock).setLetterhead(
        { actor: { type: 'system', id: 'test' } },
        (await w.deps.access.getProject(w.project.id))!,
        {
          laboratory: 'Test Lab, Molecular Genetics',
          address: ['1 Helix Road', 'Berlin'],
          accreditation: 'ISO 15189:2022 accredited',
          footer: 'Questions: call us.',
        },
      )
      const lettered = await print(report.id)
      for (const line of ['Test Lab, Molecular Genetics', '1 Helix Road, Berlin', 'ISO 15189:2022 accredited', 'Questions: call us.'])
        expect(lettered.text).toContain(line)
      const rev2 = (await w.api('POST', `/reports/${report.id}/amendments`, { body: { reason: 'Corrected zygosity' } })).body.id
      expect((await print(rev2)).text).toContain('DRAFT: not signed, not for clinical use.')
      expect((await print(rev2)).text).toContain('Reason: Corrected zygosity')
      await w.api('POST', `/reports/${report.id}/transition`, { body: { to: 'entered_in_error', reason: 'wrong patient' } })
      expect((await print(report.id)).text).toContain('ENTERED IN ERROR: this report must not be used. Reason: wrong patient')
      // Without a session (and no login configured here): a page that says so; another project's report: 404.
      expect((await print(report.id, '')).status).toBe(401)
      const stranger = await w.caller(['owner'], (await w.otherProject()).project)
      const theirs = await w.deps.tokens.createSession({ userId: stranger.user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
      expect((await print(report.id, `platform_session=${theirs.value}`)).status).toBe(404)
      expect((await w.app.request('/assets/report.css')).headers.get('content-type')).toContain('text/css')
    })

    it('refuses a viewer every change but lets them read everything', async () => {
      const { report } = await signed()
      for (const path of [
        `/reports/${report.id}`,
        `/reports/${report.id}/variants`,
        `/reports/${report.id}/comments`,
        `/reports/${report.id}/snapshots`,
        '/reports',
      ]) {
        expect((await w.api('GET', path, as(viewer))).status, path).toBe(200)
      }
      expect((await w.api('GET', `/reports/${report.id}`, as(viewer))).body.available_transitions).toEqual([])
    })
  })
})
