import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createKernel } from '../../../lib/kernel.js'
import { clinicalDeps } from '../../../functions/clinical/deps.js'
import { createClinicalApp } from '../../../functions/clinical/service.js'
import { computeDeps } from '../../../functions/compute/deps.js'
import { createComputeApp } from '../../../functions/compute/service.js'
import { variantCacheDeps } from '../../../functions/variant-cache/deps.js'
import { createVariantCacheApp } from '../../../functions/variant-cache/service.js'
import { PLATFORM_PIPELINES, seedPipelines } from '../../../domain/pipelines/catalogue.js'
import { pipelineId, PLATFORM_SCOPE } from '../../../domain/pipelines/model.js'
import { PipelineStore } from '../../../domain/pipelines/store.js'
import { TRIO_LOCAL_DE_NOVO } from '../../../domain/pipelines/trio-local.js'
import { TERMINAL } from '../../../domain/runs/status.js'
import { ingestionIdForRun } from '../../../domain/variants/ingestions.js'
import { orchestratorDeps } from '../../../orchestrator/deps.js'
import { registerOrchestrator } from '../../../orchestrator/functions.js'
import { INGESTION_STALE_MS, reconcile, UNPUBLISHED_GRACE_MS } from '../../../orchestrator/reconcile.js'
import { trioVcf } from '../../../domain/variants/synthetic.js'
import { SYSTEM_ACTOR } from '../../../lib/audit.js'
import { call, rand } from '../../support/world.js'
import { makeStage, shellPipeline } from './stage.js'
import { until } from './support.js'

/**
 * The trio demo on the local suite's backends, every hop real: a signed trio order, its samplesheet
 * in the bucket, trio-local submitted for it through the compute API, run by the local executor
 * (node on the host), its success delivered by push to jobStateChanged, which requests the
 * ingestion of the run's VCF; ingestion.requested is pushed to ingestionRequested, whose local
 * runner builds the cache; then the family's genotypes are read from the variant-cache service.
 */
