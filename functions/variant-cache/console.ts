import type { Context } from 'hono'
import { badge, consolePages, consoleProject, consoleUrl, errorView, field, html, pager, renderConsole, type Raw } from '../../lib/console/index.js'
import { ApiError } from '../../lib/errors.js'
import { FILTER_ROLES, type OrderVariant, type OrderVariantCall } from '../../domain/variants/cache.js'
import { ZYGOSITIES } from '../../domain/variants/records.js'
import type { OrderRecord } from '../../domain/clinical/model.js'
import type { VariantCacheDeps, VariantCacheEnv } from './deps.js'
import { VARIANT_ID_RE } from './schemas.js'
import { cacheFilters } from './views.js'

/**
 * An order's variants in the console, {variant_cache}/console/p/<project>/orders/<order>/variants:
 * the API's filters as a form (gene, region, consequence, QUAL, PASS, zygosity per role), pages in
 * genome order, each variant's calls per family member; one variant with every call and transcript
 * annotation; and the way to put a variant on a report (the report service's console). Read as
 * GET /orders/{id}/variants reads (clinical.read in the project), through the same store.
 */
export const variantConsole = consolePages<VariantCacheDeps>()

const PAGE_SIZE = 50
const FILTER_FIELDS = ['gene', 'region', 'consequence', 'min_qual', 'filter', 'zygosity'] as const
type FilterField = (typeof FILTER_FIELDS)[number]

/** What a zygosity select offers: any, a carrier (`alt`: het, hom_alt or hemi), or one zygosity. */
const ZYGOSITY_CHOICES = [
  { value: '', label: 'any' },
  { value: 'alt', label: 'carrier (het, hom alt or hemi)' },
  ...ZYGOSITIES.map((z) => ({ value: z, label: z.replace('_', ' ') })),
]

/** The form's per-role selects (`zyg_<role>`) as the API's zygosity parameter: `proband:alt,mother:hom_ref`. */
export function zygosityParam(query: Record<string, string | undefined>): string | undefined {
  const clauses = FILTER_ROLES.flatMap((role) => {
    const value = query[`zyg_${role}`]
    return value ? [`${role}:${value}`] : []
  })
  return clauses.length ? clauses.join(',') : undefined
}

/** The filters as the page's address carries them, and as the API's query takes them. */
function filtersOf(c: Context<VariantCacheEnv>) {
  const q = c.req.query()
  const text = (name: string) => (q[name]?.trim() ? q[name].trim() : undefined)
  return {
    gene: text('gene'),
    region: text('region'),
    consequence: text('consequence'),
    min_qual: text('min_qual'),
    filter: q.filter === 'PASS' ? ('PASS' as const) : undefined,
    zygosity: zygosityParam(q),
    roles: Object.fromEntries(FILTER_ROLES.map((r) => [r, q[`zyg_${r}`] ?? ''])) as Record<string, string>,
  }
}

/** The field a refusal of the filters is about: the API's details begin with the parameter's name. */
const fieldOf = (detail: string): FilterField | undefined => FILTER_FIELDS.find((f) => detail.startsWith(`${f}:`))

async function loadOrder(c: Context<VariantCacheEnv>, projectId: string): Promise<OrderRecord | undefined> {
  const ref = c.req.param('order') ?? ''
  return ref.length <= 100 ? c.get('deps').orders.resolve(projectId, ref) : undefined
}

const words = (v: string | null | undefined) => (v ? v.replaceAll('_', ' ') : '')
const position = (v: Pick<OrderVariant, 'chrom' | 'pos' | 'ref' | 'alt'>) =>
  `${v.chrom}:${v.pos} ${v.ref.length > 12 ? `${v.ref.slice(0, 10)}…` : v.ref}>${v.alt.length > 12 ? `${v.alt.slice(0, 10)}…` : v.alt}`

function callText(call: OrderVariantCall | undefined): Raw {
  if (!call) return html`<span class="muted">–</span>`
  if (!call.in_vcf) return html`<span class="muted">not in the VCF</span>`
  return html`${words(call.zygosity) || 'no call'}
    <span class="muted">(${call.genotype ?? './.'}${call.depth !== null ? `, DP ${call.depth}` : ''})</span>`
}

