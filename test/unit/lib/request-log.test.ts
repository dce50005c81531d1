import { describe, expect, it } from 'vitest'
import { accessLevel, loggableUrl, requestIdFrom } from '../../../lib/request-log.js'

describe('the access line', () => {
  it.each([
    [200, 'info'],
    [302, 'info'],
    [400, 'warn'],
    [401, 'warn'],
    [404, 'warn'],
    [409, 'warn'],
    [500, 'error'],
    [503, 'error'],
  ] as const)('logs a %i response at %s', (status, level) => {
    expect(accessLevel(status)).toBe(level)
  })

  it("hides the values of credential-bearing query parameters (the OIDC callback's code and state) and keeps the rest", () => {
    const url = loggableUrl('http://127.0.0.1:8101/api/v1/auth/callback?code=SplxlOBeZQQYbYS6WxSbIA&state=af0ifjsldkj&page_size=5')
    expect(url).not.toContain('SplxlOBeZQQYbYS6WxSbIA')
    expect(url).not.toContain('af0ifjsldkj')
    expect(url).toBe('http://127.0.0.1:8101/api/v1/auth/callback?code=REDACTED&state=REDACTED&page_size=5')
  })

  it("hides a signed address's X-Goog-Signature in a request target without a scheme and host, as a server receives it", () => {
    const target = '/lab-bucket/fastq/S1.fastq.gz?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Expires=900&X-Goog-Signature=8f3a9b'
    expect(loggableUrl(target)).toBe('/lab-bucket/fastq/S1.fastq.gz?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Expires=900&X-Goog-Signature=REDACTED')
  })

  it('keeps a page token, which is a cursor and not a credential', () => {
    expect(loggableUrl('http://x/api/v1/runs?page_token=abc')).toBe('http://x/api/v1/runs?page_token=abc')
  })

  it('cuts an attacker-sized URL to 2048 characters', () => {
    expect(loggableUrl(`http://x/api/v1/${'a'.repeat(100_000)}`)).toHaveLength(2048)
  })
})

describe('the request id', () => {
  it("keeps the client's X-Request-ID when it looks like an id", () => {
    expect(requestIdFrom('req-123')).toBe('req-123')
    expect(requestIdFrom('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e')
  })

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['too long', 'a'.repeat(129)],
    ['with spaces and quotes', 'x" severity="ERROR'],
    ['with a newline', 'abc\ndef'],
    ['8 KB long', 'a'.repeat(8192)],
    ['markup', '<script>alert(1)</script>'],
    ['with a colon', 'trace:123'],
  ])('makes a new one when the header is %s', (_what, header) => {
    expect(requestIdFrom(header)).toMatch(/^[0-9a-f-]{36}$/)
  })
})
