import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Permission } from '../../../../lib/auth/roles.js'
import { refusalDetail, refusalStatus, type Decision } from '../../../../lib/decision.js'
import {
  decideFiles,
  IF_GENERATION_MATCH,
  RESUMABLE,
  type FileAction,
  type FileCommand,
  type FileState,
  type FrozenSample,
  type ObjectState,
  type UploadUrl,
} from '../../../../domain/files/decide.js'

const project = { id: 'p1', org_id: 'o1', bucket_name: 'lab-bucket' }
const SIGNED: FrozenSample = { id: 's1', external_id: 'S-PROBAND', orders: ['ORD-2026-000001'] }
const EXPIRES = new Date('2026-03-01T10:15:00Z')

const LAB: Permission[] = ['file.read', 'file.write']
const ADMIN: Permission[] = ['file.read', 'file.write', 'file.delete']
const VIEWER: Permission[] = ['file.read']

const absentFile: ObjectState = { exists: false, frozenBy: [] }
const stored: ObjectState = { exists: true, size: 12, frozenBy: [] }
const frozenFile: ObjectState = { exists: true, size: 12, frozenBy: [SIGNED] }
/** Named by a frozen sample, not yet uploaded (a requisition signed before sequencing). */
const frozenAbsent: ObjectState = { exists: false, frozenBy: [SIGNED] }

const stateOf = (permissions: Permission[], objects: Record<string, ObjectState>): FileState => ({
  project,
  permissions: new Set(permissions),
  objects: new Map(Object.entries(objects)),
})

/** A decision as a row: 'allow' with its action, or the status and detail of its refusal. */
const outcome = (d: Decision<FileAction>) => (d.ok ? { allow: d.changes } : { status: refusalStatus(d.refusal), detail: refusalDetail(d.refusal) })

const upload = (overwrite: boolean): UploadUrl => ({ op: 'upload-url', path: 'a', contentType: 'application/gzip', overwrite, expiresAt: EXPIRES })
const copy = (overwrite: boolean, source = 'a', destination = 'b'): FileCommand => ({ op: 'copy', source, destination, overwrite })
const move = (overwrite: boolean, source = 'a', destination = 'b'): FileCommand => ({ op: 'move', source, destination, overwrite })
const del: FileCommand = { op: 'delete', path: 'a' }

const frozenDetail = (path: string) =>
  `${path} is a file of sample S-PROBAND (signed order ORD-2026-000001): the files of a signed order's samples cannot be moved, replaced or deleted`

