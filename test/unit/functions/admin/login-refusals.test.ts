import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { deviceGrantNotAllowed, deviceRefusal, passwordRefusal, type ProviderRefusal } from '../../../../functions/admin/login.js'

/** Every OAuth error code these functions give a meaning to. */
const KNOWN = new Set([
  'authorization_pending',
  'slow_down',
  'access_denied',
  'authorization_declined',
  'expired_token',
  'invalid_grant',
  'bad_verification_code',
  'unsupported_grant_type',
  'unauthorized_client',
  'interaction_required',
  'invalid_client',
])
const otherCode = fc.stringMatching(/^[a-z_]{1,30}$/).filter((code) => !KNOWN.has(code))

describe("what a provider's refusal of a device-code poll means (RFC 8628 §3.5, and Entra ID's names)", () => {
  const cases: Array<[ProviderRefusal, ReturnType<typeof deviceRefusal>]> = [
    [{ error: 'authorization_pending' }, { wait: 'authorization_pending' }],
    [{ error: 'slow_down' }, { wait: 'slow_down' }],
    [{ error: 'access_denied' }, { rejected: 'access_denied: the sign-in was refused or cancelled at the identity provider' }],
    [{ error: 'authorization_declined' }, { rejected: 'access_denied: the sign-in was refused or cancelled at the identity provider' }],
    [{ error: 'expired_token' }, { rejected: 'expired_token: the code expired before the sign-in was completed; start the login again' }],
    [{ error: 'invalid_grant' }, { rejected: 'invalid_grant: unknown or already used device code; start the login again' }],
    [{ error: 'bad_verification_code' }, { rejected: 'invalid_grant: unknown or already used device code; start the login again' }],
    [{ error: 'unauthorized_client' }, undefined],
    [{ error: 'invalid_client' }, undefined],
  ]
  it.each(cases)('%j → %j', (refusal, meaning) => {
    expect(deviceRefusal(refusal)).toEqual(meaning)
  })

  it('leaves any other error to the generic handling (a misconfigured client is not a refused sign-in)', () => {
    fc.assert(fc.property(otherCode, (error) => deviceRefusal({ error }) === undefined))
  })

  it('tells the CLI to stop polling exactly when the login is over, and every reason begins with the RFC code', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KNOWN), (error) => {
        const meaning = deviceRefusal({ error })
        if (meaning && 'rejected' in meaning) return /^(access_denied|expired_token|invalid_grant): /.test(meaning.rejected)
        return meaning === undefined || meaning.wait === error
      }),
    )
  })
})

describe('why a provider refused a password login, when the password is not the question', () => {
  const cases: Array<[string, ProviderRefusal, ReturnType<typeof passwordRefusal>]> = [
    ['Google: no password grant at all', { error: 'unsupported_grant_type' }, 'method'],
    ['Keycloak without direct access grants, Okta without the grant', { error: 'unauthorized_client' }, 'method'],
    ['OIDC interaction_required', { error: 'interaction_required' }, 'interaction'],
    ['Entra ID, MFA required (AADSTS50076)', { error: 'invalid_grant', error_codes: [50076], suberror: 'basic_action' }, 'interaction'],
    ['Entra ID, MFA registration required (AADSTS50079)', { error: 'invalid_grant', error_codes: [50079] }, 'interaction'],
    ['Entra ID, conditional access (AADSTS53003)', { error: 'invalid_grant', error_codes: [53003] }, 'interaction'],
    ['Entra ID, an expired password', { error: 'invalid_grant', error_codes: [50055], suberror: 'user_password_expired' }, 'interaction'],
    ['Entra ID, a wrong password (AADSTS50126)', { error: 'invalid_grant', error_codes: [50126] }, undefined],
    ['a wrong password anywhere', { error: 'invalid_grant' }, undefined],
    ['a client that failed to authenticate', { error: 'invalid_client' }, undefined],
  ]
  it.each(cases)('%s', (_, refusal, meaning) => {
    expect(passwordRefusal(refusal)).toBe(meaning)
  })

  it('never reads a plain invalid_grant (a wrong password) as anything but a wrong password', () => {
    const entraWrongPassword = fc.integer({ min: 0, max: 999_999 }).filter((code) => ![50076, 50079, 50158, 53003].includes(code))
    fc.assert(fc.property(fc.array(entraWrongPassword), (codes) => passwordRefusal({ error: 'invalid_grant', error_codes: codes }) === undefined))
  })

  it('reads any other error code as a plain refusal', () => {
    fc.assert(fc.property(otherCode, (error) => passwordRefusal({ error, error_codes: [50076], suberror: 'basic_action' }) === undefined))
  })
})

describe('whether the provider refused to begin a device login because the CLI client may not use the grant', () => {
  it.each([
    ['unauthorized_client', true],
    ['unsupported_grant_type', true],
    ['invalid_client', true],
    ['invalid_scope', false],
    ['server_error', false],
  ])('%s → %s', (error, notAllowed) => {
    expect(deviceGrantNotAllowed({ error })).toBe(notAllowed)
  })
})
