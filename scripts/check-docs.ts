// `npm run docs:check` (the site's build, then this; a step of `npm test`): every link of the documentation resolves.
//
// VitePress fails its build on a link to a page that does not exist, but not on a link to a heading
// that does not exist (`operating.md#capacity` after the heading was renamed), and it never sees the
// Markdown outside docs/ (README.md, cli/, infra/). So this reads two things:
//
// - the built site (docs/.vitepress/dist): every href and src of every page must be a page or file
//   of the site, with the id its `#fragment` names, or a public web address (http or https);
// - every Markdown file of the repository: a link is relative and stays inside the repository, to a
//   file that exists (a page of docs/ links only into docs/, since the site serves nothing else), or
//   it is a public web address. A link from a file outside docs/ to a heading is checked against the
//   heading ids GitHub gives, since that is where those files are read.
//
// Our own ~200 lines rather than a link checker such as linkinator: those crawl the site through a
// web server of their own and know nothing of the rule "nothing links outside the repository", which
// is about the Markdown sources; VitePress writes plain HTML with double-quoted attributes, so the
// links and ids of a page are found by two regular expressions.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { posix, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Pages another change of issue 19 adds (the generated CLI reference), linked already: a link to one
 * of them counts as resolved until the page exists. TEMPORARY: remove the entry once the page is
 * committed; docs/.vitepress/config.ts reads the same list for VitePress's own check.
 */
export const PENDING_PAGES: readonly string[] = []

/** Where the site's pages come from, and where VitePress writes it. */
export const DOCS_DIR = 'docs'
export const SITE_DIR = 'docs/.vitepress/dist'

export interface Problem {
  /** The page or file that holds the link (repository path, or a path in the built site). */
  file: string
  link: string
  reason: string
}

const WEB = /^https?:\/\//i
const SCHEME = /^[a-z][a-z0-9+.-]*:/i

/** `&amp;` and the like back to characters, as a browser reads an attribute. */
function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|#39);/gi, (whole, name: string) => {
    const lower = name.toLowerCase()
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16))
    if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10))
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[lower] ?? whole
  })
}

function decodePercent(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** The path in the built site that a pending Markdown page will be built to (`cli/reference/index.html`). */
const builtPath = (markdownPath: string) => posix.relative(DOCS_DIR, markdownPath).replace(/\.md$/, '.html')

/**
 * The built site's problems. `files` holds every file of the site by its path under the output
 * folder (`api/index.html`, `assets/app.js`), with the HTML of each page; `base` is the site's base
 * path (`/`, or `/platform/` on a host that serves it under a folder).
 */
export function checkSite(files: ReadonlyMap<string, string | undefined>, base = '/'): Problem[] {
  const problems: Problem[] = []
  const ids = new Map<string, Set<string>>()
  const idsOf = (page: string) => {
    let found = ids.get(page)
    if (!found) {
      const html = files.get(page) ?? ''
      found = new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => decodeEntities(m[1] ?? '')))
      ids.set(page, found)
    }
    return found
  }
  const pending = new Set(PENDING_PAGES.map(builtPath))

  for (const [page, html] of files) {
    if (html === undefined) continue
    for (const match of html.matchAll(/\s(href|src)="([^"]*)"/g)) {
      const attribute = match[1]
      const link = decodeEntities(match[2] ?? '')
      const problem = (reason: string) => problems.push({ file: page, link, reason })
      if (WEB.test(link)) continue
      // Small images VitePress inlines into the page; nothing a reader follows.
      if (attribute === 'src' && link.startsWith('data:')) continue
      if (SCHEME.test(link)) {
        problem('a link out of the site must be a public web address (http or https)')
        continue
      }
      const url = new URL(link, `http://site${base}${page}`)
      if (!url.pathname.startsWith(base)) {
        problem(`outside the site's base path ${base}`)
        continue
      }
      let target = decodePercent(url.pathname.slice(base.length))
      if (target === '' || target.endsWith('/')) target += 'index.html'
      if (!files.has(target)) {
        if (!pending.has(target)) problem(`no page or file ${target} in the site`)
        continue
      }
      const fragment = decodePercent(url.hash.slice(1))
      if (fragment && target.endsWith('.html') && !idsOf(target).has(fragment))
        problem(`${target} has no heading or element with the id "${fragment}"`)
    }
  }
  return problems
}