describe('who may do what to a file', () => {
  it.each<[string, Permission[], Record<string, ObjectState>, FileCommand, ReturnType<typeof outcome>]>([
    // upload addresses
    [
      'an upload address for a new file only creates it',
      LAB,
      { a: absentFile },
      upload(false),
      { allow: { kind: 'sign_upload', method: 'PUT', path: 'a', headers: { 'Content-Type': 'application/gzip', [IF_GENERATION_MATCH]: '0' } } },
    ],
    [
      'asking to overwrite a file that is not there still only creates it',
      LAB,
      { a: absentFile },
      upload(true),
      { allow: { kind: 'sign_upload', method: 'PUT', path: 'a', headers: { 'Content-Type': 'application/gzip', [IF_GENERATION_MATCH]: '0' } } },
    ],
    [
      'a signed order may name a file before it is uploaded: its first upload is allowed',
      LAB,
      { a: frozenAbsent },
      upload(false),
      { allow: { kind: 'sign_upload', method: 'PUT', path: 'a', headers: { 'Content-Type': 'application/gzip', [IF_GENERATION_MATCH]: '0' } } },
    ],
    [
      'an existing file without overwrite',
      ADMIN,
      { a: stored },
      upload(false),
      { status: 409, detail: 'a already exists; send "overwrite": true to replace it' },
    ],
    ['a lab user replacing a file', LAB, { a: stored }, upload(true), { status: 403, detail: 'permission file.delete is required' }],
    [
      'an admin replacing a file',
      ADMIN,
      { a: stored },
      upload(true),
      { allow: { kind: 'sign_upload', method: 'PUT', path: 'a', headers: { 'Content-Type': 'application/gzip' } } },
    ],
    ['an admin replacing a file of a signed order', ADMIN, { a: frozenFile }, upload(true), { status: 409, detail: frozenDetail('a') }],
    [
      'a resumable upload of a new file: a POST that starts a session, its precondition signed into the start',
      LAB,
      { a: absentFile },
      { ...upload(false), resumable: true },
      {
        allow: {
          kind: 'sign_upload',
          method: 'POST',
          path: 'a',
          headers: { 'Content-Type': 'application/gzip', [IF_GENERATION_MATCH]: '0', [RESUMABLE]: 'start' },
        },
      },
    ],
    [
      'a resumable upload replacing a file, by an admin',
      ADMIN,
      { a: stored },
      { ...upload(true), resumable: true },
      { allow: { kind: 'sign_upload', method: 'POST', path: 'a', headers: { 'Content-Type': 'application/gzip', [RESUMABLE]: 'start' } } },
    ],
    [
      'a resumable upload over an existing file without overwrite',
      ADMIN,
      { a: stored },
      { ...upload(false), resumable: true },
      { status: 409, detail: 'a already exists; send "overwrite": true to replace it' },
    ],
    ['a viewer', VIEWER, { a: absentFile }, upload(false), { status: 403, detail: 'permission file.write is required' }],
    // copies
    [
      'a lab user copying to a new file',
      LAB,
      { a: stored, b: absentFile },
      copy(false),
      { allow: { kind: 'copy', source: 'a', destination: 'b', onlyIfAbsent: true } },
    ],
    [
      'copying a file of a signed order elsewhere',
      LAB,
      { a: frozenFile, b: absentFile },
      copy(false),
      { allow: { kind: 'copy', source: 'a', destination: 'b', onlyIfAbsent: true } },
    ],
    [
      'copying onto an existing file without overwrite',
      ADMIN,
      { a: stored, b: stored },
      copy(false),
      { status: 409, detail: 'destination b already exists; send "overwrite": true to replace it' },
    ],
    [
      'a lab user copying over an existing file',
      LAB,
      { a: stored, b: stored },
      copy(true),
      { status: 403, detail: 'permission file.delete is required' },
    ],
    [
      'an admin copying over an existing file',
      ADMIN,
      { a: stored, b: stored },
      copy(true),
      { allow: { kind: 'copy', source: 'a', destination: 'b', onlyIfAbsent: false } },
    ],
    ['an admin copying over a file of a signed order', ADMIN, { a: stored, b: frozenFile }, copy(true), { status: 409, detail: frozenDetail('b') }],
    ['copying a missing file', ADMIN, { a: absentFile, b: absentFile }, copy(false), { status: 404, detail: 'file a not found' }],
    ['copying a file onto itself', ADMIN, { a: stored }, copy(true, 'a', 'a'), { status: 400, detail: 'destination: is the same as source' }],
    // moves
    ['a lab user moving a file', LAB, { a: stored, b: absentFile }, move(false), { status: 403, detail: 'permission file.delete is required' }],
    [
      'a lab user moving a file of a signed order',
      LAB,
      { a: frozenFile, b: absentFile },
      move(false),
      { status: 403, detail: 'permission file.delete is required' },
    ],
    [
      'an admin moving a file',
      ADMIN,
      { a: stored, b: absentFile },
      move(false),
      { allow: { kind: 'move', source: 'a', destination: 'b', onlyIfAbsent: true } },
    ],
    ['an admin moving a file of a signed order', ADMIN, { a: frozenFile, b: absentFile }, move(false), { status: 409, detail: frozenDetail('a') }],
    [
      'an admin moving a file over another',
      ADMIN,
      { a: stored, b: stored },
      move(true),
      { allow: { kind: 'move', source: 'a', destination: 'b', onlyIfAbsent: false } },
    ],
    [
      'an admin moving a file over one of a signed order',
      ADMIN,
      { a: stored, b: frozenFile },
      move(true),
      { status: 409, detail: frozenDetail('b') },
    ],
    ['an admin moving a missing file', ADMIN, { a: absentFile, b: absentFile }, move(false), { status: 404, detail: 'file a not found' }],
    // deletions
    ['a lab user deleting a file', LAB, { a: stored }, del, { status: 403, detail: 'permission file.delete is required' }],
    ['an admin deleting a file', ADMIN, { a: stored }, del, { allow: { kind: 'delete', path: 'a' } }],
    ['an admin deleting a file of a signed order', ADMIN, { a: frozenFile }, del, { status: 409, detail: frozenDetail('a') }],
    ['an admin deleting a missing file', ADMIN, { a: absentFile }, del, { status: 404, detail: 'file a not found' }],
  ])('%s', (_, permissions, objects, command, expected) => {
    expect(outcome(decideFiles(stateOf(permissions, objects), command))).toEqual(expected)
  })

  it('names every frozen sample naming the file, with each of its signed orders', () => {
    const two: ObjectState = {
      exists: true,
      frozenBy: [SIGNED, { id: 's2', external_id: 'S-MOTHER', orders: ['ORD-2026-000001', 'ORD-2026-000007'] }],
    }
    const d = decideFiles(stateOf(ADMIN, { a: two }), del)
    expect(d.ok ? '' : refusalDetail(d.refusal)).toBe(
      "a is a file of sample S-PROBAND (signed order ORD-2026-000001), sample S-MOTHER (signed orders ORD-2026-000001, ORD-2026-000007): the files of a signed order's samples cannot be moved, replaced or deleted",
    )
  })

  it('takes a path the state does not mention as absent: a 404, or a write that may only create', () => {
    expect(outcome(decideFiles(stateOf(ADMIN, {}), del))).toMatchObject({ status: 404 })
    expect(outcome(decideFiles(stateOf(ADMIN, { a: stored }), copy(true)))).toEqual({
      allow: { kind: 'copy', source: 'a', destination: 'b', onlyIfAbsent: true },
    })
  })

  it('returns the audit events to record once the action is done', () => {
    const uri = (p: string) => `gs://lab-bucket/${p}`
    const entity = (p: string) => ({ type: 'file', id: uri(p), parent: 'p1' })
    const scope = { org_id: 'o1', project_id: 'p1' }
    const events = (objects: Record<string, ObjectState>, command: FileCommand) => {
      const d = decideFiles(stateOf(ADMIN, objects), command)
      return d.ok ? d.events : []
    }
    expect(events({ a: absentFile }, upload(false))).toEqual([
      {
        action: 'file.upload_url_issued',
        ...scope,
        entity: entity('a'),
        change: { to: 'application/gzip', reason: 'valid until 2026-03-01T10:15:00.000Z; creates the file only' },
      },
    ])
    expect(events({ a: stored }, upload(true))[0]?.change?.reason).toBe('valid until 2026-03-01T10:15:00.000Z; may replace the file')
    expect(events({ a: stored, b: absentFile }, copy(false))).toEqual([
      { action: 'file.copied', ...scope, entity: entity('b'), change: { from: uri('a'), to: uri('b') } },
    ])
    expect(events({ a: stored, b: stored }, move(true))).toEqual([
      { action: 'file.moved', ...scope, entity: entity('a'), change: { from: uri('a'), to: uri('b'), reason: 'replaced the object that was there' } },
    ])
    expect(events({ a: stored }, del)).toEqual([
      { action: 'file.deleted', ...scope, entity: entity('a'), change: { from: uri('a'), reason: '12 bytes' } },
    ])
  })
})

