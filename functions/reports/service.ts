import { defineService, serviceApp } from '../../lib/service.js'
import { REPORT_COLLECTIONS } from '../../domain/reports/model.js'
import { seedDemoLetterhead } from '../../domain/reports/seed.js'
import { reportsDeps, type ReportsDeps } from './deps.js'
import { reportsConsole } from './console/index.js'
import { printPages } from './pages/print.js'
import { signoffPages } from './pages/signoff.js'
import { reports } from './routes/reports.js'
import { reportPrefetch } from './views.js'

/** The report service: reports of orders, their variants, comments, snapshots and status moves; the browser sign-off and the printable report. */
export const reportsService = defineService<ReportsDeps>({
  name: 'reports',
  title: 'Report service',
  description:
    "Clinical reports of orders: drafts with the variants of the order's variant cache and their ACMG/AMP classification, review comments, immutable snapshots (canonical JSON and SHA-256), " +
    'status moves and amendments. Signing happens in a browser, at {report_url}/{report_id}/signoff/, with a fresh authentication at the identity provider; ' +
    'a signed report prints at {report_url}/{report_id}/print. Every request needs X-Project-ID.',
  port: 8105,
  projectScoped: true,
  collections: REPORT_COLLECTIONS,
  tags: [
    {
      name: 'reports',
      description: 'Reports of an order (FHIR DiagnosticReport): drafts, review, status moves and amendments; signed in the browser',
    },
    {
      name: 'report variants',
      description:
        "Variants of the order's variant cache on a report, with per-report overrides: ACMG classification and criteria, HGVS, inheritance, interpretation",
    },
    { name: 'comments', description: 'Review, internal and general comments; an open review comment blocks signing' },
    { name: 'snapshots', description: 'Immutable snapshots of a report: canonical JSON (RFC 8785) and its SHA-256' },
  ],
  deps: (kernel) => reportsDeps(kernel),
  routes: [reports],
  prefetch: reportPrefetch,
  pages: [printPages, signoffPages, reportsConsole],
  seed: ({ kernel, project }) => seedDemoLetterhead(kernel, project),
})

export const createReportsApp = (deps: ReportsDeps) => serviceApp(reportsService.definition, deps)
