import { setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { fetchRange, md5Of } from './transfer.js'
import { toWire, type FromTransferThread, type ToTransferThread, type TransferThreadStart } from './transfer-thread.js'

/**
 * The transfer thread (cli/transfer-thread.ts): runs the ranges and hashes it is asked for,
 * several at once, and answers each one's progress, result or failure.
 */

/** Progress is told at most once per MiB a range moves: a message per 64 KiB chunk would cost more than the chunk. */
const PROGRESS_BYTES = 1024 * 1024

// Linux gives each thread its own nice value (setpriority on the calling thread's id); elsewhere it would lower the whole CLI's.
if ((workerData as TransferThreadStart).lowPriority && process.platform === 'linux') {
  try {
    setPriority(19)
  } catch {
    // not allowed here: the thread keeps the CLI's priority
  }
}

const port = parentPort!
const running = new Map<number, AbortController>()
const post = (m: FromTransferThread) => port.postMessage(m)

port.on('message', (m: ToTransferThread) => {
  if (m.type === 'abort') {
    running.get(m.id)?.abort()
    return
  }
  const controller = new AbortController()
  running.set(m.id, controller)
  let told = 0
  const onBytes = (bytes: number) => {
    if (bytes - told < PROGRESS_BYTES) return
    told = bytes
    post({ type: 'progress', id: m.id, bytes })
  }
  const work: Promise<unknown> =
    m.type === 'fetchRange'
      ? fetchRange(m.signed, m.fd, m.range, { headers: m.headers, signal: controller.signal, onBytes })
      : md5Of(m.file, controller.signal)
  work
    .then(
      (value) => post({ type: 'result', id: m.id, value }),
      (error: unknown) => post({ type: 'failed', id: m.id, error: toWire(error) }),
    )
    .finally(() => running.delete(m.id))
})
