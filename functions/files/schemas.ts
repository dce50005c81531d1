import { z } from '@hono/zod-openapi'
import { PageQuery } from '../../lib/pagination.js'

import { SIGNED_URL_TTL_SECONDS } from '../../domain/files/signed.js'

const projectId = z.string().optional().openapi({ description: 'The project; when given, must equal X-Project-ID' })
const pathDescription =
  "An object name in the project's bucket (fastq/S1_R1.fastq.gz), or gs://<the project's bucket>/<object name>; no '..', leading '/', control characters or empty segments; at most 1,024 bytes, and at most 255 bytes between two '/'"

export const ListQuery = PageQuery.extend({
  project_id: projectId,
  path: z
    .string()
    .default('')
    .openapi({ description: "The folder to list one level of (fastq/ or fastq; empty for the bucket's top)", example: 'fastq/' }),
})

export const PathQuery = z.object({
  project_id: projectId,
  path: z.string().min(1).openapi({ description: pathDescription, example: 'fastq/S-DEMO-PROBAND_R1.fastq.gz' }),
})

export const ProjectQuery = z.object({ project_id: projectId })

export const FileEntry = z
  .object({
    kind: z.enum(['object', 'folder']).openapi({ description: "object: a file; folder: a prefix ending in '/' with objects under it" }),
    name: z.string().openapi({ description: "The last segment of the path (a folder's ends in '/')", example: 'S-DEMO-PROBAND_R1.fastq.gz' }),
    path: z.string().openapi({ description: 'The object name (or folder prefix) in the bucket', example: 'fastq/S-DEMO-PROBAND_R1.fastq.gz' }),
    uri: z.string().openapi({ example: 'gs://demo-lab-demo/fastq/S-DEMO-PROBAND_R1.fastq.gz' }),
    size: z.number().int().openapi({ description: 'Bytes; 0 for a folder' }),
    updated: z.string().optional().openapi({ description: 'ISO 8601 UTC; absent for a folder' }),
    content_type: z.string().optional().openapi({ description: 'As declared at upload, else from the name; absent for a folder' }),
  })
  .openapi('File')

const contentType = z
  .string()
  .max(200)
  .regex(
    /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=("[^"]*"|[A-Za-z0-9!#$&^_.+-]+))*$/,
    'a media type such as application/gzip',
  )

export const CreateUploadUrl = z
  .object({
    path: z.string().min(1).openapi({ description: pathDescription, example: 'fastq/S1_R1.fastq.gz' }),
    content_type: contentType.openapi({ description: 'The Content-Type the PUT must carry; stored with the object', example: 'application/gzip' }),
    overwrite: z.boolean().default(false).openapi({
      description:
        'Allow replacing an existing object (default: 409 when it exists). Replacing needs file.delete; a file of a sample in a signed order is never replaced (409)',
    }),
    resumable: z.boolean().default(false).openapi({
      description:
        'An address that starts a Cloud Storage resumable upload session (POST with x-goog-resumable: start, answered 201 with the session URI in Location) instead of one PUT: for large files, sent in chunks and resumed after an interruption. The same refusals apply',
    }),
  })
  .openapi('CreateUploadUrl')

export const CopyOrMove = z
  .object({
    source: z.string().min(1).openapi({ description: pathDescription, example: 'fastq/S1_R1.fastq.gz' }),
    destination: z.string().min(1).openapi({ description: pathDescription, example: 'archive/S1_R1.fastq.gz' }),
    overwrite: z.boolean().default(false).openapi({
      description:
        'Replace an existing destination (default: 409 when it exists). Replacing needs file.delete; a file of a sample in a signed order is never replaced (409)',
    }),
  })
  .openapi('CopyOrMoveFile')

export const SignedUrl = z
  .object({
    url: z.string().openapi({ description: 'The V4 signed address; use it without an Authorization header' }),
    expires_in_seconds: z.number().int().openapi({ example: SIGNED_URL_TTL_SECONDS }),
    expires_at: z.string().openapi({ description: 'ISO 8601 UTC' }),
    method: z
      .enum(['GET', 'PUT', 'POST'])
      .openapi({ description: 'The only method the address allows (POST: the start of a resumable upload session)' }),
    headers: z.record(z.string(), z.string()).openapi({
      description:
        "Headers the request must carry with exactly these values: they are signed into the address, which the storage refuses without them (403). An upload: its Content-Type, and x-goog-if-generation-match: 0 when the address may only create the file (Cloud Storage's precondition: a PUT once the file exists is answered 412 PreconditionFailed). A resumable start: also x-goog-resumable: start. A download: none",
      example: { 'Content-Type': 'application/gzip', 'x-goog-if-generation-match': '0' },
    }),
  })
  .openapi('SignedUrl')
