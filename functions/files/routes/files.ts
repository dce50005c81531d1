import { createRoute, z } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { canInProject, type ProjectRecord } from '../../../lib/auth/access.js'
import type { Permission } from '../../../lib/auth/roles.js'
import { orRefuse, type Decision } from '../../../lib/decision.js'
import { badRequest } from '../../../lib/errors.js'
import { auditContext, requires, resourceApp } from '../../../lib/http.js'
import { commonErrors, conflictError, json } from '../../../lib/openapi.js'
import { pageHeaders, pageResponse, pageSizeOf } from '../../../lib/pagination.js'
import { gsUri } from '../../../lib/storage.js'
import { decideFiles, type FileState } from '../../../domain/files/decide.js'
import { ProjectFiles } from '../../../domain/files/files.js'
import { folderPath, objectPath } from '../../../domain/files/paths.js'
import { signedAddress, validity } from '../../../domain/files/signed.js'
import type { FilesDeps, FilesEnv } from '../deps.js'
import { CopyOrMove, CreateUploadUrl, FileEntry, ListQuery, PathQuery, ProjectQuery, SignedUrl } from '../schemas.js'

/**
 * /files: listing, signed download and upload addresses, copy, move, delete. The four that write
 * read the state (a stat, the frozen samples naming each path), let domain/files/decide.ts decide,
 * and do what it allows; `requires` is only the first gate (file.write, or file.delete to delete).
 */
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
  return { account, files: new ProjectFiles(await deps.storage.objects(account), deps.audit, deps.db, project) }
}

/** The permissions the rules of domain/files/decide.ts ask about. */
const FILE_PERMISSIONS: readonly Permission[] = ['file.write', 'file.delete']

/** The state a file decision is made on: the caller's permissions, and what the bucket and the samples say of `paths`. */
async function fileState(c: Context<FilesEnv>, f: ProjectFiles, paths: string[]): Promise<FileState> {
  const project = c.get('project')
  const principal = c.get('principal')
  return {
    project,
    permissions: new Set(FILE_PERMISSIONS.filter((p) => canInProject(principal, project, p))),
    objects: await f.read(paths),
  }
}

/** The decision, or its refusal thrown; a 403 leaves its access.denied event on the file it was about. */
function decided<C>(c: Context<FilesEnv>, decision: Decision<C>, path: string) {
  const project = c.get('project')
  return orRefuse(decision, {
    scope: { project_id: project.id, org_id: project.org_id },
    entity: { type: 'file', id: gsUri(project.bucket_name, path), parent: project.id },
  })
}

