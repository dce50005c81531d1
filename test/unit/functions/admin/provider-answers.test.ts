import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cliClientAuthMethod, normalizeDeviceAuthorization } from '../../../../functions/admin/login.js'

describe("a device authorization answer, read under RFC 8628's names", () => {
  const rfc = { device_code: 'd', user_code: 'WDJB-MJHT', verification_uri: 'https://idp.example.org/device', expires_in: 600, interval: 5 }
  it.each<[string, unknown, unknown]>([
    ['an RFC 8628 answer stays as it is', rfc, rfc],
    [
      "Google's verification_url becomes verification_uri",
      { device_code: 'd', user_code: 'GQVQ-JKEC', verification_url: 'https://www.google.com/device', expires_in: 1800, interval: 5 },
      { device_code: 'd', user_code: 'GQVQ-JKEC', verification_uri: 'https://www.google.com/device', expires_in: 1800, interval: 5 },
    ],
    [
      'both names: the RFC one wins and the other is left',
      { ...rfc, verification_url: 'https://other' },
      { ...rfc, verification_url: 'https://other' },
    ],
    ['a verification_url that is no string is not taken', { device_code: 'd', verification_url: 7 }, { device_code: 'd', verification_url: 7 }],
    ['an error answer is untouched', { error: 'invalid_client' }, { error: 'invalid_client' }],
    ['not an object', 'text', 'text'],
    ['null', null, null],
    ['an array', [1], [1]],
  ])('%s', (_, body, expected) => {
    expect(normalizeDeviceAuthorization(body)).toEqual(expected)
  })

  it('always gives an answer with a string verification_uri the address it named under either name, and changes nothing else', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string().filter((k) => !['verification_uri', 'verification_url', '__proto__'].includes(k)),
          fc.jsonValue(),
        ),
        fc.webUrl(),
        fc.constantFrom('verification_uri', 'verification_url'),
        (rest, url, name) => {
          const out = normalizeDeviceAuthorization({ ...rest, [name]: url }) as Record<string, unknown>
          expect(out.verification_uri).toBe(url)
          expect(out).not.toHaveProperty('verification_url')
          for (const [k, v] of Object.entries(rest)) expect(out[k]).toEqual(v)
        },
      ),
    )
  })
})

describe("how the CLI's client sends its secret", () => {
  it.each<[string, string[] | undefined, string]>([
    [
      'Google lists client_secret_post (its examples send the secret in the body)',
      ['client_secret_post', 'client_secret_basic'],
      'client_secret_post',
    ],
    ['a provider listing only Basic', ['client_secret_basic', 'private_key_jwt'], 'client_secret_basic'],
    ['a provider listing nothing: Basic, which RFC 6749 §2.3.1 requires of all', undefined, 'client_secret_basic'],
  ])('%s', (_, methods, expected) => {
    expect(cliClientAuthMethod({ token_endpoint_auth_methods_supported: methods })).toBe(expected)
  })
})
