import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { TRIO_LOCAL_DE_NOVO } from '../../../../domain/pipelines/trio-local.js'
import { PLATFORM_PIPELINES } from '../../../../domain/pipelines/catalogue.js'
import { readVariants } from '../../../../domain/variants/reader.js'
import type { VariantRecord } from '../../../../domain/variants/records.js'

const run = promisify(execFile)

/** The trio-local program as the local executor runs it: `node -e <script>` with the run's environment, reading a samplesheet from the bucket folder. */
describe('trio-local: an annotated trio VCF from an order samplesheet', async () => {
  const root = await mkdtemp(join(tmpdir(), 'trio-local-'))
  afterAll(() => rm(root, { recursive: true, force: true }))
  const bucketDir = join(root, 'bucket')
  await mkdir(join(bucketDir, 'samplesheets'), { recursive: true })
  const sheet = [
    'sample,lane,fastq_1,fastq_2,sex,phenotype,paternal_id,maternal_id,case_id',
    'S-MUM,1,gs://b/m1.fq.gz,gs://b/m2.fq.gz,2,1,0,0,ORD-2026-000001',
    'S-KID,1,gs://b/k1.fq.gz,gs://b/k2.fq.gz,1,2,S-DAD,S-MUM,ORD-2026-000001',
    'S-KID,2,gs://b/k3.fq.gz,gs://b/k4.fq.gz,1,2,S-DAD,S-MUM,ORD-2026-000001',
    'S-DAD,1,gs://b/d1.fq.gz,gs://b/d2.fq.gz,1,1,0,0,ORD-2026-000001',
  ].join('\n')
  await writeFile(join(bucketDir, 'samplesheets', 'trio.csv'), `${sheet}\n`)
  const out = join(root, 'out') + '/'
  const pipeline = PLATFORM_PIPELINES.find((p) => p.slug === 'trio-local')!
  const { stdout } = await run(pipeline.entrypoint!, pipeline.commands!, {
    env: {
      PATH: process.env.PATH,
      PLATFORM_RUN_ID: 'run-1',
      PLATFORM_BUCKET: 'demo',
      PLATFORM_BUCKET_DIR: bucketDir,
      PLATFORM_OUTPUT_DIR: out,
      PARAM_SAMPLESHEET: 'gs://demo/samplesheets/trio.csv',
    },
  })
  const files = await readdir(out)
  const reader = await readVariants(Readable.from([await readFile(join(out, files[0]!))]))
  const variants: VariantRecord[] = []
  for await (const v of reader.variants) variants.push(v)

  it('writes <case>.vep.vcf.gz with the family proband first, on GRCh38', () => {
    expect(files).toEqual(['ORD-2026-000001.vep.vcf.gz'])
    expect(stdout).toMatch(/wrote .* records for S-KID, S-MUM, S-DAD/)
    expect(reader.header.samples).toEqual(['S-KID', 'S-MUM', 'S-DAD'])
    expect(reader.header.build.assembly).toBe('GRCh38')
  })

  it('holds a few hundred annotated records over every chromosome, some multi-allelic', () => {
    expect(reader.stats.records).toBeGreaterThan(250)
    expect(reader.stats.records).toBeLessThan(400)
    const chroms = new Set(variants.map((v) => v.chrom))
    for (const c of ['1', '2', '17', '22', 'X', 'Y', 'MT']) expect(chroms, c).toContain(c)
    expect(variants.some((v) => v.alt_count > 1)).toBe(true)
    expect(variants.every((v) => v.genes.length > 0 && v.consequence)).toBe(true)
    expect(variants.every((v) => v.id.startsWith('ga4gh:VA.'))).toBe(true)
  })

  it('plants the de novo candidate: proband het, both parents homozygous reference', () => {
    const d = variants.find((v) => v.pos === TRIO_LOCAL_DE_NOVO.pos)!
    expect(d).toMatchObject({ chrom: '2', ref: 'G', alt: 'A', genes: ['SCN2A'], consequence: 'missense_variant', filter: ['PASS'] })
    expect(d.samples.map((s) => [s.sample, s.zygosity])).toEqual([
      ['S-KID', 'het'],
      ['S-MUM', 'hom_ref'],
      ['S-DAD', 'hom_ref'],
    ])
  })

  it('refuses a samplesheet outside the project bucket', async () => {
    const res = await run(pipeline.entrypoint!, pipeline.commands!, {
      env: {
        PATH: process.env.PATH,
        PLATFORM_BUCKET: 'demo',
        PLATFORM_BUCKET_DIR: bucketDir,
        PLATFORM_OUTPUT_DIR: out,
        PARAM_SAMPLESHEET: 'gs://other/x.csv',
      },
    }).catch((e: { code: number; stderr: string }) => e)
    expect(res).toMatchObject({ code: 2, stderr: expect.stringMatching(/not in the project bucket/) })
  })
})