/** A V4 address for one method on one object of the request's project, signed as its service account. */
function signedFor(
  c: Context<FilesEnv>,
  account: string,
  method: 'GET' | 'PUT' | 'POST',
  path: string,
  valid: ReturnType<typeof validity>,
  headers?: Readonly<Record<string, string>>,
) {
  return signedAddress(c.get('deps').storage, { account, bucket: c.get('project').bucket_name, method, path }, valid, headers)
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
    const valid = validity(c.get('deps').clock.now())
    const signed = await signedFor(c, account, 'GET', path, valid)
    await f.recordDownloadAddress(auditContext(c), path, valid.expiresAt)
    return c.json(signed, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'createUploadUrl',
    method: 'post',
    path: '/files/upload-url',
    tags: ['files'],
    summary:
      'A signed address to PUT one file with the declared Content-Type, or to start a resumable upload of it, valid 900 seconds, without an Authorization header',
    description:
      "The address allows PUT only, with exactly the headers of the answer's `headers` (the declared Content-Type, stored with the object; and, for an address that may only create the file, `x-goog-if-generation-match: 0`); anything else is refused by the storage side (403). " +
      'With `resumable: true` the address allows POST only, with those headers and `x-goog-resumable: start` and an empty body: it starts a Cloud Storage resumable upload session (XML API), answered 201 with the session URI in `Location`, valid a week and used without a signature: chunks PUT with `Content-Range` (answered 308 with `Range` until the last), status queries, cancel with DELETE. The precondition holds when the last byte arrives. ' +
      'A file that exists is a 409 unless overwrite is true; replacing it needs file.delete (project admins; 403 otherwise) and is refused (409 naming the sample and the order) for a file of a sample in a signed order. ' +
      'A file that does not exist gets an address that only creates it: once the file exists, by this address or any other way, the storage answers its PUT 412 PreconditionFailed.',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CreateUploadUrl) },
    responses: { 200: json(SignedUrl), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { account, files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const path = objectPath('path', input.path, c.get('project').bucket_name)
    const valid = validity(c.get('deps').clock.now())
    const command = {
      op: 'upload-url',
      path,
      contentType: input.content_type,
      overwrite: input.overwrite,
      expiresAt: valid.expiresAt,
      resumable: input.resumable,
    } as const
    const allowed = decided(c, decideFiles(await fileState(c, f, [path]), command), path)
    const signed = await signedFor(c, account, allowed.changes.method, path, valid, allowed.changes.headers)
    await f.recordAll(auditContext(c), allowed.events)
    return c.json(signed, 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'copyFile',
    method: 'post',
    path: '/files/copy',
    tags: ['files'],
    summary: 'Copy a file within the bucket; 409 when the destination exists and overwrite is not true',
    description:
      'Replacing an existing destination (overwrite: true) needs file.delete (project admins; 403 otherwise), and is refused (409 naming the sample and the order) when the destination is a file of a sample in a signed order. A copy to a destination that did not exist never replaces one that appears meanwhile (409).',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CopyOrMove) },
    responses: { 200: json(FileEntry, 'The copy'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const bucket = c.get('project').bucket_name
    const source = objectPath('source', input.source, bucket)
    const destination = objectPath('destination', input.destination, bucket)
    const state = await fileState(c, f, [source, destination])
    const allowed = decided(c, decideFiles(state, { op: 'copy', source, destination, overwrite: input.overwrite }), destination)
    return c.json(await f.copy(auditContext(c), allowed), 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'moveFile',
    method: 'post',
    path: '/files/move',
    tags: ['files'],
    summary: 'Move or rename a file within the bucket (copy, then delete the source; a failure between them leaves the source)',
    description:
      'A move takes the file away from its path: it needs file.delete (project admins; 403 otherwise), and is refused (409 naming the sample and the order) for a file of a sample in a signed order, as source or as a destination it would replace.',
    middleware: [requires('file.write')] as const,
    request: { query: ProjectQuery, ...body(CopyOrMove) },
    responses: { 200: json(FileEntry, 'The file at its new path'), ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const input = c.req.valid('json')
    const { files: f } = await projectFiles(c, c.req.valid('query').project_id)
    const bucket = c.get('project').bucket_name
    const source = objectPath('source', input.source, bucket)
    const destination = objectPath('destination', input.destination, bucket)
    const state = await fileState(c, f, [source, destination])
    const allowed = decided(c, decideFiles(state, { op: 'move', source, destination, overwrite: input.overwrite }), source)
    return c.json(await f.move(auditContext(c), allowed), 200)
  },
)

files.openapi(
  createRoute({
    operationId: 'deleteFile',
    method: 'delete',
    path: '/files',
    tags: ['files'],
    summary: 'Delete one file (project admins); a folder is deleted by deleting its files',
    description: 'Refused (409 naming the sample and the order) for a file of a sample in a signed order.',
    middleware: [requires('file.delete')] as const,
    request: { query: PathQuery },
    responses: { 204: { description: 'Deleted' }, ...commonErrors, ...conflictError },
  }),
  async (c) => {
    const query = c.req.valid('query')
    const { files: f } = await projectFiles(c, query.project_id)
    const path = objectPath('path', query.path, c.get('project').bucket_name)
    const allowed = decided(c, decideFiles(await fileState(c, f, [path]), { op: 'delete', path }), path)
    await f.delete(auditContext(c), allowed)
    return c.body(null, 204)
  },
)
