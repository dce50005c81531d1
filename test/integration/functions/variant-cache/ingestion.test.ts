import { FieldPath } from '@google-cloud/firestore'
import { afterAll, describe, expect, it } from 'vitest'
import { buildQuery, type CacheVariantDoc } from '../../../../domain/variants/cache.js'
import { catalogueRefs } from '../../../../domain/variants/catalogue.js'
import type { IngestionFaults } from '../../../../domain/variants/ingest.js'
import type { IngestionRecord, IngestionStep } from '../../../../domain/variants/ingestions.js'
import { rec, vcf } from '../../../support/vcf.js'
import { crash, makeVariantWorld } from '../../../support/variants.js'

/**
 * An ingestion's steps survive a crash at each of them: the order's cache is built from build A,
 * a rebuild B crashes at a step, readers still see A whole (or B whole once switched), and a retry
 * after the dead run's lease (and a duplicate on top) finishes B with every observation counted once.
 */
const LEASE_MS = 60_000

describe('variant ingestion: crash-safe, idempotent steps', async () => {
  const w = await makeVariantWorld({ tuning: { batchSize: 20, concurrency: 2 } })
  afterAll(() => w.close())

  const ingestion = async (id: string) => (await w.deps.ingestions.get(id)) as IngestionRecord
  /** Every variant of the order's active cache, through the API, all pages. */
  async function readAll(orderId: string) {
    const out: Array<{ id: string; build_id: string }> = []
    let token: string | null = null
    do {
      const res = await w.vc('GET', `/orders/${orderId}/variants?page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      out.push(...res.body)
      token = res.headers.get('x-next-page-token')
    } while (token)
    return out
  }
  /** The order's entries in the catalogue, by variant id. */
  async function observations(orderId: string) {
    const snap = await catalogueRefs(w.kernel.db)
      .all()
      .where('project_id', '==', w.project.id)
      .where(new FieldPath('observations', orderId, 'build_id'), '>', '')
      .get()
    return new Map(
      snap.docs.map((d) => [d.get('variant_id') as string, d.get(new FieldPath('observations', orderId)) as { samples: string[]; build_id: string }]),
    )
  }
  async function carriersOf(buildId: string) {
    const snap = await buildQuery(w.kernel.db, buildId).get()
    return new Map(
      snap.docs
        .map((d) => d.data() as CacheVariantDoc)
        .filter((d) => d.carriers.length)
        .map((d) => [d.variant_id, d.carriers]),
    )
  }

  /** A ready cache from build A, and a rebuild B requested from another VCF of the same family. */
  async function orderWithCache() {
    const t = await w.signedTrio()
    const a = await w.request(t.order.id, await w.putTrio(t.names, { records: 80, seed: 11 }))
    expect(await w.run(a.id)).toBe('ready')
    const b = await w.request(t.order.id, await w.putTrio(t.names, { records: 100, seed: 12 }))
    return { t, a: await ingestion(a.id), b: b.id }
  }

  /** `concurrent`: the duplicate runs alongside the retry (the emulator's lock waits make this slow: once is enough). */
  const cases: Array<{ at: string; switched: boolean; concurrent?: boolean; faults: (fire: () => never) => IngestionFaults }> = [
    { at: 'after validate', switched: false, faults: (fire) => ({ afterStep: (s) => s === 'validate' && fire() }) },
    {
      at: 'half-way through write_cache',
      switched: false,
      concurrent: true,
      faults: (fire) => ({ beforeCommit: (s, n) => s === 'write_cache' && n >= 40 && fire() }),
    },
    {
      at: 'half-way through update_catalogue',
      switched: false,
      faults: (fire) => ({ beforeCommit: (s, n) => s === 'update_catalogue' && n >= 40 && fire() }),
    },
    { at: 'just before switch', switched: false, faults: (fire) => ({ afterStep: (s) => s === 'update_catalogue' && fire() }) },
    { at: 'just after switch', switched: true, faults: (fire) => ({ afterStep: (s) => s === 'switch' && fire() }) },
    { at: 'half-way through cleanup', switched: true, faults: (fire) => ({ beforeCommit: (s, n) => s === 'cleanup' && n >= 20 && fire() }) },
  ]

  it.each(cases)(
    'a crash $at: readers see one whole cache, and a retry plus a duplicate count each observation once',
    async ({ at, switched, concurrent, faults }) => {
      const { t, a, b } = await orderWithCache()
      let fired = 0
      const fire = (): never => {
        fired++
        throw crash(at)
      }
      await expect(w.run(b, faults(fire), 'crashing-run')).rejects.toThrow(/injected crash/)
      expect(fired).toBe(1)

      // While the run is dead: one whole cache, A until the switch, B after it.
      const seen = await readAll(t.order.id)
      const expected = switched ? b : a.build_id
      expect(new Set(seen.map((v) => v.build_id))).toEqual(new Set([expected]))
      const status = await w.vc('GET', `/orders/${t.order.id}/status`)
      expect(status.body.status).toBe(switched ? 'ready' : 'building')
      expect(seen.length).toBe(switched ? (await ingestion(b)).variant_count : a.variant_count)

      // A retry before the lease runs out stops (the dead run still holds the order), then one after it finishes; a duplicate changes nothing.
      if (!switched) expect(await w.run(b, undefined, 'too-early')).toBe('building')
      w.advance(LEASE_MS + 1_000)
      if (concurrent) {
        const [first, second] = await Promise.all([w.run(b, undefined, 'retry'), w.run(b, undefined, 'duplicate')])
        expect([first, second]).toContain('ready')
      } else expect(await w.run(b, undefined, 'retry')).toBe('ready')
      expect(await w.run(b, undefined, 'late-duplicate')).toBe('ready')

      const done = await ingestion(b)
      expect(done).toMatchObject({ status: 'ready', pending: false })
      const after = await readAll(t.order.id)
      expect(after.length).toBe(done.variant_count)
      expect(new Set(after.map((v) => v.build_id))).toEqual(new Set([b]))
      // The catalogue holds the order's observation of exactly B's carried variants, each with B's carriers once.
      const expectedObs = await carriersOf(b)
      const obs = await observations(t.order.id)
      expect(obs.size).toBe(expectedObs.size)
      for (const [id, carriers] of expectedObs) expect(obs.get(id)?.samples, id).toEqual(carriers)
      for (const [id, o] of obs) expect(o.build_id, id).toBe(b)
      // A's documents are gone; only B's remain.
      expect((await buildQuery(w.kernel.db, a.build_id).count().get()).data().count).toBe(0)
      const cat = await w.api('GET', `/variants/${encodeURIComponent([...expectedObs.keys()][0]!)}`)
      expect(cat.body.observations.orders).toBeGreaterThanOrEqual(1)
      expect(cat.body.observed_in.filter((o: { order_id: string }) => o.order_id === t.order.id)).toHaveLength(1)
    },
  )

  it('keeps variant ids across a rebuild of the same calls, so report overrides keep pointing at them', async () => {
    const t = await w.signedTrio()
    const uri = await w.putTrio(t.names, { records: 120, seed: 5 })
    const one = await w.request(t.order.id, uri)
    await w.run(one.id)
    const before = (await readAll(t.order.id)).map((v) => v.id)
    const two = await w.request(t.order.id, uri)
    await w.run(two.id)
    const after = await readAll(t.order.id)
    expect(after.map((v) => v.id)).toEqual(before)
    expect(after[0]!.build_id).toBe(two.id)
  })

  it('lets the newest of two waiting ingestions win, the older superseded', async () => {
    const t = await w.signedTrio()
    const older = await w.request(t.order.id, await w.putTrio(t.names, { records: 50, seed: 1 }))
    const newer = await w.request(t.order.id, await w.putTrio(t.names, { records: 60, seed: 2 }))
    expect(await w.run(older.id)).toBe('superseded')
    expect(await w.run(newer.id)).toBe('ready')
    const status = await w.vc('GET', `/orders/${t.order.id}/status`)
    expect(status.body).toMatchObject({ status: 'ready', active: { ingestion_id: newer.id } })
  })

  it('fails a malformed VCF with its line and reason, leaving the cache as it was', async () => {
    const t = await w.signedTrio()
    const samples = [t.names.proband, t.names.mother, t.names.father]
    const good = rec('chr1', 1000, '.', 'A', 'G', 50, 'PASS', 'DP=30', 'GT:DP', '0/1:30', '0/0:30', '0/0:30')
    const text = vcf({
      samples,
      records: [good, rec('chr1', 'notanumber', '.', 'A', 'G', 50, 'PASS', 'DP=30', 'GT:DP', '0/1:30', '0/0:30', '0/0:30')],
    })
    const badLine = text.split('\n').length - 1
    const ing = await w.request(t.order.id, await w.putVcf(text))
    expect(await w.run(ing.id)).toBe('failed')
    const status = await w.vc('GET', `/orders/${t.order.id}/status`)
    expect(status.body).toMatchObject({ status: 'failed', active: null })
    expect(status.body.ingestion.error).toMatchObject({ step: 'validate', line: badLine })
    expect(status.body.ingestion.error.reason).toMatch(/POS|position/i)
    const list = await w.vc('GET', `/orders/${t.order.id}/variants`)
    expect(list.status).toBe(404)
  })

  it('reports VCF samples that match no order sample, and order samples missing from the VCF', async () => {
    const t = await w.signedTrio()
    const text = vcf({
      samples: [t.names.proband, t.names.mother, 'STRANGER'],
      records: [rec('chr1', 1000, '.', 'A', 'G', 50, 'PASS', 'DP=30', 'GT:DP', '0/1:30', '0/0:30', '1/1:30')],
    })
    const ing = await w.request(t.order.id, await w.putVcf(text))
    expect(await w.run(ing.id)).toBe('ready')
    const status = await w.vc('GET', `/orders/${t.order.id}/status`)
    expect(status.body.ingestion.samples.unmatched_vcf_samples).toEqual(['STRANGER'])
    expect(status.body.ingestion.samples.missing_order_samples).toEqual([expect.objectContaining({ role: 'father', sample: t.names.father })])
    expect(status.body.ingestion.sample_mismatch).toMatch(/STRANGER/)
    const [v] = (await w.vc('GET', `/orders/${t.order.id}/variants`)).body
    expect(v.calls.find((c: { role: string }) => c.role === 'father')).toMatchObject({ in_vcf: false, genotype: null })
  })

  const steps: IngestionStep[] = ['validate', 'write_cache', 'update_catalogue', 'switch', 'cleanup']
  it('records each step done, in order', async () => {
    const t = await w.signedTrio()
    const ing = await w.request(t.order.id, await w.putTrio(t.names, { records: 30, seed: 3 }))
    await w.run(ing.id)
    const res = await w.vc('GET', `/orders/${t.order.id}/ingestions/${ing.id}`)
    expect(res.body.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual(steps.map((s) => [s, 'done']))
  })
})
