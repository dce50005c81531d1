import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkMarkdown, checkSite, githubAnchors, markdownLinks, repositoryMarkdown } from '../../../scripts/check-docs.js'

const ROOT = resolve(import.meta.dirname, '../../..')

/** `checkMarkdown` over Markdown files given inline, with only those files (and `cli/`) existing. */
function checkFiles(files: Record<string, string>) {
  const map = new Map(Object.entries(files))
  return checkMarkdown(map, (path) => map.has(path) || path === 'cli')
}

describe('the Markdown of the repository', () => {
  it('has every relative link resolving to a file of the repository, and README links to a heading that exists', () => {
    const { files, exists } = repositoryMarkdown(ROOT)
    expect(files.has('README.md')).toBe(true)
    expect(checkMarkdown(files, exists)).toEqual([])
  })

  it('keeps the README a page a newcomer reads to the end: at most 12 KB', () => {
    expect(readFileSync(resolve(ROOT, 'README.md')).length).toBeLessThanOrEqual(12 * 1024)
  })

  it('names no file outside the repository and no template placeholder in the README or docs/', () => {
    const { files } = repositoryMarkdown(ROOT)
    for (const [path, text] of files) {
      if (path !== 'README.md' && !path.startsWith('docs/')) continue
      expect(text, path).not.toMatch(/\.\.\/shared\//)
      expect(text, path).not.toMatch(/\{[a-z_]+_url\}/)
    }
  })
})

describe('checkMarkdown', () => {
  it.each([
    ['a missing file', '[x](docs/nope.md)', 'no file docs/nope.md'],
    ['a heading that does not exist', '[x](docs/a.md#nowhere)', 'no heading whose anchor is "nowhere"'],
    ['a file outside the repository', '[design](../shared/DESIGN.md)', 'outside the repository'],
    ['an absolute path', '[x](/etc/passwd)', 'relative to this file'],
    ['a scheme other than http(s)', '[x](file:///etc/passwd)', 'public web address'],
  ])('refuses a link from the README to %s', (_name, link, reason) => {
    const problems = checkFiles({ 'README.md': `See ${link}.\n`, 'docs/a.md': '# A\n\n## Somewhere\n' })
    expect(problems).toHaveLength(1)
    expect(problems[0]?.reason).toContain(reason)
  })

  it('accepts a link to an existing heading, a web address, and links inside code', () => {
    const readme = '[a](docs/a.md#somewhere) [w](https://example.org/x) `[no](nowhere.md)`\n\n```md\n[no](gone.md)\n```\n'
    expect(checkFiles({ 'README.md': readme, 'docs/a.md': '# A\n\n## Somewhere\n' })).toEqual([])
  })

  it('refuses a link from a page of the site to a file the site does not serve', () => {
    const problems = checkFiles({ 'docs/a.md': '[cli](../cli/README.md)\n', 'cli/README.md': '# CLI\n' })
    expect(problems.map((p) => p.reason)).toEqual([expect.stringContaining('outside docs/')])
  })
})

describe('checkSite', () => {
  const page = (body: string) => `<html><body><h2 id="the-file-service-s-api">The file service's API</h2>${body}</body></html>`

  it('refuses a link to a heading the target page does not have, which VitePress builds without a word', () => {
    const files = new Map([
      ['files.html', page('')],
      ['index.html', page('<a href="./files.html#the-file-services-api">API</a>')],
    ])
    expect(checkSite(files)).toEqual([
      {
        file: 'index.html',
        link: './files.html#the-file-services-api',
        reason: 'files.html has no heading or element with the id "the-file-services-api"',
      },
    ])
  })

  it('accepts links to pages, headings and assets of the site, under its base path', () => {
    const files = new Map<string, string | undefined>([
      ['files.html', page('')],
      ['assets/app.js', undefined],
      [
        'api/index.html',
        page('<a href="/platform/files.html#the-file-service-s-api">x</a><a href="../">home</a><script src="/platform/assets/app.js"></script>'),
      ],
      ['index.html', page('<a href="https://cloud.google.com/batch">Batch</a>')],
    ])
    expect(checkSite(files, '/platform/')).toEqual([])
  })

  it('refuses a page or file missing from the site', () => {
    const files = new Map([['index.html', page('<a href="./gone.html">gone</a>')]])
    expect(checkSite(files).map((p) => p.reason)).toEqual(['no page or file gone.html in the site'])
  })
})

describe('slugs and links', () => {
  it('gives headings the anchors GitHub gives, repeated ones numbered', () => {
    expect([...githubAnchors("# A title\n## The file service's API\n## Limits & guards\n## Limits & guards\n")]).toEqual([
      'a-title',
      'the-file-services-api',
      'limits--guards',
      'limits--guards-1',
    ])
  })

  it('finds inline links, reference definitions and HTML attributes', () => {
    expect(markdownLinks('[a](a.md "t") ![i](<i m.png>)\n[r]: r.md\n<a href="h.md">h</a>\n')).toEqual(['a.md', 'i m.png', 'r.md', 'h.md'])
  })
})
