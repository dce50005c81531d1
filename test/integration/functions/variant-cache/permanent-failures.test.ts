import { afterAll, describe, expect, it } from 'vitest'
import { buildQuery } from '../../../../domain/variants/cache.js'
import { VCF_LIMITS } from '../../../../domain/variants/limits.js'
import { LocalIngestionRunner } from '../../../../domain/variants/runner.js'
import { createLogger } from '../../../../lib/log.js'
import { rec, vcf } from '../../../support/vcf.js'
import { makeVariantWorld } from '../../../support/variants.js'

/**
 * An ingestion that no retry could ever pass ends as failed, naming the VCF line, the first time:
 * run by the local suite's runner (domain/variants/runner.ts), which retries a step for a minute
 * only when another attempt may pass (domain/variants/failures.ts).
 */
describe('variant ingestion: what cannot pass on a retry fails at once', async () => {
  const w = await makeVariantWorld()
  afterAll(() => w.close())

  /** A trio VCF of the order with a record whose ALT is 1.2 MB, among ordinary ones; and that record's line. */
  function withHugeAlt(names: { proband: string; mother: string; father: string }) {
    const call = (pos: number, alt: string) => rec('chr1', pos, '.', 'A', alt, 50, 'PASS', 'DP=30', 'GT:DP', '0/1:30', '0/0:30', '0/0:30')
    const text = vcf({
      samples: [names.proband, names.mother, names.father],
      records: [call(1000, 'G'), call(2000, `A${'T'.repeat(1_200_000)}`), call(3000, 'C')],
    })
    const lines = text.split('\n')
    return { text, line: lines.findIndex((l) => l.startsWith('chr1\t2000\t')) + 1 }
  }

  /**
   * Runs the ingestion with the local suite's runner until the runner lets go of it; answers the
   * ingestion as the API shows it, and the messages the runner logged.
   */
  async function ingest(orderId: string, text: string, tuning = w.ingestionDeps().tuning) {
    const ing = await w.request(orderId, await w.putVcf(text))
    const logged: string[] = []
    const log = createLogger('debug', {}, (line) => logged.push((JSON.parse(line) as { message: string }).message))
    const runner = new LocalIngestionRunner({ ...w.ingestionDeps(), log, tuning })
    await runner.start({ id: ing.id })
    await runner.settled(ing.id)
    const res = await w.vc('GET', `/orders/${orderId}/ingestions/${ing.id}`)
    expect(res.status).toBe(200)
    // Nothing left for the reconciler to start again.
    expect((await w.deps.ingestions.get(ing.id))?.pending).toBe(false)
    return { ingestion: res.body, logged }
  }
  /** Failed the first time: no step was tried again. */
  const failedAtOnce = (logged: string[]) => {
    expect(logged).toContain('ingestion failed')
    expect(logged).not.toContain('ingestion: step failed; retrying')
    expect(logged).toContain('ingestion run ended')
  }

  it('refuses a 1.2 MB ALT while reading the VCF: the ingestion fails, naming the line, the field and the limit', async () => {
    const t = await w.signedTrio()
    const { text, line } = withHugeAlt(t.names)
    const { ingestion, logged } = await ingest(t.order.id, text)
    expect(ingestion.status).toBe('failed')
    expect(ingestion.error).toEqual({
      step: 'validate',
      line,
      reason:
        'ALT allele 1 is 1,200,001 bytes long; at most 50,000 are accepted (write a longer allele as a symbolic one, such as <INS> or <DUP> with SVLEN or END)',
    })
    failedAtOnce(logged)
    const status = await w.vc('GET', `/orders/${t.order.id}/status`)
    expect(status.body).toMatchObject({ status: 'failed', active: null })
  })

  it('fails the ingestion on a write Firestore refuses as invalid, naming the line of the variant, and removes what it wrote', async () => {
    const t = await w.signedTrio()
    const { text, line } = withHugeAlt(t.names)
    // Limits past Firestore's own: the record is read, and Firestore refuses its document (INVALID_ARGUMENT).
    const { ingestion, logged } = await ingest(t.order.id, text, { ...w.ingestionDeps().tuning, limits: { ...VCF_LIMITS, alleleBytes: 2_000_000 } })
    expect(ingestion).toMatchObject({ status: 'failed', error: { step: 'write_cache', line } })
    expect(ingestion.error.reason).toMatch(/^Firestore refused to store this line's variant: 3 INVALID_ARGUMENT: .*longer than 1048487 bytes/)
    failedAtOnce(logged)
    expect((await buildQuery(w.kernel.db, ingestion.id).count().get()).data().count).toBe(0)
  })
})
