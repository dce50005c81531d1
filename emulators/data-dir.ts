import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { newAuditKeyEntry } from '../lib/audit-keys.js'

/**
 * The local suite's data folder:
 *   suite.json     what a client needs (addresses, project, token), there only while the suite is up
 *   state.json     values generated once and kept across restarts (secrets, the audit key ring, the seeded token)
 *   signing-key.pem the local service account's RSA key, with which storage addresses are signed
 *   suite.pid      the running suite's pid, while one runs
 *   emulators.json the emulators' pids and hosts while they run: after a crash, the next start takes them over
 *   firestore/     the Firestore emulator's export, imported on the next start (firestore.old/ while one is swapped in)
 *   pubsub/        the Pub/Sub emulator's data
 *   work/          the local Batch executor's working folders
 *   buckets/       one folder per project bucket (local object storage)
 *   logs/          the emulators' output (firestore.log, pubsub.log)
 */
export function layout(dataDir: string) {
  return {
    suiteFile: join(dataDir, 'suite.json'),
    stateFile: join(dataDir, 'state.json'),
    signingKey: join(dataDir, 'signing-key.pem'),
    pidFile: join(dataDir, 'suite.pid'),
    emulatorsFile: join(dataDir, 'emulators.json'),
    firestoreExport: join(dataDir, 'firestore'),
    pubsub: join(dataDir, 'pubsub'),
    work: join(dataDir, 'work'),
    buckets: join(dataDir, 'buckets'),
    logs: join(dataDir, 'logs'),
  }
}
export type Layout = ReturnType<typeof layout>

/** Machine-readable description of a running suite, written to <data-dir>/suite.json. */
export interface SuiteFile {
  /** Base address of every HTTP service, by registry name (e.g. admin). */
  services: Record<string, string>
  /** Local address of each orchestrator function (runRequested, jobStateChanged, reconcile), when hosted. */
  functions: Record<string, string>
  /** The local storage server, where the file service's signed addresses point. */
  storage_url: string
  oidc_issuer: string
  oidc_client_id: string
  project_id: string
  org_id: string
  bucket_name: string
  token: string
  user: { email: string; password: string }
  /** A second person at the provider, a reviewer of the Demo project: who signs what the first one writes. */
  reviewer: { email: string; password: string; token: string }
  firestore_emulator_host: string
  pubsub_emulator_host: string
  gcp_project: string
  data_dir: string
  started_at: string
  pid: number
}

export interface SuiteState {
  oidc_client_secret: string
  /** The secret of the CLI's own client at the local provider (made on the first start that knows of it; older data folders gain one). */
  oidc_cli_client_secret: string
  admin_password: string
  /** Made on the first start that knows of the reviewer (older data folders gain one). */
  reviewer_password: string
  /**
   * The audit log's key ring (AUDIT_HMAC_KEYS) and the key new events use (AUDIT_HMAC_ACTIVE_KEY),
   * made on the first start that keys events (older data folders gain one) and kept, so that the
   * events of earlier starts still verify. Rotate by adding an entry and naming it active (docs/audit.md).
   */
  audit_hmac_keys: string
  audit_hmac_active_key: string
  token?: string
  /** The reviewer's personal access token (made on the first start that knows of it). */
  reviewer_token?: string
}

/** Removes what a previous start left, but only the entries the suite itself writes: --data-dir may point anywhere. */
export async function cleanDataDir(l: Layout) {
  for (const path of [
    l.suiteFile,
    l.stateFile,
    l.signingKey,
    l.emulatorsFile,
    l.firestoreExport,
    `${l.firestoreExport}.old`,
    `${l.firestoreExport}.next`,
    l.pubsub,
    l.work,
    l.buckets,
    l.logs,
  ]) {
    await rm(path, { recursive: true, force: true })
  }
}

/** Readable enough to type into a login form, random enough for a machine others may reach. */
const password = () => `local-${randomBytes(9).toString('base64url')}`

const LOCAL_AUDIT_KEY = 'local-1'
const firstAuditKey = () => ({ audit_hmac_keys: newAuditKeyEntry(LOCAL_AUDIT_KEY), audit_hmac_active_key: LOCAL_AUDIT_KEY })

export async function loadState(l: Layout): Promise<{ state: SuiteState; created: boolean }> {
  if (existsSync(l.stateFile)) {
    const stored = JSON.parse(await readFile(l.stateFile, 'utf8')) as Partial<SuiteState>
    if (stored.oidc_client_secret && stored.admin_password) {
      // What a data folder made before these values existed lacks is made now, once.
      const missing = {
        ...(stored.reviewer_password ? {} : { reviewer_password: password() }),
        ...(stored.oidc_cli_client_secret ? {} : { oidc_cli_client_secret: randomBytes(24).toString('base64url') }),
        ...(stored.audit_hmac_keys ? {} : firstAuditKey()),
      }
      const state = { ...stored, ...missing } as SuiteState
      if (Object.keys(missing).length) await saveState(l, state)
      return { state, created: false }
    }
  }
  const state: SuiteState = {
    oidc_client_secret: randomBytes(24).toString('base64url'),
    oidc_cli_client_secret: randomBytes(24).toString('base64url'),
    admin_password: password(),
    reviewer_password: password(),
    ...firstAuditKey(),
  }
  await saveState(l, state)
  return { state, created: true }
}

