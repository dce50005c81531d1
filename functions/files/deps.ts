import type { AppEnv } from '../../lib/http.js'
import type { KernelDeps } from '../../lib/kernel.js'
import { createProjectStorage, type ProjectStorage } from '../../lib/storage.js'

export interface FilesDeps extends KernelDeps {
  /** Each project's bucket as its service account, and the signing of V4 addresses as that account. */
  storage: ProjectStorage
}

export type FilesEnv = AppEnv<FilesDeps>

/** Cloud Storage through impersonation, or the local suite's folders and key, from the configuration, unless given. */
export function filesDeps(kernel: KernelDeps, adapters: Partial<Pick<FilesDeps, 'storage'>> = {}): FilesDeps {
  return { ...kernel, storage: adapters.storage ?? createProjectStorage(kernel.config) }
}
