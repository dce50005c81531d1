import { createRoute, z } from '@hono/zod-openapi'
import { notFound } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { PageQuery, pageHeaders, pageResponse, paginateArray } from '../../../lib/pagination.js'
import type { ReportsDeps } from '../deps.js'
import {
  AddReportVariant,
  AmendReport,
  Comment,
  CommentListQuery,
  CommentParams,
  CreateComment,
  CreateReport,
  Report,
  ReportIdParam,
  ReportListQuery,
  ReportTransition,
  ReportVariant,
  ReportVariantParams,
  Snapshot,
  UpdateComment,
  UpdateReport,
  UpdateReportVariant,
} from '../schemas.js'
import { callerRef, canFor, loadReport, presentReport, projectOf, toComment, toReports, toSnapshot, toVariant } from '../views.js'

/** /reports: reports of orders, their variants, comments, snapshots, status moves and amendments. */
export const reports = resourceApp<ReportsDeps>()

const read = requires('report.read')
const draft = requires('report.draft')
const body = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } }, required: true })
const VARIANT_CHANGE =
  "The caller becomes one of the report's contributors, who do not sign it. 409 naming the order's status while the order is cancelled or entered in error."
const tags = { reports: ['reports'], variants: ['report variants'], comments: ['comments'], snapshots: ['snapshots'] }

