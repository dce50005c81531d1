import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Storage } from '@google-cloud/storage'
import { GoogleAuth, Impersonated } from 'google-auth-library'
import { ConfigError, type Config } from './config.js'
import { GcsObjectStorage } from './storage/gcs.js'
import { LocalObjectStorage } from './storage/local.js'
import { parseGsUri, type ObjectStorage } from './storage/port.js'
import { IamSignBlobSigner, PrivateKeySigner } from './storage/signers.js'
import { DEFAULT_ORIGIN, type BlobSigner } from './storage/v4.js'

/**
 * The object-storage port and its two adapters (Cloud Storage; a folder per bucket in the local
 * suite), chosen by STORAGE_BACKEND, and the signing of V4 addresses to them.
 */
export * from './storage/port.js'
export { GcsObjectStorage, LocalObjectStorage }

function localRootOf(config: Pick<Config, 'storage'>): string {
  if (!config.storage.localRoot) throw new ConfigError('LOCAL_STORAGE_ROOT is not set: the local storage backend needs a folder')
  return resolve(config.storage.localRoot)
}

/**
 * The file on disk that stands for a gs:// URI in the local suite. The local Batch executor writes
 * a run's outputs to localPathFor(config, 'gs://<bucket>/runs/<run-id>/'), where the compute
 * service lists them.
 */
export function localPathFor(config: Pick<Config, 'storage'>, uri: string): string {
  const { bucket, path } = parseGsUri(uri)
  return new LocalObjectStorage(localRootOf(config)).fileOf(bucket, path)
}

/** Object storage as the platform's own runtime identity (the compute service's run outputs). */
export function createObjectStorage(config: Config): ObjectStorage {
  return config.storage.backend === 'local'
    ? new LocalObjectStorage(localRootOf(config))
    : new GcsObjectStorage(new Storage({ projectId: config.gcpProject }))
}

/** The lifetime of the access tokens minted for a project's service account (docs/tenancy.md, project credentials). */
export const IMPERSONATION_LIFETIME_SECONDS = 900
const STORAGE_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_write'

/**
 * A project's bucket as the project's own service account: in the cloud, the platform impersonates
 * it through IAM Credentials (short-lived access tokens for the bucket, signBlob for V4 addresses),
 * so no key of it exists anywhere. In the local suite, the bucket folders, and addresses signed
 * with the key the suite generated for its one local service account (LOCAL_SIGNING_ACCOUNT).
 */
export interface ProjectStorage {
  /** The bucket's objects, reached as `account`. */
  objects(account: string): Promise<ObjectStorage>
  /** The signature step of V4 addresses made as `account`. */
  signer(account: string): BlobSigner
  /** Where signed addresses point: Cloud Storage, or the local suite's storage server (STORAGE_PUBLIC_URL). */
  origin: string
}

export function createProjectStorage(config: Config, opts: { iamCredentialsUrl?: string } = {}): ProjectStorage {
  const origin = config.storage.publicUrl ?? DEFAULT_ORIGIN
  if (config.storage.backend === 'local') {
    const local = new LocalObjectStorage(localRootOf(config))
    let signer: PrivateKeySigner | undefined
    return {
      origin,
      objects: async () => local,
      signer: () => {
        const { signingKeyFile, signingAccount } = config.storage
        if (!signingKeyFile || !signingAccount) {
          throw new ConfigError('LOCAL_SIGNING_KEY_FILE and LOCAL_SIGNING_ACCOUNT must be set to sign addresses with the local storage backend')
        }
        signer ??= new PrivateKeySigner(signingAccount, readFileSync(signingKeyFile, 'utf8'))
        return signer
      },
    }
  }
  const auth = new GoogleAuth({ scopes: ['https://www.googleapis.com/auth/cloud-platform'] })
  const clients = new Map<string, Promise<ObjectStorage>>()
  return {
    origin,
    objects: (account) => {
      let client = clients.get(account)
      if (!client) {
        client = auth.getClient().then((sourceClient) => {
          const authClient = new Impersonated({
            sourceClient,
            targetPrincipal: account,
            lifetime: IMPERSONATION_LIFETIME_SECONDS,
            delegates: [],
            targetScopes: [STORAGE_SCOPE],
          })
          return new GcsObjectStorage(new Storage({ projectId: config.gcpProject, authClient }))
        })
        // A failure (no credentials at all) is not kept: the next request tries again.
        client.catch(() => clients.delete(account))
        clients.set(account, client)
      }
      return client
    },
    signer: (account) =>
      new IamSignBlobSigner(account, {
        endpoint: opts.iamCredentialsUrl,
        accessToken: async () => {
          const token = await auth.getAccessToken()
          if (!token) throw new Error('the platform has no access token for IAM Credentials')
          return token
        },
      }),
  }
}
