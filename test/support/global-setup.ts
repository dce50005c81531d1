import type { TestProject } from 'vitest/node'
import { startFirestoreEmulator, startPubsubEmulator, type RunningProcess } from '../../emulators/processes.js'

/** The emulators start once per test run; every test file shares them, isolated by project id. */
let running: RunningProcess[] = []

export async function setup(project: TestProject) {
  // Nothing here runs on Google Cloud: the client libraries must not probe for a metadata server.
  process.env.METADATA_SERVER_DETECTION = 'none'
  running = await Promise.all([startFirestoreEmulator(), startPubsubEmulator()])
  const [firestore, pubsub] = running
  process.env.FIRESTORE_EMULATOR_HOST = firestore!.host
  process.env.PUBSUB_EMULATOR_HOST = pubsub!.host
  project.provide('firestoreHost', firestore!.host)
  project.provide('pubsubHost', pubsub!.host)
}

export async function teardown() {
  await Promise.all(running.map((p) => p.stop()))
}

declare module 'vitest' {
  export interface ProvidedContext {
    firestoreHost: string
    pubsubHost: string
  }
}