reports.openapi(
  createRoute({
    operationId: 'listReports',
    method: 'get',
    path: '/reports',
    tags: tags.reports,
    summary: "The project's reports, newest first; filters order_id (id or accession), status, template_type",
    middleware: [read] as const,
    request: { query: PageQuery.extend(ReportListQuery.shape) },
    responses: { 200: { ...json(z.array(Report)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const { order_id, status, template_type, ...page } = c.req.valid('query')
    const { reports: store } = c.get('deps')
    let orderId = order_id
    if (order_id !== undefined) {
      // An unknown order has no reports; its accession is resolved to the id the reports keep.
      orderId = (await store.resolveOrder(c.get('project').id, order_id))?.id ?? `unknown:${order_id}`
    }
    const result = await store.list(c.get('project').id, { order_id: orderId, status, template_type }, page)
    return pageResponse(c, { items: await toReports(c, result.items), nextPageToken: result.nextPageToken })
  },
)

reports.openapi(
  createRoute({
    operationId: 'createReport',
    method: 'post',
    path: '/reports',
    tags: tags.reports,
    summary: 'Create a draft report for an order of the project (404 for an order it does not have; 409 for a draft, cancelled or erroneous order)',
    middleware: [draft] as const,
    request: { body: body(CreateReport) },
    responses: { 201: json(Report, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { order_id, ...fields } = c.req.valid('json')
    const report = await c.get('deps').reports.create(auditContext(c), projectOf(c), order_id, fields, callerRef(c))
    return c.json(await presentReport(c, report), 201)
  },
)

reports.openapi(
  createRoute({
    operationId: 'getReport',
    method: 'get',
    path: '/reports/{id}',
    tags: tags.reports,
    summary: 'Report details, with the status moves this caller may make and, in review, where and whether they may sign it',
    middleware: [read] as const,
    request: { params: ReportIdParam },
    responses: { 200: json(Report), ...commonErrors },
  }),
  async (c) => c.json(await presentReport(c, await loadReport(c, c.req.valid('param').id)), 200),
)

reports.openapi(
  createRoute({
    operationId: 'updateReport',
    method: 'patch',
    path: '/reports/{id}',
    tags: tags.reports,
    summary: 'Update a draft: summary, notes, template_type, conclusion (409 for any other status: a signed report is amended instead)',
    description:
      "The caller becomes one of the report's contributors (edited), who do not sign it. 409 naming the order's status while the order is cancelled or entered in error.",
    middleware: [draft] as const,
    request: { params: ReportIdParam, body: body(UpdateReport) },
    responses: { 200: json(Report), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const updated = await c.get('deps').reports.update(auditContext(c), projectOf(c), report.id, c.req.valid('json'), c.get('principal').user.id)
    return c.json(await presentReport(c, updated), 200)
  },
)

reports.openapi(
  createRoute({
    operationId: 'deleteReport',
    method: 'delete',
    path: '/reports/{id}',
    tags: tags.reports,
    summary: 'Delete a draft, with its variants, comments and snapshots (409 for any other status: cancel it, or mark it entered in error)',
    middleware: [draft] as const,
    request: { params: ReportIdParam },
    responses: { 204: { description: 'Deleted' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    await c.get('deps').reports.delete(auditContext(c), projectOf(c), report.id)
    return c.body(null, 204)
  },
)

reports.openapi(
  createRoute({
    operationId: 'transitionReport',
    method: 'post',
    path: '/reports/{id}/transition',
    tags: tags.reports,
    summary: 'Move the report to the status `to` along the allowed edges (409 naming the allowed targets otherwise)',
    description:
      'Edges and the permission each needs: draft→in_review (report.draft; a conclusion, and every included variant classified); in_review→draft (report.draft); ' +
      'draft|in_review→cancelled (report.cancel, reason); any→entered_in_error (report.cancel, reason). in_review→signed happens only in the browser sign-off ' +
      '({report_url}/{id}/signoff/), signed→superseded only when an amendment of the report is signed. Whoever sends a report to review becomes one of its contributors, ' +
      "who do not sign it. While the order is cancelled or entered in error, only cancelled and entered_in_error are allowed (409 naming the order's status).",
    middleware: [draft] as const,
    request: { params: ReportIdParam, body: body(ReportTransition) },
    responses: { 200: json(Report), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const moved = await c
      .get('deps')
      .reports.transition(auditContext(c), projectOf(c), report.id, c.req.valid('json'), canFor(c), c.get('principal').user.id)
    return c.json(await presentReport(c, moved), 200)
  },
)

reports.openapi(
  createRoute({
    operationId: 'amendReport',
    method: 'post',
    path: '/reports/{id}/amendments',
    tags: tags.reports,
    summary: 'Amend a signed report: a new draft revision (n + 1) that replaces it, starting from its content; the signed one is never edited',
    description:
      'The new revision copies the fields, variants (with their overrides) and comments of the signed one, and names it in `replaces`. When the new revision is signed, ' +
      "the old one becomes superseded in the same transaction. One amendment at a time (409 naming the one in progress). The caller is the new revision's author and its first contributor; " +
      "those of the signed revision are not carried over. 409 naming the order's status while the order is cancelled or entered in error (mark the report entered in error instead).",
    middleware: [draft] as const,
    request: { params: ReportIdParam, body: body(AmendReport) },
    responses: { 201: json(Report, 'The new revision, a draft'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const amended = await c.get('deps').reports.amend(auditContext(c), projectOf(c), report.id, c.req.valid('json'), callerRef(c))
    return c.json(await presentReport(c, amended), 201)
  },
)

// ---------------------------------------------------------------------------------------------
// Variants

reports.openapi(
  createRoute({
    operationId: 'listReportVariants',
    method: 'get',
    path: '/reports/{id}/variants',
    tags: tags.variants,
    summary: "The variants on the report, in the order they were added: the report's overrides with the variant as the order's current cache has it",
    middleware: [read] as const,
    request: { params: ReportIdParam, query: PageQuery },
    responses: { 200: { ...json(z.array(ReportVariant)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const { reports: store } = c.get('deps')
    const records = await store.listVariantRecords(report.id)
    const key = (r: (typeof records)[number]) => `${String(r.added_at.toMillis()).padStart(15, '0')} ${r.variant_id}`
    const page = paginateArray(records, key, { filters: {}, query: c.req.valid('query') })
    const joined = await store.join(report, page.items)
    return pageResponse(c, { items: joined.map(toVariant), nextPageToken: page.nextPageToken })
  },
)

reports.openapi(
  createRoute({
    operationId: 'addReportVariant',
    method: 'post',
    path: '/reports/{id}/variants',
    tags: tags.variants,
    summary: "Add a variant of the order's current variant cache by its id, with optional overrides (404 naming it when the cache does not have it)",
    description: VARIANT_CHANGE,
    middleware: [draft] as const,
    request: { params: ReportIdParam, body: body(AddReportVariant) },
    responses: { 201: json(ReportVariant, 'Added'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const { variant_id, ...overrides } = c.req.valid('json')
    const added = await c.get('deps').reports.addVariant(auditContext(c), projectOf(c), report, variant_id, overrides, c.get('principal').user.id)
    return c.json(toVariant(added), 201)
  },
)

reports.openapi(
  createRoute({
    operationId: 'getReportVariant',
    method: 'get',
    path: '/reports/{id}/variants/{variant_id}',
    tags: tags.variants,
    summary: 'One variant of the report, with its overrides and its values in the current cache',
    middleware: [read] as const,
    request: { params: ReportVariantParams },
    responses: { 200: json(ReportVariant), ...commonErrors },
  }),
  async (c) => {
    const { id, variant_id } = c.req.valid('param')
    const found = await c.get('deps').reports.getVariant(await loadReport(c, id), variant_id)
    if (!found) throw notFound(`variant ${variant_id} on report ${id}`)
    return c.json(toVariant(found), 200)
  },
)

reports.openapi(
  createRoute({
    operationId: 'updateReportVariant',
    method: 'patch',
    path: '/reports/{id}/variants/{variant_id}',
    tags: tags.variants,
    summary: "Change a variant's per-report overrides (a draft only); null clears one",
    description: VARIANT_CHANGE,
    middleware: [draft] as const,
    request: { params: ReportVariantParams, body: body(UpdateReportVariant) },
    responses: { 200: json(ReportVariant), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id, variant_id } = c.req.valid('param')
    const report = await loadReport(c, id)
    const updated = await c
      .get('deps')
      .reports.updateVariant(auditContext(c), projectOf(c), report, variant_id, c.req.valid('json'), c.get('principal').user.id)
    return c.json(toVariant(updated), 200)
  },
)

reports.openapi(
  createRoute({
    operationId: 'removeReportVariant',
    method: 'delete',
    path: '/reports/{id}/variants/{variant_id}',
    tags: tags.variants,
    summary: 'Take a variant off the report (a draft only); the variant cache is not changed',
    description: VARIANT_CHANGE,
    middleware: [draft] as const,
    request: { params: ReportVariantParams },
    responses: { 204: { description: 'Removed' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id, variant_id } = c.req.valid('param')
    await c.get('deps').reports.removeVariant(auditContext(c), projectOf(c), await loadReport(c, id), variant_id, c.get('principal').user.id)
    return c.body(null, 204)
  },
)

// ---------------------------------------------------------------------------------------------
// Comments

reports.openapi(
  createRoute({
    operationId: 'listReportComments',
    method: 'get',
    path: '/reports/{id}/comments',
    tags: tags.comments,
    summary: "The report's comments, oldest first (a conversation); filter type",
    middleware: [read] as const,
    request: { params: ReportIdParam, query: PageQuery.extend(CommentListQuery.shape) },
    responses: { 200: { ...json(z.array(Comment)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const { type, ...page } = c.req.valid('query')
    const result = await c.get('deps').reports.listComments(report.id, type, page)
    return pageResponse(c, { items: result.items.map(toComment), nextPageToken: result.nextPageToken })
  },
)

reports.openapi(
  createRoute({
    operationId: 'createReportComment',
    method: 'post',
    path: '/reports/{id}/comments',
    tags: tags.comments,
    summary: 'Comment on a draft or in-review report; an open review comment blocks signing until a reviewer resolves it',
    middleware: [requires('comment.write')] as const,
    request: { params: ReportIdParam, body: body(CreateComment) },
    responses: { 201: json(Comment, 'Created'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const comment = await c.get('deps').reports.addComment(auditContext(c), projectOf(c), report.id, c.req.valid('json'), callerRef(c))
    return c.json(toComment(comment), 201)
  },
)

reports.openapi(
  createRoute({
    operationId: 'updateReportComment',
    method: 'patch',
    path: '/reports/{id}/comments/{comment_id}',
    tags: tags.comments,
    summary: 'Edit the text (its author, with comment.write) or resolve and reopen it (resolved true or false: a reviewer, comment.resolve)',
    middleware: [read] as const,
    request: { params: CommentParams, body: body(UpdateComment) },
    responses: { 200: json(Comment), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const { id, comment_id } = c.req.valid('param')
    const report = await loadReport(c, id)
    const comment = await c.get('deps').reports.updateComment(auditContext(c), projectOf(c), report.id, comment_id, c.req.valid('json'), {
      id: c.get('principal').user.id,
      can: canFor(c),
    })
    return c.json(toComment(comment), 200)
  },
)

// ---------------------------------------------------------------------------------------------
// Snapshots

reports.openapi(
  createRoute({
    operationId: 'listReportSnapshots',
    method: 'get',
    path: '/reports/{id}/snapshots',
    tags: tags.snapshots,
    summary: "The report's snapshots, oldest first, each with its content and SHA-256",
    middleware: [read] as const,
    request: { params: ReportIdParam, query: PageQuery },
    responses: { 200: { ...json(z.array(Snapshot)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const result = await c.get('deps').reports.listSnapshots(report.id, c.req.valid('query'))
    return pageResponse(c, { items: result.items.map(toSnapshot), nextPageToken: result.nextPageToken })
  },
)

reports.openapi(
  createRoute({
    operationId: 'createReportSnapshot',
    method: 'post',
    path: '/reports/{id}/snapshots',
    tags: tags.snapshots,
    summary: 'Take an immutable snapshot of the report now: its canonical JSON (RFC 8785) and SHA-256',
    description:
      'The content is the report, its order and the people tested, its variants with the values of the variant cache at this moment, and its comments. ' +
      'Only content is hashed, so two snapshots of an unchanged report have the same SHA-256.',
    middleware: [draft] as const,
    request: { params: ReportIdParam },
    responses: { 201: json(Snapshot, 'Taken'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const report = await loadReport(c, c.req.valid('param').id)
    const snapshot = await c.get('deps').reports.takeSnapshot(auditContext(c), projectOf(c), report, c.get('principal').user.id)
    return c.json(toSnapshot(snapshot), 201)
  },
)
