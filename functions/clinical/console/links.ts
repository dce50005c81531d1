import type { Context } from 'hono'
import { consoleUrl, historyUrl, html, type ConsoleProject, type Raw } from '../../../lib/console/index.js'
import type { ClinicalEnv } from '../deps.js'

/**
 * Links from the clinical pages to the other services' console pages, at the paths their helpers
 * serve (helper note console-paths.md); a link to a service whose address is not configured is left out.
 */
function linkTo(c: Context<ClinicalEnv>, service: string, path: string, text: string, id: string): Raw | '' {
  const href = consoleUrl(c.get('deps').config, service, path)
  return href ? html`<a href="${href}" id="${id}">${text}</a>` : ''
}

/** The audit history of a record (audit service), for those who may read it (lib/console historyUrl). */
export function historyLink(c: Context<ClinicalEnv>, page: ConsoleProject, type: 'subject' | 'sample' | 'order', id: string): Raw | '' {
  const href = historyUrl(c.get('deps').config, page, type, id)
  return href ? html`<a href="${href}" id="history-${type}">History</a>` : ''
}

/** An order's runs (compute), variants (variant cache) and reports (reports). */
export function orderLinks(c: Context<ClinicalEnv>, page: ConsoleProject, orderId: string): Raw[] {
  const p = page.project.id
  const id = encodeURIComponent(orderId)
  return [
    linkTo(c, 'compute', `/console/p/${p}/runs?order=${id}`, 'Runs', 'order-runs'),
    linkTo(c, 'variant_cache', `/console/p/${p}/orders/${id}/variants`, 'Variants', 'order-variants'),
    linkTo(c, 'reports', `/console/p/${p}/orders/${id}/reports`, 'Reports', 'order-reports'),
    historyLink(c, page, 'order', orderId),
  ].filter((l): l is Raw => l !== '')
}
