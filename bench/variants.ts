import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGzip } from 'node:zlib'
import { startFirestoreEmulator, type RunningProcess } from '../emulators/processes.js'
import { adminDeps } from '../functions/admin/deps.js'
import { clinicalDeps } from '../functions/clinical/deps.js'
import { createClinicalApp } from '../functions/clinical/service.js'
import { variantCacheDeps } from '../functions/variant-cache/deps.js'
import { createVariantCacheApp } from '../functions/variant-cache/service.js'
import { SYSTEM_ACTOR } from '../lib/audit.js'
import { newAuditKeyEntry } from '../lib/audit-keys.js'
import { loadConfig } from '../lib/config.js'
import { newId } from '../lib/ids.js'
import { createKernel } from '../lib/kernel.js'
import { LocalObjectStorage } from '../lib/storage.js'
import { seedOrgAndProject, seedToken, seedUser } from '../domain/tenancy/seed.js'
import { trioVcfStream } from '../domain/variants/synthetic.js'

/**
 * The variant benchmark (npm run bench:variants, and part of npm run bench). Prints a table and JSON:
 *  (a) a synthetic annotated trio VCF (bgzip-free gzip) of 1,000, 10,000 and BENCH_VARIANT_RECORDS
 *      (default 100,000) records ingested into a signed trio order's cache on the local suite's
 *      backends (the Firestore emulator, the local bucket folders), every step in a process of its
 *      own as the local suite runs them: records per second from request to ready, and the
 *      ingesting process's peak resident memory (VCF read as a stream: the same for 10k and 100k);
 *  (b) the first page of GET /orders/{id}/variants?gene=BRCA1 in the 1,000-record order and in the
 *      big one, p50 over BENCH_QUERIES (default 15) requests; the small one alone in the collection
 *      too, because the emulator scans the whole collection for every query.
 * BENCH_HEAP_MIB caps the ingesting process's V8 heap (as a function's memory setting would);
 * without it Node lets the heap grow lazily, and the peak says more about GC than about streaming.
 * Everything runs on 127.0.0.1; it stops every process it started and exits by itself.
 */
const BIG = Number(process.env.BENCH_VARIANT_RECORDS ?? 100_000)
const SIZES = [...new Set([1_000, 10_000, BIG])]
const QUERIES = Number(process.env.BENCH_QUERIES ?? 15)
const GENE = 'BRCA1'
/** The ingesting process's V8 heap limit (MiB), as a function's memory setting would impose one; 0 for Node's default. */
const HEAP_MIB = Number(process.env.BENCH_HEAP_MIB ?? 128)
const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-')
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

