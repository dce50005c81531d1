import { describe, expect, it } from 'vitest'
import { PLATFORM_PIPELINES, seedPipelines } from '../../../../domain/pipelines/catalogue.js'
import { rand } from '../../../support/world.js'
import { makeComputeWorld } from './support.js'

const minimalContainerPipeline = (slug: string, version: string, extra: Record<string, unknown> = {}) => ({
  slug,
  name: `Pipeline ${slug}`,
  type: 'container_entrypoint',
  container: 'docker.io/library/busybox:1.36',
  version,
  entrypoint: '/bin/sh',
  commands: ['-c', 'echo hi'],
  inputs: [{ name: 'sample_id', type: 'string', required: true }],
  ...extra,
})

describe('compute: the pipeline catalogue', async () => {
  const w = await makeComputeWorld()

  it('lists the four pre-registered pipelines of the spec with their types, containers and required inputs', async () => {
    const res = await w.api('GET', '/pipelines?page_size=100')
    expect(res.status).toBe(200)
    const bySlug = new Map<string, any>()
    for (const p of res.body) if (!bySlug.has(p.slug)) bySlug.set(p.slug, p)
    expect(bySlug.get('nextflow-minimal')).toMatchObject({
      type: 'container_entrypoint',
      container: 'nextflow/nextflow:24.10.0',
      version: '1.10.0',
      required_inputs: ['nf_profile_name', 'analysis_name', 'sample_id', 'fastq_tumor'],
      scope: 'platform',
    })
    expect(bySlug.get('wdl-minimal')).toMatchObject({ type: 'direct_wdl', container: 'broadinstitute/cromwell:87', required_inputs: [] })
    expect(bySlug.get('hereditary-mock')).toMatchObject({ type: 'direct_wdl', required_inputs: ['case_id', 'child_fastq'] })
    expect(bySlug.get('hereditary-mock').inputs.map((i: { name: string }) => i.name)).toEqual(
      expect.arrayContaining(['mother_fastq', 'father_fastq', 'patient_sex', 'hpo_terms']),
    )
    expect(bySlug.get('nfcore-demo')).toMatchObject({ type: 'direct_nextflow', additional_params: true, inputs: [] })
    for (const p of bySlug.values()) {
      expect(p.tags.length).toBeGreaterThan(0)
      expect(p.description.length).toBeGreaterThan(20)
    }
  })

  it('filters the list by type, tag and slug', async () => {
    const wdl = await w.api('GET', '/pipelines?type=direct_wdl')
    expect(new Set(wdl.body.map((p: { slug: string }) => p.slug))).toEqual(new Set(['wdl-minimal', 'hereditary-mock']))
    const tagged = await w.api('GET', '/pipelines?tag=nf-core')
    expect(tagged.body.map((p: { slug: string }) => p.slug)).toEqual(['nfcore-demo'])
    const bySlug = await w.api('GET', '/pipelines?slug=nextflow-minimal')
    expect(bySlug.body.map((p: { version: string }) => p.version)).toEqual(['1.10.0', '1.2.0'])
    const badType = await w.api('GET', '/pipelines?type=snakemake')
    expect(badType.status).toBe(400)
    expect(badType.body.detail).toMatch(/type/)
  })

  it('pages the list with page_size and X-Next-Page-Token, never repeating an item', async () => {
    const seen: string[] = []
    let token: string | undefined
    do {
      const res = await w.api('GET', `/pipelines?page_size=3${token ? `&page_token=${token}` : ''}`)
      expect(res.status).toBe(200)
      expect(res.body.length).toBeLessThanOrEqual(3)
      seen.push(...res.body.map((p: { id: string }) => p.id))
      token = res.headers.get('x-next-page-token') ?? undefined
    } while (token)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.length).toBeGreaterThanOrEqual(PLATFORM_PIPELINES.length)
  })

  it('returns the latest version by semantic-version order (1.10.0 over 1.2.0), not the newest document', async () => {
    const slug = `semver-${rand()}`
    for (const version of ['1.10.0', '1.2.0', '1.10.1-rc.1', '0.9.9']) {
      const res = await w.api('POST', '/pipelines', { body: minimalContainerPipeline(slug, version) })
      expect(res.status).toBe(201)
    }
    const latest = await w.api('GET', `/pipelines/slug/${slug}`)
    expect(latest.status).toBe(200)
    expect(latest.body.version).toBe('1.10.1-rc.1')
    const platform = await w.api('GET', '/pipelines/slug/nextflow-minimal')
    expect(platform.body.version).toBe('1.10.0')
    const versions = await w.api('GET', `/pipelines/slug/${slug}/versions`)
    expect(versions.body.map((p: { version: string }) => p.version)).toEqual(['1.10.1-rc.1', '1.10.0', '1.2.0', '0.9.9'])
    // Paged like every list, in the same order.
    const first = await w.api('GET', `/pipelines/slug/${slug}/versions?page_size=3`)
    expect(first.body.map((p: { version: string }) => p.version)).toEqual(['1.10.1-rc.1', '1.10.0', '1.2.0'])
    const token = first.headers.get('x-next-page-token')!
    const second = await w.api('GET', `/pipelines/slug/${slug}/versions?page_size=3&page_token=${token}`)
    expect(second.body.map((p: { version: string }) => p.version)).toEqual(['0.9.9'])
    expect(second.headers.get('x-next-page-token')).toBeNull()
  })

  it('selects a version with ?version= and answers 404 for an unknown version or slug', async () => {
    const v = await w.api('GET', '/pipelines/slug/nextflow-minimal?version=1.2.0')
    expect(v.status).toBe(200)
    expect(v.body).toMatchObject({ slug: 'nextflow-minimal', version: '1.2.0', id: w.platformId('nextflow-minimal', '1.2.0') })
    const missingVersion = await w.api('GET', '/pipelines/slug/nextflow-minimal?version=9.9.9')
    expect(missingVersion.status).toBe(404)
    expect(missingVersion.body.detail).toMatch(/9\.9\.9/)
    expect((await w.api('GET', '/pipelines/slug/no-such-pipeline')).status).toBe(404)
    expect((await w.api('GET', '/pipelines/slug/no-such-pipeline/versions')).status).toBe(404)
  })

  it('gets a pipeline by id, and 404 for an unknown or malformed id', async () => {
    const id = w.platformId('wdl-minimal', '1.0.0')
    const res = await w.api('GET', `/pipelines/${id}`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id, slug: 'wdl-minimal', workflow: { source: expect.stringContaining('workflow minimal') } })
    expect((await w.api('GET', '/pipelines/00000000-0000-4000-8000-000000000000')).status).toBe(404)
    expect((await w.api('GET', '/pipelines/not-a-uuid')).status).toBe(404)
  })

  it('answers 409 for an existing slug and version, naming the force option, and overwrites with ?force=true', async () => {
    const slug = `dup-${rand()}`
    const first = await w.api('POST', '/pipelines', { body: minimalContainerPipeline(slug, '1.0.0', { description: 'first' }) })
    expect(first.status).toBe(201)
    const again = await w.api('POST', '/pipelines', { body: minimalContainerPipeline(slug, '1.0.0', { description: 'second' }) })
    expect(again.status).toBe(409)
    expect(again.body.detail).toMatch(/force=true/)
    const forced = await w.api('POST', '/pipelines?force=true', { body: minimalContainerPipeline(slug, '1.0.0', { description: 'second' }) })
    expect(forced.status).toBe(200)
    expect(forced.body).toMatchObject({ id: first.body.id, description: 'second', created: first.body.created })
    const got = await w.api('GET', `/pipelines/${first.body.id}`)
    expect(got.body.description).toBe('second')
  })

  it('never lets a project replace a platform pipeline, even with force', async () => {
    const res = await w.api('POST', '/pipelines?force=true', { body: minimalContainerPipeline('nextflow-minimal', '1.10.0') })
    expect(res.status).toBe(409)
    expect(res.body.detail).toMatch(/platform pipeline/)
  })

  it('keeps a pipeline created in one project out of every other project', async () => {
    const slug = `private-${rand()}`
    const created = await w.api('POST', '/pipelines', { body: minimalContainerPipeline(slug, '1.0.0') })
    const { project: other } = await w.otherProject()
    const elsewhere = await w.api('GET', `/pipelines/${created.body.id}`, { project: other.id })
    expect(elsewhere.status).toBe(404)
    const list = await w.api('GET', `/pipelines?slug=${slug}`, { project: other.id })
    expect(list.body).toEqual([])
  })

  it.each([
    [{ version: '1.0' }, /version/],
    [{ type: 'snakemake' }, /type/],
    [{ slug: 'Not A Slug' }, /slug/],
    [{ commands: undefined, entrypoint: undefined }, /commands/],
    [{ type: 'direct_wdl', entrypoint: undefined, commands: undefined }, /workflow/],
    [{ inputs: [{ name: 'reads', type: 'array', required: true }] }, /inputs\.0\.items/],
    [
      {
        inputs: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'integer' },
        ],
      },
      /declared twice/,
    ],
    [{ inputs: [{ name: 'n', type: 'integer', enum: ['1', '2'] }] }, /inputs\.0\.enum: applies to string inputs only/],
    [{ inputs: [{ name: 's', type: 'string', enum: ['a', 'b'], default: 'c' }] }, /inputs\.0\.default: expected one of a, b/],
    [{ inputs: [{ name: 'n', type: 'integer', default: 'three' }] }, /inputs\.0\.default: expected an integer/],
  ])('refuses an invalid pipeline %j with a 400 naming the field', async (change, detail) => {
    const res = await w.api('POST', '/pipelines', { body: minimalContainerPipeline(`bad-${rand()}`, '1.0.0', change) })
    expect(res.status).toBe(400)
    expect(res.body.detail).toMatch(detail)
  })

  it('lets only project admins create pipelines (an analyst gets 403)', async () => {
    const analyst = await w.caller(['analyst'])
    const res = await w.api('POST', '/pipelines', { token: analyst.token, body: minimalContainerPipeline(`x-${rand()}`, '1.0.0') })
    expect(res.status).toBe(403)
    const viewer = await w.caller(['viewer'])
    expect((await w.api('GET', '/pipelines', { token: viewer.token })).status).toBe(200)
  })

  it('seeds idempotently: a second seeding writes nothing', async () => {
    expect(await seedPipelines(w.deps.pipelines)).toEqual({ created: 0, updated: 0 })
  })
})
