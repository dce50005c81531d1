import { PubSub } from '@google-cloud/pubsub'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Logger } from '../log.js'
import { localPathFor } from '../storage.js'
import { createCloudBatchBackend } from './cloud.js'
import { createCloudLogReader } from './cloud-logs.js'
import { LocalBatchExecutor } from './local.js'
import { LocalLogReader } from './local-logs.js'
import type { JobLogReader } from './logs.js'
import type { BatchBackend } from './port.js'

export * from './port.js'
export * from './logs.js'
export { LocalBatchExecutor } from './local.js'

/** What the host lends a locally executed job: enough to find programs, nothing of the platform's own settings. */
const HOST_VARIABLES = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TZ', 'JAVA_HOME', 'SHELL']

export function hostEnvironment(env: Record<string, string | undefined> = process.env): Record<string, string> {
  return Object.fromEntries(HOST_VARIABLES.flatMap((k) => (env[k] ? [[k, env[k]!]] : [])))
}

/** The Batch backend config.batch.backend names: Cloud Batch, or the local executor of the local suite. */
export function createBatchBackend(config: Config, deps: { log: Logger; clock: Clock; pubsub?: PubSub }): BatchBackend {
  if (config.batch.backend === 'cloud') return createCloudBatchBackend(deps.log)
  const workRoot = config.batch.localWorkRoot
  if (!workRoot) throw new Error('LOCAL_WORK_ROOT is required when BATCH_BACKEND=local')
  const pubsub =
    deps.pubsub ??
    new PubSub({ projectId: config.gcpProject, ...(config.pubsubEmulatorHost ? { apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true } : {}) })
  return new LocalBatchExecutor(
    { workRoot, bucketDir: (bucket) => localPathFor(config, `gs://${bucket}/`), region: config.batch.region, hostEnv: hostEnvironment() },
    { pubsub, log: deps.log, clock: deps.clock },
  )
}

/** Where jobs' logs are read: Cloud Logging for Cloud Batch, the local executor's work root for the local suite. */
export function createLogReader(config: Config): JobLogReader {
  if (config.batch.backend === 'cloud') return createCloudLogReader(config.gcpProject)
  const workRoot = config.batch.localWorkRoot
  if (!workRoot) throw new Error('LOCAL_WORK_ROOT is required when BATCH_BACKEND=local')
  return new LocalLogReader(workRoot)
}