function child(env: Record<string, string>): Promise<{ status: string; peak_rss_mib: number }> {
  return new Promise((resolve, reject) => {
    const tsx = join(process.cwd(), 'node_modules/.bin/tsx')
    const p = spawn(tsx, [join(process.cwd(), 'bench/variants-child.ts')], {
      // Nothing here runs on Google Cloud: the client library must not probe for a metadata server (and warn that it found none).
      env: { ...process.env, METADATA_SERVER_DETECTION: 'none', ...env, ...(HEAP_MIB ? { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    p.on('error', reject)
    p.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`ingestion process exited with ${code}`)),
    )
  })
}

async function bench(firestore: RunningProcess, dir: string) {
  const env = {
    GOOGLE_CLOUD_PROJECT: `bench-${newId().slice(0, 8)}`,
    FIRESTORE_EMULATOR_HOST: firestore.host,
    STORAGE_BACKEND: 'local',
    LOCAL_STORAGE_ROOT: join(dir, 'buckets'),
    INGESTION_RUNNER: 'local',
    // The ingestion processes record with the same keys (they inherit this environment).
    AUDIT_HMAC_KEYS: newAuditKeyEntry('bench'),
    LOG_LEVEL: 'warn',
  }
  const config = loadConfig(env)
  const kernel = createKernel(config, 'bench')
  try {
    const admin = adminDeps(kernel)
    const owner = await seedUser(admin, { email: 'bench@example.org', platformAdmin: true })
    const { project } = await seedOrgAndProject(admin, {
      owner,
      orgName: 'Bench Lab',
      orgSlug: 'bench-lab',
      projectName: 'Variants',
      projectSlug: 'variants',
      bucketName: 'bench-variants',
      serviceAccountEmail: 'runner@bench.iam.gserviceaccount.com',
    })
    const token = await seedToken(admin, owner, 'bench')
    const storage = new LocalObjectStorage(env.LOCAL_STORAGE_ROOT)
    const clinical = createClinicalApp(clinicalDeps(kernel))
    const cacheDeps = variantCacheDeps(kernel, { storage })
    const cache = createVariantCacheApp(cacheDeps)
    const headers = { authorization: `Bearer ${token}`, 'x-project-id': project.id, 'content-type': 'application/json' }
    const post = async (path: string, body: unknown) => {
      const res = await clinical.request(`/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
      return (await res.json()) as { id: string; external_id: string; accession: string }
    }
    async function trioOrder(tag: string) {
      const person = async (role: string, sex: string, extra: Record<string, unknown> = {}) => {
        const s = await post('/subjects', {
          external_id: `P-${tag}-${role}`,
          sex,
          affected_status: role === 'proband' ? 'affected' : 'unaffected',
          ...extra,
        })
        const fastq = ['R1', 'R2'].map((r) => `gs://${project.bucket_name}/fastq/${tag}-${role}_${r}.fastq.gz`)
        return { subject: s, sample: await post('/samples', { external_id: `S-${tag}-${role}`, subject_id: s.id, type: 'blood', fastq }) }
      }
      const mother = await person('mother', 'female')
      const father = await person('father', 'male')
      const proband = await person('proband', 'male', { mother_id: mother.subject.id, father_id: father.subject.id })
      const order = await post('/orders', {
        test_code: 'WGS-trio',
        samples: [
          { sample_id: proband.sample.id, role: 'proband' },
          { sample_id: mother.sample.id, role: 'mother' },
          { sample_id: father.sample.id, role: 'father' },
        ],
      })
      await post(`/orders/${order.id}/transition`, { to: 'signed' })
      return { order, names: { proband: proband.sample.external_id, mother: mother.sample.external_id, father: father.sample.external_id } }
    }

    async function firstPage(i: { variants: number; order_id: string }) {
      const url = `/api/v1/orders/${i.order_id}/variants?gene=${GENE}`
      const times: number[] = []
      let items = 0
      for (let q = 0; q <= QUERIES; q++) {
        const t0 = performance.now()
        const res = await cache.request(url, { headers })
        const body = (await res.json()) as unknown[]
        if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`)
        if (q > 0) times.push(performance.now() - t0)
        items = body.length
      }
      return { variants: i.variants, gene: GENE, page_items: items, p50_ms: p50(times) }
    }

    const ingestions = []
    const early: Array<Awaited<ReturnType<typeof firstPage>> & { when: string }> = []
    for (const records of SIZES) {
      const { order, names } = await trioOrder(`n${records}`)
      const path = `vcf/trio-${records}.vcf.gz`
      await storage.upload(project.bucket_name, path, trioVcfStream({ samples: names, records, seed: records }).pipe(createGzip()))
      const { ingestion } = await cacheDeps.ingestions.request(SYSTEM_ACTOR, {
        project: { id: project.id, org_id: project.org_id },
        order,
        source_uri: `gs://${project.bucket_name}/${path}`,
        trigger: 'request',
        requested_by: owner.id,
      })
      process.stdout.write(`ingesting ${records} records…\n`)
      const t0 = performance.now()
      const result = await child({ ...env, INGESTION_ID: ingestion.id })
      const wall = (performance.now() - t0) / 1000
      const done = (await cacheDeps.ingestions.get(ingestion.id))!
      if (done.status !== 'ready') throw new Error(`ingestion of ${records} records ended ${done.status}: ${JSON.stringify(done.error)}`)
      const toReady = (done.finished!.toMillis() - done.created.toMillis()) / 1000
      ingestions.push({
        records,
        variants: done.variant_count!,
        seconds_to_ready: toReady,
        records_per_second: records / toReady,
        process_seconds: wall,
        peak_rss_mib: result.peak_rss_mib,
        order_id: order.id,
      })
      if (records === SIZES[0]) early.push({ ...(await firstPage(ingestions[0]!)), when: 'alone in the collection' })
    }

    // The Firestore emulator (unlike Cloud Firestore, which reads an index) scans the whole
    // collection for a query: the small cache is measured alone first, then beside the big one.
    const latency = []
    latency.push(early[0]!)
    latency.push({ ...(await firstPage(ingestions.at(-1)!)), when: 'all caches written' })
    latency.push({ ...(await firstPage(ingestions[0]!)), when: 'all caches written' })
    return { ingestions, latency }
  } finally {
    await kernel.db.firestore.terminate()
  }
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-variants-'))
  let firestore: RunningProcess | undefined
  try {
    process.stdout.write('starting the Firestore emulator…\n')
    firestore = await startFirestoreEmulator()
    const { ingestions, latency } = await bench(firestore, dir)
    process.stdout.write('\n(a) ingestion of a trio VCF into an order cache (every step in one process of its own)\n')
    process.stdout.write('records  variants  s to ready  records/s  ingesting process peak RSS\n')
    for (const r of ingestions) {
      process.stdout.write(
        `${String(r.records).padStart(7)}  ${String(r.variants).padStart(8)}  ${fmt(r.seconds_to_ready).padStart(10)}  ${fmt(r.records_per_second, 0).padStart(9)}  ${`${fmt(r.peak_rss_mib, 0)} MiB`.padStart(26)}\n`,
      )
    }
    process.stdout.write(`\n(b) GET /orders/{id}/variants?gene=${GENE}, first page, p50 over ${QUERIES} requests\n`)
    process.stdout.write('variants in the cache  page items  p50 ms  measured\n')
    for (const l of latency)
      process.stdout.write(`${String(l.variants).padStart(21)}  ${String(l.page_items).padStart(10)}  ${fmt(l.p50_ms).padStart(6)}  ${l.when}\n`)
    // The issue's comparison: the big cache against the small one, on the same collection.
    const big = latency[1]!.p50_ms / latency[2]!.p50_ms
    process.stdout.write(`big/small first-page latency, same collection: ${fmt(big, 2)}\n`)
    process.stdout.write(`\n${JSON.stringify({ variants: { ingestions, latency, latency_ratio: big } }, null, 2)}\n`)
  } finally {
    await firestore?.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`the variant benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  },
)
