import type { AuditInput } from '../../lib/audit.js'
import type { Permission } from '../../lib/auth/roles.js'
import { absent, allow, conflictWith, deny, invalid, missingPermission, type Decision, type Refusal } from '../../lib/decision.js'
import { gsUri } from '../../lib/storage/port.js'

/**
 * Who may do what to a file of the project's bucket (docs/files.md), decided in one place: a pure
 * function of the caller's permissions, what the bucket holds at the paths the command names and
 * the frozen samples that name them, returning the one storage action to take (and the audit
 * events to record once it is taken) or a refusal. The file service reads that state (a stat, a
 * query of the samples), calls `decideFiles` and does what it says.
 *
 * - Creating an object needs file.write. Destroying one, by a deletion, by moving it away or by
 *   writing over it, needs file.delete as well: a move always, a copy or an upload address when the
 *   destination exists and `overwrite` is true.
 * - A file that a frozen sample names (in a signed order: its `fastq`, `bam`, `cram` or `vcf`) is
 *   never moved, replaced or deleted, whoever asks (409 naming the sample and the order). It may be
 *   created while it is absent (the FASTQ of a signed requisition arrives after the signature),
 *   and read and copied elsewhere.
 * - A write to a destination that was absent when the decision was made carries Cloud Storage's
 *   precondition "only if there is still no object" (`x-goog-if-generation-match: 0` in an upload
 *   address; ifGenerationMatch=0 in a copy), so what appears meanwhile is never overwritten by a
 *   decision that did not see it. A path the state does not mention is taken as absent for the same
 *   reason: that can only lead to a 404 or to a write the storage refuses if there is an object.
 */

/** A sample that names a file and is frozen: it is in at least one signed order. */
export interface FrozenSample {
  id: string
  external_id: string
  /** The accessions of its signed orders. */
  orders: readonly string[]
}

/** What the bucket and the clinical records say of one path. */
export interface ObjectState {
  /** Whether an object is stored at the path now. */
  exists: boolean
  /** Its size in bytes, when it exists (a deletion's audit event records it). */
  size?: number
  /** The frozen samples that name the path. */
  frozenBy: readonly FrozenSample[]
}

export interface FileProject {
  id: string
  org_id: string
  bucket_name: string
}

export interface FileState {
  project: FileProject
  /** The caller's permissions in the project (the rules ask about file.write and file.delete). */
  permissions: ReadonlySet<Permission>
  /** What was read of each path the command names, by object name. */
  objects: ReadonlyMap<string, ObjectState>
}

/**
 * A signed address to PUT `path` (valid until `expiresAt`), carrying `contentType`; with
 * `resumable`, an address to POST that starts a Cloud Storage resumable upload session instead.
 */
export interface UploadUrl {
  op: 'upload-url'
  path: string
  contentType: string
  overwrite: boolean
  expiresAt: Date
  resumable?: boolean
}
export interface CopyFile {
  op: 'copy'
  source: string
  destination: string
  overwrite: boolean
}
/** A copy, then the deletion of the source. */
export interface MoveFile {
  op: 'move'
  source: string
  destination: string
  overwrite: boolean
}
export interface DeleteFile {
  op: 'delete'
  path: string
}
export type FileCommand = UploadUrl | CopyFile | MoveFile | DeleteFile

/** Cloud Storage's precondition header that lets a write happen only while there is no object. */
export const IF_GENERATION_MATCH = 'x-goog-if-generation-match'

/** Cloud Storage's header that makes a signed POST start a resumable upload session. */
export const RESUMABLE = 'x-goog-resumable'

/**
 * Sign an upload address for `path` binding these headers (the client sends each with exactly this
 * value): PUT for the object itself, POST (with x-goog-resumable: start) for a resumable session,
 * whose chunks then go to the session URI the storage answers.
 */
export interface SignUpload {
  kind: 'sign_upload'
  method: 'PUT' | 'POST'
  path: string
  headers: Readonly<Record<string, string>>
}
/** Copy within the bucket; with `onlyIfAbsent`, the storage refuses it if the destination exists by then. */
export interface CopyObject {
  kind: 'copy'
  source: string
  destination: string
  onlyIfAbsent: boolean
}
/** Copy as above, then delete the source. */
export interface MoveObject {
  kind: 'move'
  source: string
  destination: string
  onlyIfAbsent: boolean
}
export interface DeleteObject {
  kind: 'delete'
  path: string
}
export type FileAction = SignUpload | CopyObject | MoveObject | DeleteObject

const ABSENT: ObjectState = { exists: false, frozenBy: [] }

const describeFrozen = (s: FrozenSample) => `sample ${s.external_id} (signed order${s.orders.length === 1 ? '' : 's'} ${s.orders.join(', ')})`