describe('properties of the file rules, over every caller, command and state', () => {
  const PATHS = ['a', 'b', 'c']
  const path = fc.constantFrom(...PATHS)
  const permissions = fc.subarray<Permission>(['file.read', 'file.write', 'file.delete'])
  const frozenBy = fc.array(
    fc.record({
      id: fc.constantFrom('s1', 's2'),
      external_id: fc.constantFrom('S-1', 'S-2'),
      orders: fc.array(fc.constantFrom('ORD-2026-000001'), { minLength: 1 }),
    }),
    { maxLength: 2 },
  )
  const object = fc.record({ exists: fc.boolean(), size: fc.nat(), frozenBy })
  // Some paths may be missing from the state: the rules must be safe then too.
  const objects = fc.dictionary(path, object, { maxKeys: PATHS.length })
  const command: fc.Arbitrary<FileCommand> = fc.oneof(
    fc.record({
      op: fc.constant('upload-url' as const),
      path,
      contentType: fc.constant('text/plain'),
      overwrite: fc.boolean(),
      expiresAt: fc.constant(EXPIRES),
      resumable: fc.boolean(),
    }),
    fc.record({ op: fc.constantFrom('copy' as const, 'move' as const), source: path, destination: path, overwrite: fc.boolean() }),
    fc.record({ op: fc.constant('delete' as const), path }),
  )
  const caseOf = fc.record({ permissions, objects, command })

  /** The paths an allowed action would destroy: delete or move away, or write over (a write without the only-if-absent precondition). */
  function destroys(action: FileAction): string[] {
    switch (action.kind) {
      case 'sign_upload':
        return action.headers[IF_GENERATION_MATCH] === '0' ? [] : [action.path]
      case 'copy':
        return action.onlyIfAbsent ? [] : [action.destination]
      case 'move':
        return action.onlyIfAbsent ? [action.source] : [action.source, action.destination]
      case 'delete':
        return [action.path]
    }
  }

  it('no operation by any caller moves, overwrites or deletes a file a frozen sample names', () => {
    fc.assert(
      fc.property(caseOf, ({ permissions, objects, command }) => {
        const d = decideFiles(stateOf(permissions, objects), command)
        if (!d.ok) return
        for (const p of destroys(d.changes)) expect(objects[p]?.frozenBy ?? [], `${command.op} destroys ${p}`).toEqual([])
      }),
      { numRuns: 2000 },
    )
  })

  it('refuses a resumable upload address exactly when it refuses a single PUT, and signs the same headers and x-goog-resumable: start', () => {
    fc.assert(
      fc.property(caseOf, ({ permissions, objects, command }) => {
        if (command.op !== 'upload-url') return
        const single = decideFiles(stateOf(permissions, objects), { ...command, resumable: false })
        const resumable = decideFiles(stateOf(permissions, objects), { ...command, resumable: true })
        if (!single.ok || !resumable.ok) {
          expect(outcome(resumable)).toEqual(outcome(single))
          return
        }
        expect(resumable.changes).toEqual({ ...single.changes, method: 'POST', headers: { ...single.changes.headers, [RESUMABLE]: 'start' } })
      }),
      { numRuns: 1000 },
    )
  })

  it('no caller without file.delete destroys an existing object', () => {
    fc.assert(
      fc.property(caseOf, ({ permissions, objects, command }) => {
        if (permissions.includes('file.delete')) return
        const d = decideFiles(stateOf(permissions, objects), command)
        if (d.ok) expect(destroys(d.changes)).toEqual([])
      }),
      { numRuns: 2000 },
    )
  })

  it('destroys only what exists: a write to a path that was absent may only create it', () => {
    fc.assert(
      fc.property(caseOf, ({ permissions, objects, command }) => {
        const d = decideFiles(stateOf(permissions, objects), command)
        if (d.ok) for (const p of destroys(d.changes)) expect(objects[p]?.exists).toBe(true)
      }),
      { numRuns: 2000 },
    )
  })
})