/** The e-mail of the local suite's one service account, as which every local storage address is signed. */
export const LOCAL_SIGNING_ACCOUNT = 'storage-signer@platform-local.iam.gserviceaccount.com'

/**
 * The local service account's RSA key, made on the first start and kept (mode 0600), so that
 * addresses handed out before a restart stay valid: the suite's stand-in for a key that, in the
 * cloud, only Google holds (IAM Credentials signBlob).
 */
export async function ensureSigningKey(l: Layout): Promise<{ file: string; publicKey: KeyObject }> {
  if (!existsSync(l.signingKey)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    await writeFile(l.signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
  }
  return { file: l.signingKey, publicKey: createPublicKey(createPrivateKey(await readFile(l.signingKey, 'utf8'))) }
}

export async function saveState(l: Layout, state: SuiteState) {
  await writeFile(l.stateFile, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 })
}

export async function writeSuiteFile(l: Layout, suite: SuiteFile) {
  const tmp = `${l.suiteFile}.tmp`
  await writeFile(tmp, JSON.stringify(suite, null, 2) + '\n', { mode: 0o600 })
  // Readers poll for this file: a rename makes it appear whole.
  await rename(tmp, l.suiteFile)
}

/** Scripts wait for suite.json to know the suite is up: it goes first on stop, and a start removes one a crashed run left. */
export async function removeSuiteFile(l: Layout) {
  await rm(l.suiteFile, { force: true })
}

export function readSuiteFile(l: Layout): SuiteFile | undefined {
  try {
    return JSON.parse(readFileSync(l.suiteFile, 'utf8')) as SuiteFile
  } catch {
    return undefined
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export class AlreadyRunningError extends Error {
  override name = 'AlreadyRunningError'
}

/**
 * Claims the data folder for this process. The pid file is created exclusively, so two starts
 * racing each other cannot both win; a pid file or suite.json left by a process that is gone is stale.
 */
export async function acquireLock(l: Layout, dataDir: string): Promise<() => Promise<void>> {
  const refuse = (pid: number, since?: string) => {
    throw new AlreadyRunningError(
      `the local suite is already running on ${dataDir} (pid ${pid}${since ? `, started ${since}` : ''}); ` +
        `stop it with Ctrl-C in its terminal or \`kill -INT ${pid}\`, or start another one with a different --data-dir and --base-port`,
    )
  }
  const suite = readSuiteFile(l)
  if (suite && suite.pid !== process.pid && alive(suite.pid)) refuse(suite.pid, suite.started_at)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(l.pidFile, String(process.pid), { flag: 'wx' })
      return async () => {
        await rm(l.pidFile, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = Number(readFileSync(l.pidFile, 'utf8').trim())
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) refuse(pid)
      await rm(l.pidFile, { force: true })
    }
  }
  throw new AlreadyRunningError(`another local suite claimed ${dataDir} while this one was starting`)
}

/**
 * Where the Firestore emulator finds the last export, for --import-data; undefined on a first start.
 * A crash in the middle of swapping a new export in leaves the previous one as firestore.old/.
 */
export function firestoreImportPath(l: Layout): string | undefined {
  for (const dir of [l.firestoreExport, `${l.firestoreExport}.old`]) {
    const metadata = join(dir, 'firestore_export', 'firestore_export.overall_export_metadata')
    if (existsSync(metadata)) return metadata
  }
  return undefined
}

/**
 * Exports the emulator's data for `gcpProject` through its HTTP endpoint. The emulator's own
 * --export-on-exit does not export when the JVM gets SIGTERM, so the suite exports itself. The new
 * export is written beside the old one and swapped in, so a failed export never loses the last good one.
 */
export async function exportFirestore(l: Layout, firestoreHost: string, gcpProject: string, timeoutMs = 120_000) {
  const next = `${l.firestoreExport}.next`
  const old = `${l.firestoreExport}.old`
  await rm(next, { recursive: true, force: true })
  await mkdir(next, { recursive: true })
  const res = await fetch(`http://${firestoreHost}/emulator/v1/projects/${gcpProject}:export`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ database: `projects/${gcpProject}/databases/(default)`, export_directory: next, export_name: 'firestore_export' }),
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (!res.ok) throw new Error(`the Firestore emulator refused the export (${res.status}): ${await res.text()}`)
  await rm(old, { recursive: true, force: true })
  if (existsSync(l.firestoreExport)) await rename(l.firestoreExport, old)
  await rename(next, l.firestoreExport)
  await rm(old, { recursive: true, force: true })
}
