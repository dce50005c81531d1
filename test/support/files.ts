import { generateKeyPairSync } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startStorageServer } from '../../emulators/storage-server.js'
import { filesDeps } from '../../functions/files/deps.js'
import { createFilesApp } from '../../functions/files/service.js'
import { LocalObjectStorage, type ObjectStorage, type ProjectStorage } from '../../lib/storage.js'
import { PrivateKeySigner } from '../../lib/storage/signers.js'
import type { KernelDeps } from '../../lib/kernel.js'

export const LOCAL_SIGNING_ACCOUNT = 'storage-signer@platform-test.iam.gserviceaccount.com'

/**
 * The file service of a test tenant as the local suite runs it: the bucket folders (a temp folder,
 * or `storage` when the test shares one with the compute service), a key pair made for the test,
 * and the local storage server on a free port checking the addresses it signs. `serverClock`
 * moves the storage server's time (to use an address after it expired); `objects` can wrap the
 * storage the file service sees (to fail an operation half-way).
 */
export async function localFiles(
  world: { deps: KernelDeps },
  opts: { storage?: LocalObjectStorage; objects?: (s: ObjectStorage) => ObjectStorage } = {},
) {
  const root = opts.storage ? undefined : await mkdtemp(join(tmpdir(), 'files-test-'))
  const storage = opts.storage ?? new LocalObjectStorage(join(root!, 'buckets'))
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const signer = new PrivateKeySigner(LOCAL_SIGNING_ACCOUNT, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())
  let skewMs = 0
  const server = await startStorageServer({
    storage,
    keys: { [LOCAL_SIGNING_ACCOUNT]: publicKey },
    clock: { now: () => new Date(Date.now() + skewMs) },
  })
  const projectStorage: ProjectStorage = {
    origin: server.url,
    objects: async () => (opts.objects ? opts.objects(storage) : storage),
    signer: () => signer,
  }
  const deps = filesDeps(world.deps, { storage: projectStorage })
  return {
    deps,
    app: createFilesApp(deps),
    storage,
    storageUrl: server.url,
    /** Moves the storage server's clock ahead of the file service's. */
    serverClock: (offsetMs: number) => (skewMs = offsetMs),
    async close() {
      await server.stop()
      if (root) await rm(root, { recursive: true, force: true })
    },
  }
}
