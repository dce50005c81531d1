import { afterAll, describe, expect, it } from 'vitest'
import { deNovoSite } from '../../../../domain/variants/synthetic.js'
import { makeVariantWorld } from '../../../support/variants.js'
import { call } from '../../../support/world.js'

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

  it('pages filtered lists with keyset tokens to exactly the filtered set, in order, whatever the page size', async () => {
    const everything = (await w.vc('GET', `/orders/${t.order.id}/variants?page_size=1000`)).body as Array<{
      id: string
      qual: number | null
      filter: string[]
      consequence: string | null
      calls: Array<{ role: string; zygosity: string }>
    }>
    const common = everything.find((v) => v.consequence)!.consequence!
    const cases: Array<[string, (v: (typeof everything)[number]) => boolean]> = [
      ['min_qual=500', (v) => v.qual !== null && v.qual >= 500],
      ['filter=PASS&zygosity=proband:het', (v) => v.filter.join() === 'PASS' && v.calls[0]!.zygosity === 'het'],
      [
        'zygosity=mother:hom_alt|hemi,father:alt',
        (v) => ['hom_alt', 'hemi'].includes(v.calls[1]!.zygosity) && ['het', 'hom_alt', 'hemi'].includes(v.calls[2]!.zygosity),
      ],
      // The consequence and the trio's zygosities in one query, with an index of its own.
      [
        `consequence=${common},stop_gained&zygosity=proband:alt,mother:het|hom_ref|hom_alt`,
        (v) =>
          [common, 'stop_gained'].includes(v.consequence!) &&
          ['het', 'hom_alt', 'hemi'].includes(v.calls[0]!.zygosity) &&
          ['het', 'hom_ref', 'hom_alt'].includes(v.calls[1]!.zygosity),
      ],
      // 4 × 3 × 4 alternatives, more than one query may ask: the consequences are checked on the variants read.
      [
        `consequence=${common},stop_gained,frameshift_variant,splice_donor_variant&zygosity=proband:alt,mother:het|hom_ref|hom_alt|no_call`,
        (v) =>
          [common, 'stop_gained', 'frameshift_variant', 'splice_donor_variant'].includes(v.consequence!) &&
          ['het', 'hom_alt', 'hemi'].includes(v.calls[0]!.zygosity) &&
          ['het', 'hom_ref', 'hom_alt', 'no_call'].includes(v.calls[1]!.zygosity),
      ],
    ]
    for (const [query, keep] of cases) {
      const expected = everything.filter(keep).map((v) => v.id)
      expect(expected.length, query).toBeGreaterThan(0)
      for (const size of [11, 60]) {
        const seen: string[] = []
        let token: string | null = null
        do {
          const res = await w.vc(
            'GET',
            `/orders/${t.order.id}/variants?${query}&page_size=${size}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
          )
          expect(res.status, JSON.stringify(res.body)).toBe(200)
          expect(res.body.length).toBeLessThanOrEqual(size)
          seen.push(...res.body.map((v: { id: string }) => v.id))
          token = res.headers.get('x-next-page-token')
        } while (token)
        expect(seen, `${query} by ${size}`).toEqual(expected)
      }
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

describe('variant cache: permissions and bad input', async () => {
  const w = await makeVariantWorld()
  afterAll(() => w.close())
  const t = await w.signedTrio()
  const uri = await w.putTrio(t.names, { records: 20, seed: 3 })
  const ready = await w.request(t.order.id, uri)
  await w.run(ready.id)
  const [variant] = (await w.vc('GET', `/orders/${t.order.id}/variants?page_size=1`)).body

  it('lets viewers read; only pipeline service users and admins start an ingestion', async () => {
    for (const role of ['viewer', 'lab', 'analyst', 'reviewer'] as const) {
      const who = await w.caller([role])
      expect((await w.vc('GET', `/orders/${t.order.id}/variants`, { token: who.token })).status, role).toBe(200)
      expect((await w.vc('GET', `/orders/${t.order.id}/status`, { token: who.token })).status, role).toBe(200)
      const post = await w.vc('POST', `/orders/${t.order.id}/ingestions`, { token: who.token, body: { source_uri: uri } })
      expect(post.status, role).toBe(403)
    }
    for (const role of ['pipeline', 'admin'] as const) {
      const who = await w.caller([role])
      const post = await w.vc('POST', `/orders/${t.order.id}/ingestions`, { token: who.token, body: { source_uri: uri } })
      expect(post.status, `${role}: ${JSON.stringify(post.body)}`).toBe(202)
    }
    const nobody = await w.caller([])
    expect((await w.vc('GET', `/orders/${t.order.id}/variants`, { token: nobody.token })).status).toBe(403)
  })

  it("answers another project's order as if it did not exist", async () => {
    const other = await w.otherProject()
    for (const path of [
      `/orders/${t.order.id}/variants`,
      `/orders/${t.order.id}/variants/${encodeURIComponent(variant.id)}`,
      `/orders/${t.order.id}/status`,
    ]) {
      const res = await w.vc('GET', path, { project: other.project.id })
      expect(res.status, path).toBe(404)
      expect(res.body.detail).toMatch(/not found/)
    }
    const post = await w.vc('POST', `/orders/${t.order.id}/ingestions`, { project: other.project.id, body: { source_uri: uri } })
    expect(post.status).toBe(404)
    expect(await w.deps.cache.getVariant(other.project.id, t.order.id, variant.id)).toBeUndefined()
    expect((await w.api('GET', `/variants/${encodeURIComponent(variant.id)}`, { project: other.project.id })).status).toBe(404)
  })

  it('has no way to write variants but an ingestion: the only mutating operation of either service is POST /orders/{id}/ingestions', async () => {
    const mutating = async (app: { request: (p: string) => Response | Promise<Response> }) => {
      const doc = (await (await app.request('/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> }
      return Object.entries(doc.paths).flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
          .map((m) => `${m} ${p}`),
      )
    }
    expect(await mutating(w.app)).toEqual(['post /api/v1/orders/{order_id}/ingestions'])
    expect((await mutating(w.clinicalApp)).filter((m) => m.includes('variants'))).toEqual([])
    for (const m of ['PUT', 'PATCH', 'DELETE']) {
      expect((await w.vc(m, `/orders/${t.order.id}/variants/${encodeURIComponent(variant.id)}`)).status, m).toBe(404)
      expect((await w.api(m, `/variants/${encodeURIComponent(variant.id)}`)).status, m).toBe(404)
    }
  })

  it('answers bad ingestion requests with a 400 naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /run_id|source_uri/],
      [{ source_uri: uri, run_id: '00000000-0000-4000-8000-000000000000' }, /exactly one/],
      [{ source_uri: 'https://example.org/x.vcf' }, /source_uri/],
      [{ source_uri: `gs://someone-else/x.vcf` }, /project bucket/],
      [{ source_uri: `gs://${w.project.bucket_name}/notes.txt` }, /VCF/],
      [{ source_uri: `gs://${w.project.bucket_name}/missing.vcf.gz` }, /does not exist/],
    ]
    for (const [body, detail] of cases) {
      const res = await w.vc('POST', `/orders/${t.order.id}/ingestions`, { body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.detail).toMatch(detail)
    }
    const noProject = await call(w.app, 'GET', `/api/v1/orders/${t.order.id}/status`, { token: w.owner.token })
    expect(noProject.status).toBe(400)
    const draft = await w.trio()
    expect((await w.vc('POST', `/orders/${draft.order.id}/ingestions`, { body: { source_uri: uri } })).status).toBe(409)
  })
})
