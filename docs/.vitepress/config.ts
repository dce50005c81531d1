// The documentation site: `npm run docs:dev` while writing, `npm run docs:build` for the static site
// (docs/.vitepress/dist), `npm run docs:check` for the build and its link check (part of `npm test`).
import { defineConfig } from 'vitepress'
import { PENDING_PAGES } from '../../scripts/check-docs.js'

/** A page of docs/ by its path without `.md`, as VitePress names it in its dead-link check. */
const pendingPages = new Set(PENDING_PAGES.map((path) => path.replace(/^docs\//, '').replace(/\.md$/, '')))

export default defineConfig({
  title: 'Pipeline platform',
  description: 'Run bioinformatics pipelines on Google Cloud Batch and manage the clinical data around them',
  // A static host serves the site at its root by default; one that serves it under a folder (a
  // GitHub Pages project site, say) builds it with DOCS_BASE=/<folder>/.
  base: process.env.DOCS_BASE ?? '/',
  // Pages as `page.html`: any static host serves them without rewrite rules.
  cleanUrls: false,
  // A link to a page that does not exist fails the build, but for the pages of PENDING_PAGES
  // (scripts/check-docs.ts): they are added by another change and linked already.
  ignoreDeadLinks: [(url: string) => pendingPages.has(url.replace(/^(\.\/|\/)/, ''))],
  lastUpdated: false,
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3], label: 'On this page' },
    nav: [
      { text: 'Get started', link: '/getting-started' },
      { text: 'CLI', link: '/cli/' },
      { text: 'API', link: '/api/' },
      { text: 'Operate', link: '/deploying' },
      { text: 'Develop', link: '/architecture' },
    ],
    sidebar: [
      {
        text: 'Start here',
        items: [
          { text: 'Overview', link: '/' },
          { text: 'Getting started', link: '/getting-started' },
          { text: 'The local suite', link: '/local-suite' },
          { text: 'Walkthrough: from an order to a signed report', link: '/walkthrough' },
        ],
      },
      {
        text: 'Command-line client',
        items: [
          { text: 'Guide', link: '/cli/' },
          { text: 'Logging in', link: '/cli-login' },
          { text: 'Command reference', link: '/cli/reference/' },
        ],
      },
      {
        text: 'API',
        items: [
          { text: 'Overview: errors, authentication, pages, limits', link: '/api/' },
          { text: 'Admin service', link: '/api/admin' },
          { text: 'Compute service', link: '/api/compute' },
          { text: 'Clinical-data service', link: '/api/clinical-data' },
          { text: 'File service', link: '/api/files' },
          { text: 'Variant-cache service', link: '/api/variant-cache' },
          { text: 'Report service', link: '/api/reports' },
          { text: 'Audit service', link: '/api/audit' },
        ],
      },
      {
        text: 'What the platform guarantees',
        items: [
          { text: 'Roles and tenancy', link: '/roles' },
          { text: 'Tenancy of cloud resources', link: '/tenancy' },
          { text: 'What a signed order freezes', link: '/clinical' },
          { text: 'Files: who may change them', link: '/files' },
          { text: 'Reports and sign-off', link: '/reports' },
          { text: 'Variant ingestion', link: '/variants' },
          { text: 'The audit log', link: '/audit' },
          { text: 'Security: the attacker’s checklist', link: '/security' },
        ],
      },
      {
        text: 'Deploying and operating',
        items: [
          { text: 'Deploying', link: '/deploying' },
          { text: 'Configuration', link: '/configuration' },
          { text: 'Logs and health', link: '/logs' },
          { text: 'Capacity and overload', link: '/operating' },
          { text: 'The orchestrator and Batch', link: '/orchestrator' },
        ],
      },
      {
        text: 'Developing',
        items: [
          { text: 'Architecture', link: '/architecture' },
          { text: 'Tests', link: '/tests' },
          { text: 'Benchmarks', link: '/benchmarks' },
        ],
      },
    ],
  },
})