variantConsole.get('/p/:project/orders/:order/variants', async (c) => {
  const caller = await consoleProject(c, 'clinical.read')
  const deps = c.get('deps')
  const { project, org } = caller
  const view = { session: caller, project: { project, ...(org ? { org } : {}) }, section: 'orders' as const }
  const order = await loadOrder(c, project.id)
  if (!order) return renderConsole(c, { ...view, ...errorView(404, 'There is no such order in this project.') }, 404)
  const head = await deps.cache.head(project.id, order.id)
  const roles = [...new Set((head?.active?.samples ?? []).map((s) => s.role))].filter((r): r is (typeof FILTER_ROLES)[number] =>
    (FILTER_ROLES as readonly string[]).includes(r),
  )
  const f = filtersOf(c)
  const orderUrl = consoleUrl(deps.config, 'clinical', `/console/p/${project.id}/orders/${order.id}`)
  const reportsUrl = consoleUrl(deps.config, 'reports', `/console/p/${project.id}/orders/${order.id}/reports`)
  const crumbs = [
    ...(consoleUrl(deps.config, 'clinical', `/console/p/${project.id}/orders`)
      ? [{ href: consoleUrl(deps.config, 'clinical', `/console/p/${project.id}/orders`)!, text: 'Orders' }]
      : []),
    ...(orderUrl ? [{ href: orderUrl, text: order.accession }] : []),
  ]
  let errors: Partial<Record<FilterField, string>> = {}
  let listed: Awaited<ReturnType<typeof deps.cache.listVariants>>
  try {
    const filters = cacheFilters({
      gene: f.gene,
      region: f.region,
      consequence: f.consequence,
      min_qual: f.min_qual === undefined ? undefined : Number(f.min_qual),
      filter: f.filter,
      zygosity: f.zygosity,
    })
    if (f.min_qual !== undefined && !(Number(f.min_qual) >= 0)) throw new ApiError(400, `min_qual: '${f.min_qual}' is not a number of at least 0`)
    const pageToken = c.req.query('page_token')
    listed = await deps.cache.listVariants(project.id, order.id, filters, { page_size: PAGE_SIZE, ...(pageToken ? { page_token: pageToken } : {}) })
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 400) throw error
    const at = fieldOf(error.detail)
    errors = at ? { [at]: error.detail } : {}
    if (!at) return renderConsole(c, { ...view, crumbs, ...errorView(400, error.detail) }, 400)
    listed = undefined
  }
  const filterForm = html`<form method="get" action="" class="filters" id="filters" aria-label="Filter the variants">
    <div class="grid">
      ${field({ name: 'gene', label: 'Gene', value: f.gene, hint: 'A gene symbol, e.g. SCN2A', error: errors.gene })}
      ${field({ name: 'region', label: 'Region', value: f.region, hint: 'chr2:165000000-166000000, or a chromosome', error: errors.region })}
      ${field({
        name: 'consequence',
        label: 'Consequence',
        value: f.consequence,
        hint: 'Most severe consequence, comma-separated SO terms (missense_variant,stop_gained)',
        error: errors.consequence,
      })}
      ${field({ name: 'min_qual', label: 'QUAL at least', type: 'number', value: f.min_qual, error: errors.min_qual })}
      ${field({
        name: 'filter',
        label: 'FILTER',
        value: f.filter ?? '',
        options: [
          { value: '', label: 'any' },
          { value: 'PASS', label: 'PASS only' },
        ],
      })}
      ${roles.map((role) =>
        field({ name: `zyg_${role}`, label: `Zygosity of the ${role}`, value: f.roles[role], options: ZYGOSITY_CHOICES, error: errors.zygosity }),
      )}
    </div>
    <p class="actions">
      <button type="submit" id="apply-filters">Filter</button>
      <a href="?" class="button secondary">Clear</a>
      ${
        roles.includes('proband') && roles.includes('mother') && roles.includes('father')
          ? html`<a href="?zyg_proband=alt&amp;zyg_mother=hom_ref&amp;zyg_father=hom_ref" id="de-novo">De novo in the proband</a>`
          : ''
      }
    </p>
  </form>`
  const title = `Variants of order ${order.accession}`
  if (!listed) {
    const status = Object.keys(errors).length ? 400 : 404
    const detail = status === 400 ? '' : 'This order has no ready variant cache yet: its variants appear once an ingestion of its VCF is ready.'
    return renderConsole(
      c,
      {
        ...view,
        crumbs,
        title,
        body: html`<h1>${title}</h1>
          ${detail ? html`<p class="notice warn" role="alert" id="no-cache">${detail}</p>` : ''} ${status === 400 ? filterForm : ''}`,
      },
      status,
    )
  }
  const { items, nextPageToken } = listed.page
  const shownRoles = [...new Set(listed.active.samples.map((s) => s.role))]
  const detailUrl = (v: OrderVariant) => `variants/${encodeURIComponent(v.id)}`
  const addUrl = (v: OrderVariant) => (reportsUrl ? `${reportsUrl}?variant=${encodeURIComponent(v.id)}` : undefined)
  const body = html`<h1>${title}</h1>
    <p>
      ${listed.active.variant_count} variants in the cache (${listed.active.assembly ?? 'assembly unknown'}), in genome order.
      ${reportsUrl ? html`<a href="${reportsUrl}">The order's reports</a>` : ''}
    </p>
    ${filterForm}
    ${
      items.length
        ? html`<div class="table-wrap" role="region" aria-labelledby="variants-caption" tabindex="0">
            <table id="variants">
              <caption id="variants-caption">
                Variants${f.zygosity || f.gene || f.region || f.consequence || f.min_qual || f.filter ? ' matching the filters' : ''}, in genome order
              </caption>
              <thead>
                <tr>
                  <th scope="col">Variant</th>
                  <th scope="col">Gene</th>
                  <th scope="col">Consequence</th>
                  <th scope="col">HGVS</th>
                  <th scope="col">QUAL, FILTER</th>
                  ${shownRoles.map((r) => html`<th scope="col">${r}</th>`)}
                  <th scope="col">Report</th>
                </tr>
              </thead>
              <tbody>
                ${items.map(
                  (v) =>
                    html`<tr data-variant="${v.id}">
                      <td>
                        <a href="${detailUrl(v)}"><code>${position(v)}</code></a>
                      </td>
                      <td>${v.genes.join(', ') || html`<span class="muted">–</span>`}</td>
                      <td>${words(v.consequence) || html`<span class="muted">–</span>`}</td>
                      <td>${v.hgvs_c ? html`<code>${v.hgvs_c}</code>` : ''} ${v.hgvs_p ? html`<code>${v.hgvs_p}</code>` : ''}</td>
                      <td>${v.qual ?? '–'}, ${v.filter.join(';') || '–'}</td>
                      ${shownRoles.map((r) => html`<td>${callText(v.calls.find((x) => x.role === r))}</td>`)}
                      <td>${addUrl(v) ? html`<a href="${addUrl(v)}" class="add-to-report">Add to report</a>` : ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p id="empty">
            No variant on this page matches${nextPageToken ? ': the filters skipped the variants read, follow Next page for more' : ''}.
          </p>`
    }
    ${pager(c, nextPageToken)}`
  return renderConsole(c, { ...view, crumbs, title, body })
})

variantConsole.get('/p/:project/orders/:order/variants/:variant', async (c) => {
  const caller = await consoleProject(c, 'clinical.read')
  const deps = c.get('deps')
  const { project, org } = caller
  const view = { session: caller, project: { project, ...(org ? { org } : {}) }, section: 'orders' as const }
  const order = await loadOrder(c, project.id)
  const variantId = c.req.param('variant')
  const v = order && VARIANT_ID_RE.test(variantId) ? await deps.cache.getVariant(project.id, order.id, variantId) : undefined
  if (!order || !v) return renderConsole(c, { ...view, ...errorView(404, "There is no such variant in this order's variant cache.") }, 404)
  const reportsUrl = consoleUrl(deps.config, 'reports', `/console/p/${project.id}/orders/${order.id}/reports?variant=${encodeURIComponent(v.id)}`)
  const title = `${v.genes.join(', ') || 'Variant'} ${v.hgvs_c ?? position(v)}`
  const body = html`<h1>${title}</h1>
    <p>${reportsUrl ? html`<a href="${reportsUrl}" class="button" id="add-to-report">Add to a report</a>` : ''}</p>
    <dl class="facts">
      <dt>Position</dt>
      <dd><code>${v.assembly ?? 'assembly unknown'} ${v.chrom}:${v.pos}-${v.end} ${v.ref}&gt;${v.alt}</code> (${words(v.variant_type)})</dd>
      <dt>Id</dt>
      <dd><code>${v.id}</code></dd>
      <dt>Consequence</dt>
      <dd>${words(v.consequence) || '–'}${v.impact ? ` (${v.impact})` : ''}</dd>
      <dt>Transcript, HGVS</dt>
      <dd>
        ${v.transcript ? html`<code>${v.transcript}</code>` : '–'} ${v.hgvs_c ? html`<code>${v.hgvs_c}</code>` : ''}
        ${v.hgvs_p ? html`<code>${v.hgvs_p}</code>` : ''}
      </dd>
      <dt>QUAL, FILTER</dt>
      <dd>${v.qual ?? '–'}, ${v.filter.join(';') || '–'}</dd>
    </dl>
    <div class="table-wrap" role="region" aria-labelledby="calls-caption" tabindex="0">
      <table id="calls">
        <caption id="calls-caption">
          Calls per family member
        </caption>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Sample</th>
            <th scope="col">Zygosity</th>
            <th scope="col">Genotype</th>
            <th scope="col">Depth</th>
            <th scope="col">GQ</th>
            <th scope="col">Allele fraction</th>
            <th scope="col">Allele depths</th>
          </tr>
        </thead>
        <tbody>
          ${v.calls.map(
            (call) =>
              html`<tr>
                <th scope="row">${call.role}</th>
                <td>${call.sample}</td>
                <td>${call.in_vcf ? words(call.zygosity) || 'no call' : html`<span class="muted">not in the VCF</span>`}</td>
                <td>${call.genotype ?? '–'}</td>
                <td>${call.depth ?? '–'}</td>
                <td>${call.genotype_quality ?? '–'}</td>
                <td>${call.allele_fraction ?? '–'}</td>
                <td>${call.allele_depths?.join(', ') ?? '–'}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <div class="table-wrap" role="region" aria-labelledby="annotations-caption" tabindex="0">
      <table id="annotations">
        <caption id="annotations-caption">
          Transcript annotations (${v.annotations.length})
        </caption>
        <thead>
          <tr>
            <th scope="col">Gene</th>
            <th scope="col">Transcript</th>
            <th scope="col">Consequences</th>
            <th scope="col">Impact</th>
            <th scope="col">HGVS</th>
            <th scope="col">Canonical</th>
          </tr>
        </thead>
        <tbody>
          ${v.annotations.map(
            (a) =>
              html`<tr>
                <td>${a.gene ?? '–'}</td>
                <td>
                  ${a.transcript ? html`<code>${a.transcript}</code>` : '–'}${a.biotype ? html` <span class="muted">${words(a.biotype)}</span>` : ''}
                </td>
                <td>${a.consequences.map(words).join(', ')}</td>
                <td>${a.impact ?? '–'}</td>
                <td>${a.hgvs_c ? html`<code>${a.hgvs_c}</code>` : ''} ${a.hgvs_p ? html`<code>${a.hgvs_p}</code>` : ''}</td>
                <td>${a.canonical ? badge('canonical', 'info') : ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`
  return renderConsole(c, {
    ...view,
    crumbs: [{ href: '../variants', text: `Variants of ${order.accession}` }],
    title,
    body,
  })
})
