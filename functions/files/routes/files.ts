import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { ProjectRecord } from '../../../lib/auth/access.js'
import { badRequest, conflict } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { pageHeaders, pageResponse, pageSizeOf } from '../../../lib/pagination.js'
import { signUrl } from '../../../lib/storage/v4.js'
import { ProjectFiles } from '../../../domain/files/files.js'
import { folderPath, objectPath } from '../../../domain/files/paths.js'
import type { FilesDeps, FilesEnv } from '../deps.js'
import { CopyOrMove, CreateUploadUrl, FileEntry, ListQuery, PathQuery, ProjectQuery, SIGNED_URL_TTL_SECONDS, SignedUrl } from '../schemas.js'

/** /files: listing, signed download and upload addresses, copy, move, delete. */
export const files = resourceApp<FilesDeps>()

/** The project's service account: the identity every bucket operation and signature is made as. */
function accountOf(project: ProjectRecord): string {
  if (!project.credentials) {
    throw badRequest(
      `project '${project.slug}' has no cloud credentials configured; a project admin must set its service account (admin service: project credentials) before its files can be reached`,
    )
  }
  return project.credentials.service_account_email
}

/** The files of the request's project; a project_id query parameter must name the same project as X-Project-ID. */
async function projectFiles(c: Context<FilesEnv>, projectId: string | undefined) {
  const deps = c.get('deps')
  const project = c.get('project')
  if (projectId !== undefined && projectId !== project.id) throw badRequest('project_id: must equal the X-Project-ID header')
  const account = accountOf(project)
  return { account, files: new ProjectFiles(await deps.storage.objects(account), deps.audit, project) }
}

/** A V4 address for one method on one object, valid SIGNED_URL_TTL_SECONDS from now (whole seconds, as X-Goog-Date counts). */
async function signedAddress(c: Context<FilesEnv>, account: string, method: 'GET' | 'PUT', path: string, headers: Record<string, string> = {}) {
  const deps = c.get('deps')
  const project = c.get('project')
  const now = new Date(Math.floor(deps.clock.now().getTime() / 1000) * 1000)
  const url = await signUrl(
    { method, bucket: project.bucket_name, object: path, expiresSeconds: SIGNED_URL_TTL_SECONDS, now, origin: deps.storage.origin, headers },
    deps.storage.signer(account),
  )
  const expiresAt = new Date(now.getTime() + SIGNED_URL_TTL_SECONDS * 1000)
  return { body: { url, expires_in_seconds: SIGNED_URL_TTL_SECONDS, expires_at: expiresAt.toISOString(), method, headers }, expiresAt }
}

const body = <T extends z.ZodType>(schema: T) => ({ body: { content: { 'application/json': { schema } }, required: true } })

files.openapi(
  createRoute({
    operationId: 'listFiles',
    method: 'get',
    path: '/files',
    tags: ['files'],
    summary: "One level of the project's bucket under path, like gsutil ls: objects and folder/ prefixes, in name order",
    middleware: [requires('file.read')] as const,
    request: { query: ListQuery },
    responses: { 200: { ...json(z.array(FileEntry)), headers: pageHeaders }, ...commonErrors },
  }),
  async (c) => {
    const query = c.req.valid('query')
    const { files: f } = await projectFiles(c, query.project_id)
    const folder = folderPath('path', query.path, c.get('project').bucket_name)
    return pageResponse(c, await f.list(folder, { pageSize: pageSizeOf(query), pageToken: query.page_token }))
  },
)

files.openapi(
  createRoute({
    operationId: 'getDownloadUrl',
    method: 'get',
    path: '/files/download-url',
    tags: ['files'],
    summary: 'A signed address to GET one file, valid 900 seconds, without an Authorization header',
    middleware: [requires('file.read')] as const,
    request: { query: PathQuery },
    responses: { 200: json(SignedUrl), ...commonErrors },
  }),
  async (c) => {
    const query = c.req.valid('query')
    const { account, files: f } = await projectFiles(c, query.project_id)
    const path = objectPath('path', query.path, c.get('project').bucket_name)
    await f.require(path)
    const signed = await signedAddress(c, account, 'GET', path)
    await f.recordAddressIssued(auditContext(c), 'download', path, { expiresAt: signed.expiresAt })
    return c.json(signed.body, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'createUploadUrl',
    method: 'post',
    path: '/files/upload-url',
    tags: ['files'],
    summary: 'A signed address to PUT one file with the declared Content-Type, valid 900 seconds, without an Authorization header',
    description:
      'The address allows PUT only, with exactly the declared Content-Type (stored with the object); anything else is refused by the storage side. An existing object is a 409 unless overwrite is true.',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CreateUploadUrl) },
    responses: { 200: json(SignedUrl), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { account, files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const path = objectPath('path', input.path, c.get('project').bucket_name)
    if (!input.overwrite && (await f.stat(path))) throw conflict(`${path} already exists; send "overwrite": true to replace it`)
    const signed = await signedAddress(c, account, 'PUT', path, { 'content-type': input.content_type })
    await f.recordAddressIssued(auditContext(c), 'upload', path, { expiresAt: signed.expiresAt, contentType: input.content_type })
    return c.json({ ...signed.body, headers: { 'Content-Type': input.content_type } }, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'copyFile',
    method: 'post',
    path: '/files/copy',
    tags: ['files'],
    summary: 'Copy a file within the bucket; 409 when the destination exists and overwrite is not true',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CopyOrMove) },
    responses: { 200: json(FileEntry, 'The copy'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const bucket = c.get('project').bucket_name
    const copied = await f.copy(
      auditContext(c),
      objectPath('source', input.source, bucket),
      objectPath('destination', input.destination, bucket),
      input.overwrite,
    )
    return c.json(copied, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'moveFile',
    method: 'post',
    path: '/files/move',
    tags: ['files'],
    summary: 'Move or rename a file within the bucket (copy, then delete the source; a failure between them leaves the source)',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CopyOrMove) },
    responses: { 200: json(FileEntry, 'The file at its new path'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const bucket = c.get('project').bucket_name
    const moved = await f.move(
      auditContext(c),
      objectPath('source', input.source, bucket),
      objectPath('destination', input.destination, bucket),
      input.overwrite,
    )
    return c.json(moved, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'deleteFile',
    method: 'delete',
    path: '/files',
    tags: ['files'],
    summary: 'Delete one file (project admins); a folder is deleted by deleting its files',
    middleware: [requires('file.delete')] as const,
    request: { query: PathQuery },
    responses: { 204: { description: 'Deleted' }, ...commonErrors },
  }),
  async (c) => {
    const query = c.req.valid('query')
    const { files: f } = await projectFiles(c, query.project_id)
    await f.delete(auditContext(c), objectPath('path', query.path, c.get('project').bucket_name))
    return c.body(null, 204)
  },
)
