import { describe, expect, it } from 'vitest'
import { computeDeps } from '../../../../functions/compute/deps.js'
import { createComputeApp } from '../../../../functions/compute/service.js'
import { call } from '../../../support/world.js'
import { makeComputeWorld } from './support.js'

/** A chain of `depth` nested objects around a string. */
const nested = (depth: number) => {
  let value: unknown = 'leaf'
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

describe('compute: what a run may carry', async () => {
  const w = await makeComputeWorld()
  const demo = w.platformId('nfcore-demo', '1.0.1')
  const nextflowMinimal = w.platformId('nextflow-minimal', '1.10.0')
  const submit = (body: Record<string, unknown>) => w.api('POST', '/runs', { body })
  /** As a client would send it: a 100,000-level body is written as text (JSON.stringify would overflow the test's own stack). */
  const submitText = (text: string) =>
    w.app.request('/api/v1/runs', {
      method: 'POST',
      headers: { authorization: `Bearer ${w.owner.token}`, 'x-project-id': w.project.id, 'content-type': 'application/json' },
      body: text,
    })

  it.each([
    ['nested 25 levels', { deep: nested(25) }, /^params\.deep\.a\.a\.a\.a\.a\.a\.a\.a\.a: nested deeper than 10 levels$/],
    ['nested 1,000 levels', { deep: nested(1000) }, /^params\.deep(\.a)+: nested deeper than 10 levels$/],
    ['an array directly inside an array', { matrix: [[1, 2]] }, /^params\.matrix\.0: an array directly inside an array cannot be stored/],
    ['a reserved key', { __name__: 'x' }, /^params: '__name__' is not a usable key$/],
    ['900 KB of params', { blob: 'x'.repeat(900_000) }, /^params: \d+ KiB is more than the 256 KiB that can be stored/],
    ['too many keys', Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`k${i}`, i])), /^params: more than 5000 keys and values$/],
  ])('answers 400 naming params for params %s, and stores nothing', async (_, params, detail) => {
    const before = (await w.deps.db.col('runs').where('project_id', '==', w.project.id).count().get()).data().count
    const res = await submit({ pipeline_id: demo, params })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(detail)
    expect((await w.deps.db.col('runs').where('project_id', '==', w.project.id).count().get()).data().count).toBe(before)
  })

  it('answers 400 naming params for params nested 100,000 levels', async () => {
    const res = await submitText(`{"pipeline_id":"${demo}","params":{"deep":${'{"a":'.repeat(100_000)}"leaf"${'}'.repeat(100_000)}}}`)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { detail: string }).detail).toMatch(/^params\.deep(\.a)+: nested deeper than 10 levels$/)
  })

  it('refuses a file param in another bucket (another tenant), naming the param', async () => {
    const res = await submit({
      pipeline_id: nextflowMinimal,
      params: {
        nf_profile_name: 'test',
        analysis_name: 'a',
        sample_id: 'S1',
        fastq_tumor: [`gs://${w.project.bucket_name}/r1.fq.gz`, 'gs://other-tenant-bucket/r2.fq.gz'],
      },
    })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/^params\.fastq_tumor: .*entry 1: gs:\/\/other-tenant-bucket is not this project's bucket/)
  })

  it("refuses another bucket in a pipeline's pass-through params too", async () => {
    const res = await submit({ pipeline_id: demo, params: { input: { sheet: 'gs://other-tenant-bucket/samplesheet.csv' } } })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(/^params\.input: gs:\/\/other-tenant-bucket is not this project's bucket/)
  })

  it('accepts the project bucket and a configured shared reference bucket', async () => {
    const deps = computeDeps(
      { ...w.deps, config: { ...w.deps.config, storage: { ...w.deps.config.storage, sharedBuckets: ['genomes-reference'] } } },
      {
        batch: w.batch,
        storage: w.storage,
      },
    )
    const app = createComputeApp(deps)
    const res = await call(app, 'POST', '/api/v1/runs', {
      token: w.owner.token,
      project: w.project.id,
      body: {
        pipeline_id: demo,
        params: { input: `gs://${w.project.bucket_name}/sheet.csv`, fasta: 'gs://genomes-reference/GRCh38/genome.fa' },
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
  })
})