/**
 * The refusal of a change to a file that frozen samples name, or undefined when none does. Also
 * the file service's last look at a move's source, just before it deletes it.
 */
export function frozenRefusal(path: string, frozenBy: readonly FrozenSample[]): Refusal | undefined {
  if (!frozenBy.length) return undefined
  return conflictWith(
    `${path} is a file of ${frozenBy.map(describeFrozen).join(', ')}: the files of a signed order's samples cannot be moved, replaced or deleted`,
  )
}

export function decideFiles(state: FileState, command: UploadUrl): Decision<SignUpload>
export function decideFiles(state: FileState, command: CopyFile): Decision<CopyObject>
export function decideFiles(state: FileState, command: MoveFile): Decision<MoveObject>
export function decideFiles(state: FileState, command: DeleteFile): Decision<DeleteObject>
export function decideFiles(state: FileState, command: FileCommand): Decision<FileAction>
export function decideFiles(state: FileState, command: FileCommand): Decision<FileAction> {
  const { project, permissions } = state
  const objectAt = (path: string) => state.objects.get(path) ?? ABSENT
  const uri = (path: string) => gsUri(project.bucket_name, path)
  const event = (action: string, path: string, change: NonNullable<AuditInput['change']>): AuditInput => ({
    action,
    org_id: project.org_id,
    project_id: project.id,
    entity: { type: 'file', id: uri(path), parent: project.id },
    change,
  })
  /** A write to `path`: refused, or allowed with whether it must find no object there (there was none). */
  const writeTo = (path: string, overwrite: boolean, taken: string): Decision<{ onlyIfAbsent: boolean }> => {
    const target = objectAt(path)
    if (!target.exists) return allow({ onlyIfAbsent: true })
    if (!overwrite) return deny(conflictWith(`${taken} already exists; send "overwrite": true to replace it`))
    if (!permissions.has('file.delete')) return deny(missingPermission('file.delete'))
    const frozen = frozenRefusal(path, target.frozenBy)
    return frozen ? deny(frozen) : allow({ onlyIfAbsent: false })
  }
  const replaced = (onlyIfAbsent: boolean) => (onlyIfAbsent ? {} : { reason: 'replaced the object that was there' })

  switch (command.op) {
    case 'upload-url': {
      if (!permissions.has('file.write')) return deny(missingPermission('file.write'))
      const write = writeTo(command.path, command.overwrite, command.path)
      if (!write.ok) return write
      const { onlyIfAbsent } = write.changes
      const headers: Record<string, string> = { 'Content-Type': command.contentType }
      // Signed into the start of a resumable session, the precondition holds when its last byte arrives.
      if (onlyIfAbsent) headers[IF_GENERATION_MATCH] = '0'
      if (command.resumable) headers[RESUMABLE] = 'start'
      const valid = `${command.resumable ? 'resumable, starts ' : ''}valid until ${command.expiresAt.toISOString()}`
      return allow({ kind: 'sign_upload', method: command.resumable ? 'POST' : 'PUT', path: command.path, headers }, [
        event('file.upload_url_issued', command.path, {
          to: command.contentType,
          reason: onlyIfAbsent ? `${valid}; creates the file only` : `${valid}; may replace the file`,
        }),
      ])
    }
    case 'copy':
    case 'move': {
      const { source, destination } = command
      if (!permissions.has('file.write')) return deny(missingPermission('file.write'))
      // A move takes the file away from its path: the same permission as deleting it.
      if (command.op === 'move' && !permissions.has('file.delete')) return deny(missingPermission('file.delete'))
      if (source === destination) return deny(invalid('destination: is the same as source'))
      const from = objectAt(source)
      if (!from.exists) return deny(absent(`file ${source}`))
      if (command.op === 'move') {
        const frozen = frozenRefusal(source, from.frozenBy)
        if (frozen) return deny(frozen)
      }
      const write = writeTo(destination, command.overwrite, `destination ${destination}`)
      if (!write.ok) return write
      const { onlyIfAbsent } = write.changes
      const change = { from: uri(source), to: uri(destination), ...replaced(onlyIfAbsent) }
      return command.op === 'copy'
        ? allow({ kind: 'copy', source, destination, onlyIfAbsent }, [event('file.copied', destination, change)])
        : allow({ kind: 'move', source, destination, onlyIfAbsent }, [event('file.moved', source, change)])
    }
    case 'delete': {
      if (!permissions.has('file.delete')) return deny(missingPermission('file.delete'))
      const target = objectAt(command.path)
      if (!target.exists) return deny(absent(`file ${command.path}`))
      const frozen = frozenRefusal(command.path, target.frozenBy)
      if (frozen) return deny(frozen)
      return allow({ kind: 'delete', path: command.path }, [
        event('file.deleted', command.path, { from: uri(command.path), reason: `${target.size ?? 0} bytes` }),
      ])
    }
  }
}
