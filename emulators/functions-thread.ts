import { Worker } from 'node:worker_threads'
import type { HostedFunctions } from './functions.js'
import type { SuiteLogOptions } from './log-output.js'
import { PortInUseError } from './servers.js'

/**
 * The orchestrator's functions of the local suite run in a worker thread: in the cloud each is a
 * Cloud Function instance of its own, and here the functions-framework (whose Node domains, once
 * one exists, put a hook on every promise of the thread) and the local executor's jobs stay out of
 * the services' thread. The thread hosts them exactly as hostFunctions does in process; the suite
 * talks to it in the messages below.
 */

/** What the thread is started with: the suite's environment (it loads its own configuration), the functions' ports and the log's options. */
export interface FunctionsStart {
  env: Record<string, string | undefined>
  ports: Record<string, number>
  /** Where the thread's log lines go: the same file and terminal as the services'. */
  log: SuiteLogOptions
}

export type ToFunctions = { type: 'reconcile'; body: Record<string, unknown> } | { type: 'stop' }

export type FromFunctions =
  | { type: 'ready'; urls: Record<string, string>; resumed: number; failed: number }
  | { type: 'failed'; error: string; portInUse: boolean }
  | { type: 'stopped'; error?: string }

export interface FunctionsThread extends HostedFunctions {
  /** Jobs a previous process left unfinished, as the executor's recovery found them. */
  recovered: { resumed: number; failed: number }
}

/**
 * The thread's entry: tsx's loader registered in the thread first (a worker does not inherit the
 * hooks of the thread that starts it), then functions-worker.ts.
 */
function bootstrap(entry: URL): string {
  const tsx = import.meta.resolve('tsx/esm/api')
  return `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}) })`
}

/** How long the thread may take to stop its servers and jobs before it is terminated. */
const STOP_TIMEOUT_MS = 30_000

export async function startFunctionsThread(start: FunctionsStart): Promise<FunctionsThread> {
  const worker = new Worker(bootstrap(new URL('./functions-worker.ts', import.meta.url)), { eval: true, workerData: start })
  const exited = new Promise<number>((resolveExit) => worker.once('exit', resolveExit))
  const next = () =>
    new Promise<FromFunctions>((resolveMessage, reject) => {
      const onMessage = (m: FromFunctions) => {
        cleanup()
        resolveMessage(m)
      }
      const onError = (err: Error) => {
        cleanup()
        reject(err)
      }
      const onExit = (code: number) => {
        cleanup()
        reject(new Error(`the functions' thread exited (code ${code}) before it answered`))
      }
      const cleanup = () => {
        worker.off('message', onMessage)
        worker.off('error', onError)
        worker.off('exit', onExit)
      }
      worker.on('message', onMessage)
      worker.once('error', onError)
      worker.once('exit', onExit)
    })

  const first = await next().catch(async (err: unknown) => {
    await worker.terminate()
    throw err
  })
  if (first.type !== 'ready') {
    await worker.terminate()
    if (first.type === 'failed') throw first.portInUse ? new PortInUseError(first.error) : new Error(first.error)
    throw new Error(`the functions' thread answered ${first.type} before it was ready`)
  }
  let stopping: Promise<void> | undefined
  return {
    urls: first.urls,
    recovered: { resumed: first.resumed, failed: first.failed },
    scheduleReconcile: (body = {}) => worker.postMessage({ type: 'reconcile', body } satisfies ToFunctions),
    stop: () =>
      (stopping ??= (async () => {
        const answer = next().catch(() => undefined)
        worker.postMessage({ type: 'stop' } satisfies ToFunctions)
        // A thread that does not answer in time is ended all the same.
        let late: Parameters<typeof clearTimeout>[0]
        const said = await Promise.race([answer, new Promise<undefined>((resolveLate) => (late = setTimeout(resolveLate, STOP_TIMEOUT_MS)))])
        clearTimeout(late)
        // Stopped: the servers closed and the jobs ended; what is left of the thread (its clients' sockets) goes with it.
        await worker.terminate()
        await exited
        if (said?.type === 'stopped' && said.error) throw new Error(`stopping the functions failed: ${said.error}`)
      })()),
  }
}