describe('trio demo: a trio-local run fills its order variant cache', async () => {
  const stage = await makeStage({ env: { INGESTION_RUNNER: 'local' } })
  const { config, world } = stage
  registerOrchestrator(stage.deps)
  for (const [fn, topic] of [
    ['runRequested', config.topics.runRequested],
    ['jobStateChanged', config.topics.jobStatus],
    ['ingestionRequested', config.topics.ingestionRequested],
  ] as const) {
    const base = await stage.serve(fn)
    const [t] = await stage.pubsub.topic(topic).get({ autoCreate: true })
    await t.createSubscription(`${topic}-push-${rand()}`, { pushConfig: { pushEndpoint: `${base}/projects/${config.gcpProject}/topics/${topic}` } })
  }
  afterAll(() => stage.close())
  await seedPipelines(new PipelineStore(stage.kernel.db, stage.kernel.audit, stage.kernel.clock), PLATFORM_PIPELINES)

  const kernel = (name: string) => createKernel(config, name, { firestore: world.deps.db.firestore })
  const apps = {
    clinical: createClinicalApp(clinicalDeps(kernel('clinical'))),
    compute: createComputeApp(computeDeps(world.deps, { queue: stage.queue, batch: stage.executor })),
    cache: createVariantCacheApp(variantCacheDeps(kernel('variant_cache'), { queue: stage.queue })),
  }
  const api = async (app: keyof typeof apps, method: string, path: string, body?: unknown) => {
    const res = await call(apps[app], method, `/api/v1${path}`, { token: world.owner.token, project: world.project.id, body })
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300)
    return res
  }
  const bucket = world.project.bucket_name
  async function person(sex: string, affected: string, extra: Record<string, unknown> = {}) {
    const subject = (
      await api('clinical', 'POST', '/subjects', { external_id: `P-${rand()}`, sex, affected_status: affected, family_id: 'FAM-T', ...extra })
    ).body
    const external_id = `S-${rand()}`
    const fastq = [`gs://${bucket}/fastq/${external_id}_R1.fastq.gz`, `gs://${bucket}/fastq/${external_id}_R2.fastq.gz`]
    const sample = (await api('clinical', 'POST', '/samples', { external_id, subject_id: subject.id, type: 'blood', fastq })).body
    return { subject, sample }
  }

  it('signs the order, runs trio-local for it, and shows the de novo call with the family genotypes', async () => {
    const mother = await person('female', 'unaffected')
    const father = await person('male', 'unaffected')
    const proband = await person('male', 'affected', { mother_id: mother.subject.id, father_id: father.subject.id })
    const order = (
      await api('clinical', 'POST', '/orders', {
        test_code: 'WGS-trio',
        samples: [
          { sample_id: proband.sample.id, role: 'proband' },
          { sample_id: mother.sample.id, role: 'mother' },
          { sample_id: father.sample.id, role: 'father' },
        ],
      })
    ).body
    await api('clinical', 'POST', `/orders/${order.id}/transition`, { to: 'signed' })
    const sheet = await api('clinical', 'GET', `/orders/${order.id}/samplesheet`)
    const sheetPath = `samplesheets/${order.accession}.csv`
    await stage.deps.storage.write(bucket, sheetPath, sheet.body, 'text/csv')

    const submitted = await api('compute', 'POST', '/runs', {
      pipeline_id: pipelineId(PLATFORM_SCOPE, 'trio-local', '1.0.0'),
      params: { samplesheet: `gs://${bucket}/${sheetPath}` },
      order_id: order.id,
    })
    const run = await until(
      'the run to end',
      async () => {
        const r = await stage.deps.runs.getById(submitted.body.id)
        return r && TERMINAL.has(r.status) ? r : undefined
      },
      30_000,
    )
    expect(run.status, run.error_message).toBe('succeeded')
    const ingestionId = ingestionIdForRun(run.id)
    const ingestion = await until(
      'the ingestion to be ready',
      async () => {
        const i = await stage.deps.ingestions.get(ingestionId)
        return i && ['ready', 'failed'].includes(i.status) ? i : undefined
      },
      30_000,
    )
    expect(ingestion.status, JSON.stringify(ingestion.error)).toBe('ready')

    const status = (await api('cache', 'GET', `/orders/${order.id}/status`)).body
    expect(status).toMatchObject({ status: 'ready', ingestion: { trigger: 'run', run_id: run.id, sample_mismatch: null } })
    expect(status.ingestion.source_uri).toBe(`gs://${bucket}/runs/${run.id}/${order.accession}.vep.vcf.gz`)
    expect(status.ingestion.record_count).toBeGreaterThan(250)

    const hits = (
      await api('cache', 'GET', `/orders/${order.id}/variants?gene=${TRIO_LOCAL_DE_NOVO.gene}&zygosity=proband:het,mother:hom_ref,father:hom_ref`)
    ).body
    expect(hits).toHaveLength(1)
    expect(hits[0]).toMatchObject({ chrom: '2', pos: TRIO_LOCAL_DE_NOVO.pos, consequence: 'missense_variant' })
    expect(hits[0].calls.map((c: { role: string; sample: string; genotype: string }) => [c.role, c.sample, c.genotype])).toEqual([
      ['proband', proband.sample.external_id, '0/1'],
      ['mother', mother.sample.external_id, '0/0'],
      ['father', father.sample.external_id, '0/0'],
    ])
    const page = await api('cache', 'GET', `/orders/${order.id}/variants?page_size=1000`)
    expect(page.body.length).toBe(ingestion.variant_count)
    expect(page.body.every((v: { calls: unknown[] }) => v.calls.length === 3)).toBe(true)
  })

  it("ingests a succeeded run's VCF from the reconciler's sweep when the success handler never got to it", async () => {
    const mother = await person('female', 'unaffected')
    const father = await person('male', 'unaffected')
    const proband = await person('female', 'affected', { mother_id: mother.subject.id, father_id: father.subject.id })
    const order = (
      await api('clinical', 'POST', '/orders', {
        test_code: 'WGS-trio',
        samples: [
          { sample_id: proband.sample.id, role: 'proband' },
          { sample_id: mother.sample.id, role: 'mother' },
          { sample_id: father.sample.id, role: 'father' },
        ],
      })
    ).body
    await api('clinical', 'POST', `/orders/${order.id}/transition`, { to: 'signed' })
    const { run } = await stage.deps.runs.submit(SYSTEM_ACTOR, {
      project: {
        id: world.project.id,
        org_id: world.project.org_id,
        bucket_name: bucket,
        service_account_email: world.project.credentials!.service_account_email,
      },
      pipeline: { id: randomUUID(), slug: 'external-caller', version: '1.0.0', ...shellPipeline('true') },
      params: {},
      tags: [],
      created_by: world.owner.user.id,
      order_id: order.id,
    })
    const names = { proband: proband.sample.external_id, mother: mother.sample.external_id, father: father.sample.external_id }
    await stage.deps.storage.write(bucket, `runs/${run.id}/calls.vep.vcf`, trioVcf({ samples: names, records: 40, probandSex: 'female' }))
    // The job's success is recorded, and the process dies before looking at the outputs.
    await stage.deps.runs.applyJobState(run.id, { status: 'succeeded', at: new Date(), source: 'test' })
    expect((await stage.deps.runs.getById(run.id))!.ingestion_pending).toBe(true)

    const later = { now: () => new Date(Date.now() + UNPUBLISHED_GRACE_MS + 5_000) }
    const sweeper = orchestratorDeps(createKernel(config, 'orchestrator', { firestore: world.deps.db.firestore, clock: later }), {
      queue: stage.queue,
      batch: stage.executor,
    })
    const report = await reconcile(sweeper)
    expect(report.runs_ingested).toContain(run.id)
    const ingestion = await until(
      'the swept ingestion to be ready',
      async () => {
        const i = await stage.deps.ingestions.get(ingestionIdForRun(run.id))
        return i && ['ready', 'failed'].includes(i.status) ? i : undefined
      },
      30_000,
    )
    expect(ingestion).toMatchObject({ status: 'ready', trigger: 'run', source_uri: `gs://${bucket}/runs/${run.id}/calls.vep.vcf` })
    expect(await stage.deps.runs.getById(run.id)).toMatchObject({ ingestion_pending: false, ingestion_id: ingestion.id })
    // Swept again, nothing is requested twice.
    expect((await reconcile(sweeper)).runs_ingested).not.toContain(run.id)
  })

  it('resumes an ingestion whose message was lost, from the reconciler sweep of stalled ingestions', async () => {
    const mother = await person('female', 'unaffected')
    const father = await person('male', 'unaffected')
    const proband = await person('male', 'affected', { mother_id: mother.subject.id, father_id: father.subject.id })
    const order = (
      await api('clinical', 'POST', '/orders', {
        test_code: 'WGS-trio',
        samples: [
          { sample_id: proband.sample.id, role: 'proband' },
          { sample_id: mother.sample.id, role: 'mother' },
        ],
      })
    ).body
    await api('clinical', 'POST', `/orders/${order.id}/transition`, { to: 'signed' })
    const path = `vcf/${order.accession}.vcf`
    const names = { proband: proband.sample.external_id, mother: mother.sample.external_id, father: father.sample.external_id }
    await stage.deps.storage.write(bucket, path, trioVcf({ samples: names, records: 30 }))
    // Recorded, and the process dies before publishing ingestion.requested.
    const { ingestion } = await stage.deps.ingestions.request(SYSTEM_ACTOR, {
      project: { id: world.project.id, org_id: world.project.org_id },
      order,
      source_uri: `gs://${bucket}/${path}`,
      trigger: 'request',
      requested_by: world.owner.user.id,
    })
    const later = { now: () => new Date(Date.now() + INGESTION_STALE_MS + 5_000) }
    const sweeper = orchestratorDeps(createKernel(config, 'orchestrator', { firestore: world.deps.db.firestore, clock: later }), {
      queue: stage.queue,
      batch: stage.executor,
    })
    expect((await reconcile(sweeper)).ingestions_resumed).toContain(ingestion.id)
    const done = await until(
      'the resumed ingestion to end',
      async () => {
        const i = await stage.deps.ingestions.get(ingestion.id)
        return i && ['ready', 'failed'].includes(i.status) ? i : undefined
      },
      30_000,
    )
    expect(done.status, JSON.stringify(done.error)).toBe('ready')
    // The father is in the VCF but not in the order: reported, not dropped silently.
    expect(done.samples?.unmatched_vcf_samples).toEqual([father.sample.external_id])
  })
})
