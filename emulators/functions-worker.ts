import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { PubSub } from '@google-cloud/pubsub'
import { createBatchBackend, LocalBatchExecutor } from '../lib/batch/index.js'
import { loadConfig } from '../lib/config.js'
import { createKernel } from '../lib/kernel.js'
import { orchestratorDeps } from '../orchestrator/deps.js'
import { registerOrchestrator } from '../orchestrator/functions.js'
import { hostFunctions } from './functions.js'
import { suiteLogOutput } from './log-output.js'
import { closeServer, listen, PortInUseError } from './servers.js'
import type { FromFunctions, FunctionsStart, ToFunctions } from './functions-thread.js'

/**
 * The orchestrator's functions of the local suite, in a thread of their own (functions-thread.ts):
 * the functions-framework, its Node domains and the local executor's jobs live here; the services
 * of the suite's main thread share none of it, as in the cloud they share no instance with them.
 */

if (!parentPort) throw new Error('functions-worker.ts runs as a worker thread (functions-thread.ts starts it)')
yieldToServices()
const port = parentPort
const post = (message: FromFunctions) => port.postMessage(message)
const start = workerData as FunctionsStart

const config = loadConfig(start.env)
// A worker's standard output is not a terminal (the main thread relays it): the main thread says whether its own is.
const logs = suiteLogOutput(start.log)
const kernel = createKernel(config, 'orchestrator', { logSink: logs.sink })
const pubsub = new PubSub({ projectId: config.gcpProject, apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true })
// Jobs of the local executor run in the thread that created them: this one, where the runRequested function makes them.
const executor = createBatchBackend(config, { log: kernel.log, clock: kernel.clock, pubsub })

async function main() {
  registerOrchestrator(orchestratorDeps(kernel))
  const functions = await hostFunctions({ config, pubsub, ports: start.ports, log: kernel.log, listen, close: closeServer })
  let stopping: Promise<void> | undefined
  port.on('message', (message: ToFunctions) => {
    if (message.type === 'reconcile') functions.scheduleReconcile(message.body)
    if (message.type === 'stop') {
      stopping ??= (async () => {
        try {
          await functions.stop()
          if (executor instanceof LocalBatchExecutor) await executor.shutdown()
          await pubsub.close()
          await kernel.db.firestore.terminate()
        } finally {
          // Before the answer: the main thread ends this thread once it has it, pending lines and all.
          logs.close()
        }
      })()
      stopping.then(
        () => post({ type: 'stopped' }),
        (err: unknown) => post({ type: 'stopped', error: err instanceof Error ? err.message : String(err) }),
      )
    }
  })
  // Jobs a previous process left unfinished (it crashed, or was stopped with jobs running): those not yet
  // started start now, those that were running fail, and their runs follow through the usual events.
  const recovered = executor instanceof LocalBatchExecutor ? await executor.recover() : { resumed: [], failed: [] }
  post({ type: 'ready', urls: functions.urls, resumed: recovered.resumed.length, failed: recovered.failed.length })
}

main().catch(async (err: unknown) => {
  post({ type: 'failed', error: err instanceof Error ? err.message : String(err), portInUse: err instanceof PortInUseError })
  await Promise.allSettled([pubsub.close(), kernel.db.firestore.terminate()])
  logs.close()
})

/**
 * In the cloud the orchestrator's functions and the Batch jobs never take CPU from a service's
 * instance; here they share one machine. This thread, and the job processes it starts (a child
 * inherits the nice value of the thread that forks it), run at a lower CPU priority, so that a
 * service keeps answering at once under load while the runs it accepted are worked through after.
 * Linux names the thread at /proc/thread-self and sets priorities per thread; elsewhere nothing changes.
 */
function yieldToServices() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10)
  } catch {
    // Not Linux, or not allowed: the thread keeps the process's priority.
  }
}
