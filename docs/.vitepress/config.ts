// The documentation site: `npm run docs:dev` while writing, `npm run docs:build` for the static site
// (docs/.vitepress/dist); `npm test` builds it and checks its links (test/unit/docs/links.test.ts).
import { readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { defineConfig, type DefaultTheme } from 'vitepress'
import { PENDING_PAGES } from '../../scripts/check-docs.js'

const DOCS = resolve(import.meta.dirname, '..')

/** A page of docs/ by its path without `.md`, as VitePress names it in its dead-link check. */
const pendingPages = new Set(PENDING_PAGES.map((path) => path.replace(/^docs\//, '').replace(/\.md$/, '')))

/**
 * The sidebar's groups, in reading order, by page path under docs/. It is built from the files
 * present: a page named here but not (yet) written is left out, and a page written but not named
 * here still appears, in "More" (or in the group of its folder, as the generated CLI reference
 * does), so a page added by another change is on the site without an edit here.
 */
const GROUPS: readonly { text: string; pages: readonly string[]; folder?: string }[] = [
  { text: 'Start here', pages: ['index.md', 'getting-started.md', 'local-suite.md', 'walkthrough.md', 'second-terminal.md', 'discovery.md'] },
  { text: 'Console', pages: ['console.md', 'console-runs.md', 'console-clinical.md', 'console-reports.md'] },
  { text: 'Command-line client', pages: ['cli.md', 'cli-login.md', 'cli-clinical.md', 'cli-results.md'] },
  { text: 'Command reference', pages: ['cli/reference/index.md'], folder: 'cli/reference/' },
  {
    text: 'API',
    pages: [
      'api/index.md',
      'authentication.md',
      'roles.md',
      'tenancy.md',
      'pipelines-and-runs.md',
      'webhooks.md',
      'wes.md',
      'clinical.md',
      'files.md',
      'variants.md',
      'reports.md',
      'audit.md',
      'security.md',
    ],
    folder: 'api/',
  },
  { text: 'Deploying and operating', pages: ['deploying.md', 'configuration.md', 'logs.md', 'operating.md', 'orchestrator.md'] },
  { text: 'Developing', pages: ['architecture.md', 'tests.md', 'benchmarks.md'] },
]

/** Every Markdown page of docs/, by its path under docs/ (`api/index.md`), in name order. */
function pagesOf(dir = ''): string[] {
  return readdirSync(resolve(DOCS, dir), { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.') && entry.name !== 'node_modules')
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? pagesOf(`${dir}${entry.name}/`) : entry.name.endsWith('.md') ? [`${dir}${entry.name}`] : []))
}

/** A page's title: its first `# ` heading, else its path. */
function titleOf(page: string): string {
  const heading = /^# +(.+?)\s*#*\s*$/m.exec(readFileSync(resolve(DOCS, page), 'utf8'))?.[1]
  return heading?.replace(/`/g, '') ?? page
}

/** The site's address of a page: `cli/reference/index.md` is `/cli/reference/`. */
const linkOf = (page: string) => `/${page.replace(/(^|\/)index\.md$/, '$1').replace(/\.md$/, '')}`

export function sidebar(pages: readonly string[] = pagesOf()): DefaultTheme.SidebarItem[] {
  const present = new Set(pages)
  const placed = new Set<string>()
  const item = (page: string) => {
    placed.add(page)
    return { text: titleOf(page), link: linkOf(page) }
  }
  const groups = GROUPS.map((group) => {
    const named = group.pages.filter((page) => present.has(page))
    const inFolder = group.folder ? pages.filter((page) => page.startsWith(group.folder ?? '') && !group.pages.includes(page)) : []
    return { text: group.text, items: [...named, ...inFolder].map(item) }
  })
  const more = pages.filter((page) => !placed.has(page)).map(item)
  return [...groups, { text: 'More', items: more }].filter((group) => group.items.length > 0)
}

export default defineConfig({
  title: 'Pipeline platform',
  description: 'Run bioinformatics pipelines on Google Cloud Batch and manage the clinical data around them',
  // A static host serves the site at its root by default; one that serves it under a folder (a
  // GitHub Pages project site, say) builds it with DOCS_BASE=/<folder>/.
  base: process.env.DOCS_BASE ?? '/',
  // Pages as `page.html`: any static host serves them without rewrite rules.
  cleanUrls: false,
  // A link to a page that does not exist fails the build, but for the pages of PENDING_PAGES
  // (scripts/check-docs.ts): another change adds them, and they are linked already.
  // VitePress hands over the link as written, relative to its page and without `.md`.
  ignoreDeadLinks: [(url: string) => [...pendingPages].some((page) => url.replace(/^(\.{0,2}\/)+/, '') === page || url.endsWith(`/${page}`))],
  lastUpdated: false,
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3], label: 'On this page' },
    nav: [
      { text: 'Get started', link: '/getting-started' },
      { text: 'CLI', link: '/cli' },
      { text: 'API', link: '/api/' },
      { text: 'Operate', link: '/deploying' },
      { text: 'Develop', link: '/architecture' },
    ],
    sidebar: sidebar(),
  },
})