/** The text of a Markdown file without what is not Markdown to link from: code blocks, inline code and comments. */
function proseOf(markdown: string): string {
  let fence: string | undefined
  const lines = markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined) {
      if (!marker) return line
      fence = marker
      return ''
    }
    // A fence closes with at least as many of the same character, and nothing after them.
    if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
    return ''
  })
  return lines
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/(`+)[\s\S]*?\1/g, '')
}

/** Every link target of a Markdown text: inline links and images, reference definitions, and HTML attributes. */
export function markdownLinks(markdown: string): string[] {
  const prose = proseOf(markdown)
  const targets: string[] = []
  // [text](target "title") and ![alt](target): the target up to whitespace or the closing parenthesis
  // (a target with parentheses of its own is written <…>).
  for (const m of prose.matchAll(/\]\(\s*(<[^>]*>|[^)\s]*)/g)) targets.push((m[1] ?? '').replace(/^<|>$/g, ''))
  for (const m of prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/gm)) targets.push((m[1] ?? '').replace(/^<|>$/g, ''))
  for (const m of prose.matchAll(/\s(?:href|src)="([^"]*)"/g)) targets.push(decodeEntities(m[1] ?? ''))
  return targets.filter((t) => t !== '')
}

/**
 * The anchor GitHub gives a heading (as its github-slugger does): lower case, everything but letters,
 * digits, marks, spaces, `-` and `_` removed, spaces as `-`. The heading's Markdown is read as text.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors GitHub makes for the headings of a Markdown text (a repeated heading gets `-1`, `-2`, …). */
export function githubAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const m of proseOf(markdown).matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const slug = githubSlug(m[1] ?? '')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/**
 * The Markdown files' problems. `files` holds each Markdown file by its repository path
 * (`README.md`, `docs/api/index.md`); `exists` says whether a repository path is a file or folder.
 */
export function checkMarkdown(files: ReadonlyMap<string, string>, exists: (path: string) => boolean): Problem[] {
  const problems: Problem[] = []
  const pending = new Set(PENDING_PAGES)
  for (const [file, text] of files) {
    const inSite = file.startsWith(`${DOCS_DIR}/`)
    for (const link of markdownLinks(text)) {
      const problem = (reason: string) => problems.push({ file, link, reason })
      if (WEB.test(link)) continue
      if (SCHEME.test(link)) {
        problem('a link out of the repository must be a public web address (http or https)')
        continue
      }
      if (link.startsWith('/')) {
        problem('write a path relative to this file')
        continue
      }
      const [pathPart = '', fragment = ''] = link.split('#', 2)
      const path = decodePercent(pathPart.split('?')[0] ?? '')
      const target = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path))
      if (target === '..' || target.startsWith('../')) {
        problem('outside the repository: a clone has nothing there')
        continue
      }
      if (inSite && !(target === DOCS_DIR || target.startsWith(`${DOCS_DIR}/`))) {
        problem(`outside ${DOCS_DIR}/, which is all the site serves: name the file as code, or link a page about it`)
        continue
      }
      if (pending.has(target)) continue
      if (!exists(target)) {
        problem(`no file ${target} in the repository`)
        continue
      }
      // Anchors of the site's pages are checked on the built site, with VitePress's ids.
      if (!inSite && fragment && target.endsWith('.md')) {
        const anchors = githubAnchors(files.get(target) ?? '')
        if (!anchors.has(decodePercent(fragment))) problem(`${target} has no heading whose anchor is "${fragment}"`)
      }
    }
  }
  return problems
}

/** Folders that hold no Markdown of ours: installed packages, builds, local data. */
const SKIPPED = new Set(['node_modules', '.git', '.local', 'dist', 'coverage', 'cache'])

function walk(root: string, dir: string, keep: (path: string) => boolean, found: string[] = []): string[] {
  for (const entry of readdirSync(resolve(root, dir), { withFileTypes: true })) {
    if (entry.isDirectory() && SKIPPED.has(entry.name)) continue
    const path = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) walk(root, path, keep, found)
    else if (keep(path)) found.push(path)
  }
  return found
}

/** The repository's Markdown files by path, and whether a repository path exists: what `checkMarkdown` reads. */
export function repositoryMarkdown(root: string): { files: Map<string, string>; exists: (path: string) => boolean } {
  const files = new Map(walk(root, '', (path) => path.endsWith('.md')).map((path) => [path, readFileSync(resolve(root, path), 'utf8')] as const))
  const exists = (path: string) => {
    try {
      statSync(resolve(root, path))
      return true
    } catch {
      return false
    }
  }
  return { files, exists }
}

function main() {
  const root = resolve(import.meta.dirname, '..')
  const site = resolve(root, SITE_DIR)
  if (!existsSync(site)) {
    process.stderr.write(`docs:check: no built site at ${SITE_DIR}: run npm run docs:build first\n`)
    process.exit(1)
  }
  const siteFiles = new Map(
    walk(site, '', () => true).map((path) => [path, path.endsWith('.html') ? readFileSync(resolve(site, path), 'utf8') : undefined] as const),
  )
  const { files: markdown, exists } = repositoryMarkdown(root)
  const problems = [...checkMarkdown(markdown, exists), ...checkSite(siteFiles, process.env.DOCS_BASE ?? '/')]
  for (const p of problems) process.stderr.write(`${p.file}: ${p.link}: ${p.reason}\n`)
  const pages = [...siteFiles.keys()].filter((p) => p.endsWith('.html')).length
  if (problems.length) {
    process.stderr.write(`docs:check: ${problems.length} broken link(s)\n`)
    process.exit(1)
  }
  process.stdout.write(`docs:check: ${markdown.size} Markdown files and ${pages} built pages, every link resolves\n`)
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) main()
