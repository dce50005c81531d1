import { randomBytes } from 'node:crypto'
import { SYSTEM_ACTOR } from '../../lib/audit.js'
import type { ProjectRecord } from '../../lib/auth/access.js'
import { createKernel, type KernelDeps } from '../../lib/kernel.js'
import type { OrderRecord, SampleRole } from '../../domain/clinical/model.js'
import type { OrderStatus } from '../../domain/clinical/order-status.js'
import { clinicalStores } from '../../domain/clinical/stores.js'
import { reauthStateOf } from '../../domain/reports/signoff.js'
import type { CachedVariant, VariantSource } from '../../domain/reports/variant-source.js'
import { reportsDeps, type ReportsDeps } from '../../functions/reports/deps.js'
import { createReportsApp } from '../../functions/reports/service.js'
import { apiFor, makeWorld, rand } from './world.js'

/**
 * An order's variant cache as the report service reads it, in memory: the tests put the variants
 * an ingestion would have made, and rebuild it (same ids, other values) at will.
 */
export class MemoryVariantCache implements VariantSource {
  private readonly byOrder = new Map<string, Map<string, CachedVariant>>()

  put(projectId: string, orderId: string, ...variants: CachedVariant[]) {
    const key = `${projectId}/${orderId}`
    const order = this.byOrder.get(key) ?? new Map<string, CachedVariant>()
    for (const v of variants) order.set(v.id, v)
    this.byOrder.set(key, order)
  }

  /** A rebuild: the order's cache becomes exactly these variants. */
  replace(projectId: string, orderId: string, ...variants: CachedVariant[]) {
    this.byOrder.delete(`${projectId}/${orderId}`)
    this.put(projectId, orderId, ...variants)
  }

  async getVariant(projectId: string, orderId: string, variantId: string) {
    return this.byOrder.get(`${projectId}/${orderId}`)?.get(variantId)
  }
}

const vrsId = () => `ga4gh:VA.${randomBytes(24).toString('base64url')}`

/** A variant as the cache holds it: a heterozygous call in the proband, the parents reference (a de novo by default). */
export function cachedVariant(fields: Partial<CachedVariant> & { gene?: string } = {}): CachedVariant {
  const { gene = 'SCN2A', ...rest } = fields
  return {
    id: vrsId(),
    assembly: 'GRCh38',
    chrom: '2',
    pos: 165_310_406 + Math.floor(Math.random() * 1000),
    end: null,
    ref: 'G',
    alt: 'A',
    qual: 812.4,
    filter: ['PASS'],
    variant_type: 'snv',
    svtype: null,
    genes: [gene],
    consequence: 'missense_variant',
    transcript: 'ENST00000375437.7',
    hgvs_c: 'c.2558G>A',
    hgvs_p: 'p.Arg853Gln',
    samples: [
      { sample: 'S1', role: 'proband', genotype: '0/1', zygosity: 'het', depth: 41, genotype_quality: 99, allele_fraction: 0.49 },
      { sample: 'S2', role: 'mother', genotype: '0/0', zygosity: 'hom_ref', depth: 38, genotype_quality: 99, allele_fraction: 0 },
      { sample: 'S3', role: 'father', genotype: '0/0', zygosity: 'hom_ref', depth: 40, genotype_quality: 99, allele_fraction: 0 },
    ],
    ...rest,
  }
}

/** A trio order of `project` made through the clinical stores (subjects, samples with FASTQ, the order), moved to in_progress. */
export async function makeTrioOrder(kernel: KernelDeps, project: ProjectRecord): Promise<OrderRecord> {
  const stores = clinicalStores(kernel)
  const p = { id: project.id, org_id: project.org_id, bucket_name: project.bucket_name }
  const family = `FAM-${rand()}`
  const subject = (sex: 'male' | 'female', affected: 'affected' | 'unaffected', extra: Record<string, unknown> = {}) =>
    stores.subjects.create(
      SYSTEM_ACTOR,
      p,
      { external_id: `P-${rand()}`, sex, affected_status: affected, phenotypes: [], family_id: family, ...extra },
      'test',
    )
  const mother = await subject('female', 'unaffected')
  const father = await subject('male', 'unaffected')
  const proband = await subject('male', 'affected', {
    display_name: 'Doe, Jamie',
    birth_date: '2019-04-02',
    phenotypes: ['HP:0001250'],
    mother_id: mother.id,
    father_id: father.id,
  })
  const samples: Array<{ sample_id: string; role: SampleRole }> = []
  for (const [s, role] of [
    [proband, 'proband'],
    [mother, 'mother'],
    [father, 'father'],
  ] as const) {
    const external = `S-${rand()}`
    const fastq = ['R1', 'R2'].map((r) => `gs://${project.bucket_name}/fastq/${external}_${r}.fastq.gz`)
    const sample = await stores.samples.create(SYSTEM_ACTOR, p, { external_id: external, subject_id: s.id, type: 'blood', fastq }, 'test')
    samples.push({ sample_id: sample.id, role })
  }
  let order = await stores.orders.create(
    SYSTEM_ACTOR,
    p,
    {
      priority: 'routine',
      test_code: 'WGS-trio',
      indication: 'Epileptic encephalopathy',
      requester: { name: 'Dr. Ada Lovelace', organization: 'Children’s Hospital' },
      samples,
    },
    'test',
  )
  for (const to of ['signed', 'in_progress'] as const) {
    order = await stores.orders.transition(SYSTEM_ACTOR, p, order.id, { to }, () => true, 'test')
  }
  return order
}

