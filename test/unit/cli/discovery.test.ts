import { describe, expect, it } from 'vitest'
import { readServiceInfo } from '../../../cli/discovery.js'

const DOC = {
  environment: 'production',
  version: '1.0.0',
  services: { admin: 'https://lab.example/admin/', compute: 'https://lab.example/compute' },
  identity_provider: { issuer: 'https://accounts.google.com', cli_login_methods: ['browser'] },
}

describe("reading a platform's discovery document", () => {
  it('keeps the environment, the version, the addresses without a trailing slash and the identity provider', () => {
    expect(readServiceInfo(JSON.stringify(DOC))).toEqual({
      ...DOC,
      services: { admin: 'https://lab.example/admin', compute: 'https://lab.example/compute' },
    })
  })

  it.each([
    ['<html>not found</html>', 'its answer is not JSON'],
    ['[1]', 'its answer is not a JSON object'],
    [JSON.stringify({ ...DOC, environment: '' }), 'its answer names no environment'],
    [JSON.stringify({ ...DOC, version: 3 }), 'its version is not readable'],
    [JSON.stringify({ ...DOC, services: { admin: 'ftp://x' } }), "its answer has no services' addresses"],
    [JSON.stringify({ ...DOC, identity_provider: { cli_login_methods: null } }), 'its identity provider is not readable'],
    [
      JSON.stringify({ ...DOC, identity_provider: { issuer: 'x', cli_login_methods: ['magic'] } }),
      "its identity provider's login methods are not readable",
    ],
  ])('refuses %s: %s', (text, message) => {
    expect(() => readServiceInfo(text)).toThrow(message)
  })

  it('takes a platform that names no version or no identity provider', () => {
    const { version: _, ...older } = DOC
    expect(readServiceInfo(JSON.stringify({ ...older, identity_provider: null }))).toMatchObject({ version: null, identity_provider: null })
  })
})
