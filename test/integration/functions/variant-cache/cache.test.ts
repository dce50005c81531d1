import { afterAll, describe, expect, it } from 'vitest'
import { deNovoSite } from '../../../../domain/variants/synthetic.js'
import { makeVariantWorld } from '../../../support/variants.js'

/**
 * The variant-cache service over a real ingestion: a signed trio order, a synthetic annotated trio
 * VCF in the project bucket, POST /orders/{id}/ingestions, the steps run in process, then the
 * order's variants, one variant, the status, and the clinical-data catalogue.
 */
describe('variant cache: an order ingested and read', async () => {
  const w = await makeVariantWorld()
  afterAll(() => w.close())
  const t = await w.signedTrio()
  const uri = await w.putTrio(t.names, { records: 300, seed: 7 })
  const queued = await w.request(t.order.id, uri)
  const final = await w.run(queued.id)

  it('builds the cache: queued, then ready with counts, source, times and every sample matched', async () => {
    expect(queued.status).toBe('queued')
    expect(final).toBe('ready')
    const status = await w.vc('GET', `/orders/${t.order.id}/status`)
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ status: 'ready', order_accession: t.order.accession })
    expect(status.body.ingestion).toMatchObject({ status: 'ready', source_uri: uri, trigger: 'request', sample_mismatch: null })
    expect(status.body.ingestion.record_count).toBe(300)
    expect(status.body.ingestion.variant_count).toBeGreaterThan(300)
    expect(status.body.ingestion.started).toBeTruthy()
    expect(status.body.ingestion.finished).toBeTruthy()
    expect(status.body.active.variant_count).toBe(status.body.ingestion.variant_count)
    expect(status.body.active.samples.map((s: { role: string }) => s.role).sort()).toEqual(['father', 'mother', 'proband'])
  })

  it('pages the variants in genome order with each sample under its role, and a total', async () => {
    const first = await w.vc('GET', `/orders/${t.order.id}/variants?page_size=50`)
    expect(first.status).toBe(200)
    expect(first.body).toHaveLength(50)
    expect(Number(first.headers.get('x-total-count'))).toBeGreaterThan(300)
    expect(first.body[0].chrom).toBe('1')
    expect(first.body[0].calls.map((c: { role: string }) => c.role)).toEqual(['proband', 'mother', 'father'])
    const all = [...first.body]
    let token = first.headers.get('x-next-page-token')
    while (token) {
      const next = await w.vc('GET', `/orders/${t.order.id}/variants?page_size=200&page_token=${encodeURIComponent(token)}`)
      expect(next.status, JSON.stringify(next.body)).toBe(200)
      all.push(...next.body)
      token = next.headers.get('x-next-page-token')
    }
    expect(all.length).toBe(Number(first.headers.get('x-total-count')))
    expect(new Set(all.map((v) => v.id)).size).toBe(all.length)
    const chroms = [...new Set(all.map((v) => v.chrom))]
    expect(chroms.slice(0, 3)).toEqual(['1', '2', '3'])
    expect(chroms.indexOf('X')).toBeGreaterThan(chroms.indexOf('22'))
    expect(all.some((v) => v.alt_count > 1)).toBe(true)
  })

  it('finds the de novo candidate by gene and zygosity per role, and serves it alone with its transcripts', async () => {
    const site = deNovoSite()
    const res = await w.vc('GET', `/orders/${t.order.id}/variants?gene=${site.gene}&zygosity=proband:het,mother:hom_ref,father:hom_ref`)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    const hit = res.body.find((v: { pos: number }) => v.pos === site.pos)
    expect(hit).toMatchObject({ chrom: site.chrom.replace(/^chr/, ''), ref: site.ref, alt: site.alt, genes: [site.gene] })
    expect(hit.id).toMatch(/^ga4gh:VA\./)
    expect(hit.calls.map((c: { zygosity: string }) => c.zygosity)).toEqual(['het', 'hom_ref', 'hom_ref'])
    const one = await w.vc('GET', `/orders/${t.order.id}/variants/${encodeURIComponent(hit.id)}`)
    expect(one.status).toBe(200)
    expect(one.body.annotations.length).toBeGreaterThan(0)
    expect(one.body.consequence).toBeTruthy()
    const byStore = await w.deps.cache.getVariant(w.project.id, t.order.id, hit.id)
    expect(byStore?.calls[0]).toMatchObject({ role: 'proband', zygosity: 'het', in_vcf: true })
  })

  it('filters by region, consequence, PASS and quality, each result inside its filter', async () => {
    const region = await w.vc('GET', `/orders/${t.order.id}/variants?region=chr2:1-200000000`)
    expect(region.status).toBe(200)
    expect(region.body.length).toBeGreaterThan(0)
    expect(region.body.every((v: { chrom: string; pos: number }) => v.chrom === '2' && v.pos <= 200_000_000)).toBe(true)
    const pass = await w.vc('GET', `/orders/${t.order.id}/variants?filter=PASS&min_qual=50&consequence=missense_variant&page_size=1000`)
    expect(pass.status, JSON.stringify(pass.body)).toBe(200)
    expect(pass.body.length).toBeGreaterThan(0)
    for (const v of pass.body) {
      expect(v.filter).toEqual(['PASS'])
      expect(v.qual).toBeGreaterThanOrEqual(50)
      expect(v.consequence).toBe('missense_variant')
    }
  })

  it('answers bad filters and tokens with a 400 naming them', async () => {
    for (const q of ['region=chr2:x-y', 'zygosity=uncle:het', 'zygosity=proband:weird', 'page_token=nonsense']) {
      const res = await w.vc('GET', `/orders/${t.order.id}/variants?${q}`)
      expect(res.status, q).toBe(400)
      expect(typeof res.body.detail).toBe('string')
    }
    const first = await w.vc('GET', `/orders/${t.order.id}/variants?page_size=5`)
    const reused = await w.vc('GET', `/orders/${t.order.id}/variants?gene=SCN2A&page_token=${first.headers.get('x-next-page-token')}`)
    expect(reused.status).toBe(400)
  })

  it("fills the project catalogue with observation counts, and each sample's calls", async () => {
    const site = deNovoSite()
    const cat = await w.api('GET', `/variants?gene=${site.gene}`)
    expect(cat.status, JSON.stringify(cat.body)).toBe(200)
    const hit = cat.body.find((v: { pos: number }) => v.pos === site.pos)
    expect(hit, JSON.stringify(cat.body).slice(0, 500)).toBeDefined()
    expect(hit.observations).toEqual({ orders: 1, samples: 1, homozygous: 0 })
    const one = await w.api('GET', `/variants/${encodeURIComponent(hit.id)}`)
    expect(one.status).toBe(200)
    expect(one.body.observed_in).toEqual([expect.objectContaining({ order_id: t.order.id, samples: [t.samples.proband.id] })])
    const region = await w.api('GET', '/variants?region=chr2:165000000-166000000')
    expect(region.body.length).toBeGreaterThan(0)
    expect(region.body.every((v: { chrom: string }) => v.chrom === '2')).toBe(true)
    const mine = await w.api('GET', `/samples/${t.samples.proband.id}/variants?page_size=1000`)
    expect(mine.status).toBe(200)
    expect(mine.body.some((v: { pos: number }) => v.pos === site.pos)).toBe(true)
    const mothers = await w.api('GET', `/samples/${t.samples.mother.id}/variants?page_size=1000`)
    expect(mothers.body.some((v: { pos: number }) => v.pos === site.pos)).toBe(false)
    expect(mothers.body.every((v: { call: { zygosity: string } }) => ['het', 'hom_alt', 'hemi'].includes(v.call.zygosity))).toBe(true)
  })
})
