import { describe, expect, it } from 'vitest'
import {
  absent,
  allow,
  conflictWith,
  deny,
  forbiddenBy,
  invalid,
  missingPermission,
  orRefuse,
  preconditionFailed,
  Refused,
  unauthenticated,
  refusalReason,
  type Refusal,
} from '../../../lib/decision.js'
import { ApiError } from '../../../lib/errors.js'

describe('refusals map to HTTP in one place', () => {
  const cases: Array<[string, Refusal, number, string]> = [
    ['a malformed command', invalid('path: a segment is over 255 bytes'), 400, 'path: a segment is over 255 bytes'],
    ['a credential that is no longer good', unauthenticated('this login was ended: log in again'), 401, 'this login was ended: log in again'],
    ['a missing permission', missingPermission('file.delete'), 403, 'permission file.delete is required'],
    ['a rule about the caller', forbiddenBy('signer changed the report', 'you changed this report'), 403, 'you changed this report'],
    ['an unknown record', absent('sample'), 404, 'sample not found'],
    ['a state that forbids it', conflictWith('order ORD-2026-000001 is signed'), 409, 'order ORD-2026-000001 is signed'],
    ['a failed precondition', preconditionFailed('the object exists'), 412, 'the object exists'],
  ]
  it.each(cases)('%s', (_, refusal, status, detail) => {
    const err = new Refused(refusal)
    expect(err).toBeInstanceOf(ApiError)
    expect(err.status).toBe(status)
    expect(err.detail).toBe(detail)
  })

  it('records the reason of a 403: the missing permission, or the rule', () => {
    expect(refusalReason(missingPermission('report.sign'))).toBe('missing permission report.sign')
    expect(refusalReason(forbiddenBy('the author signing', 'no'))).toBe('the author signing')
  })

  it('hands an allowed decision through and throws a denied one with where it was refused', () => {
    expect(orRefuse(allow({ a: 1 })).changes).toEqual({ a: 1 })
    const on = { scope: { project_id: 'p' }, entity: { type: 'report', id: 'r' } }
    try {
      orRefuse(deny(forbiddenBy('x', 'y')), on)
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(Refused)
      expect((err as Refused).on).toEqual(on)
    }
  })
})