/** Moves an order of `project` (through the clinical store, as its service would), e.g. to cancelled or entered_in_error. */
export async function moveOrder(kernel: KernelDeps, project: ProjectRecord, orderId: string, to: OrderStatus, reason = 'test') {
  const p = { id: project.id, org_id: project.org_id, bucket_name: project.bucket_name }
  return clinicalStores(kernel).orders.transition(SYSTEM_ACTOR, p, orderId, { to, reason }, () => true, 'test')
}

/** A tenant (makeWorld) with the report service on the same emulators, an in-memory variant cache, and an `api` that calls it as the owner unless told. */
export async function makeReportsWorld(env: Record<string, string | undefined> = {}) {
  const world = await makeWorld({ LOG_LEVEL: process.env.DEBUG_LOG ?? 'silent', ...env })
  const cache = new MemoryVariantCache()
  const kernel = createKernel(world.deps.config, 'reports', { firestore: world.deps.db.firestore })
  const deps: ReportsDeps = reportsDeps(kernel, cache)
  const app = createReportsApp(deps)
  const api = apiFor(app, world)

  /** An in-progress trio order with `n` variants in its cache. */
  async function orderWithVariants(n = 2, project: ProjectRecord = world.project) {
    const order = await makeTrioOrder(kernel, project)
    const variants = Array.from({ length: n }, (_, i) =>
      cachedVariant({ gene: ['SCN2A', 'KCNQ2', 'STXBP1', 'CDKL5'][i % 4], chrom: String(2 + i), pos: 1000 * (i + 1) }),
    )
    cache.put(project.id, order.id, ...variants)
    return { order, variants }
  }

  /** A draft report (201 expected) for a new order with variants, written by `token`. */
  async function draft(opts: { token?: string; n?: number; body?: Record<string, unknown> } = {}) {
    const { order, variants } = await orderWithVariants(opts.n ?? 2)
    const res = await api('POST', '/reports', { token: opts.token, body: { order_id: order.accession, ...opts.body } })
    if (res.status !== 201) throw new Error(`report: ${res.status} ${JSON.stringify(res.body)}`)
    return { order, variants, report: res.body as { id: string; status: string; [k: string]: any } }
  }

  return { ...world, kernel, deps, app, api, cache, orderWithVariants, draft }
}

/**
 * The browser sign-off's three steps through its store, without a browser, one at a time (the page,
 * the form's post, the return from the identity provider), in a session of the signer's own; the
 * re-authentication is recorded on the session as the admin service records a login's, by default
 * as a prompt=login, max_age=0 login would be.
 */
export async function storeSignoff(
  w: { deps: ReportsDeps; project: { id: string; org_id: string } },
  reportId: string,
  signer: { user: { id: string; email?: string; name: string } },
) {
  const { deps } = w
  const project = { id: w.project.id, org_id: w.project.org_id }
  const session = await deps.tokens.createSession({ userId: signer.user.id, ttlSeconds: 600, now: new Date(), effectiveRoles: {} })
  const key = deps.tokens.sessionKey(session.value)
  const user = { id: signer.user.id, name: signer.user.name, ...(signer.user.email ? { email: signer.user.email } : {}) }
  const ctx = { actor: { type: 'user' as const, id: user.id, email: user.email, auth_method: 'session' } }
  const signerOf = { user, sessionId: session.record.id, can: () => true }
  const report = async () => (await deps.reports.get(project.id, reportId))!
  let page: { token: string; snapshotId: string } | undefined
  return {
    async open() {
      const opened = await deps.signoffs.openPage(ctx, project, await report(), signerOf)
      if (opened.ok) page = { token: opened.token, snapshotId: opened.snapshot.id }
      return opened
    },
    async post() {
      if (!page) throw new Error('open the page first')
      return deps.signoffs.requestReauthentication(ctx, project, await report(), { ...page, meaning: 'approved' }, signerOf)
    },
    async reauthenticate(asked: { prompt?: 'login'; maxAge?: number; authTime?: Date; begunAt?: Date } = { prompt: 'login', maxAge: 0 }) {
      await deps.tokens.recordReauthentication(key, {
        authTime: asked.authTime ?? new Date(),
        begunAt: asked.begunAt ?? new Date(),
        now: new Date(),
        prompt: asked.prompt,
        maxAge: asked.maxAge,
      })
    },
    async complete() {
      const found = await deps.tokens.getSessionByKey(key, new Date())
      if (!found.ok) throw new Error(found.reason)
      return deps.signoffs.complete(ctx, project, await report(), signerOf, reauthStateOf(found.record))
    },
  }
}

/** Signs a report through the store's three steps (storeSignoff): for tests of what happens once a report is signed. */
export async function signThroughStore(
  w: { deps: ReportsDeps; project: { id: string; org_id: string } },
  reportId: string,
  signer: { user: { id: string; email?: string; name: string } },
) {
  const steps = await storeSignoff(w, reportId, signer)
  const page = await steps.open()
  if (!page.ok) throw new Error(`sign-off page refused: ${JSON.stringify(page.refusal)}`)
  const posted = await steps.post()
  if (!posted.ok) throw new Error(`sign-off form refused: ${JSON.stringify(posted.refusal)}`)
  await steps.reauthenticate()
  const done = await steps.complete()
  if (!done.ok) throw new Error(`sign-off refused: ${JSON.stringify(done.refusal)}`)
  return done
}
