import type { OutgoingHttpHeaders } from 'node:http'
import { Worker } from 'node:worker_threads'
import { AbortedError } from './client.js'
import { StorageHttpError, StorageUnreachableError } from './transfer.js'

/**
 * The thread the bytes of a download in parts move in, and where a large upload's file is hashed
 * with MD5 while it is sent (cli/transfer-worker.ts runs there): a V8 heap of its own, holding
 * little beyond the transfer's code, and a core of its own where there is one. In the CLI's thread, whose heap
 * holds every command, each 64 KiB a socket reads is a new buffer, and V8 answered a gigabyte of
 * them with a full garbage collection every 16 MiB (64 of them per GiB, a quarter of the CPU the
 * download took); in a thread of its own, none. The CLI's thread stays free for the progress
 * line and Ctrl-C while the parts' writes block theirs. One thread per process, started on first
 * use, kept only while it has work (it never holds the process open).
 */

interface Signed {
  url: string
  headers?: Record<string, string>
}

/** What the CLI's thread asks of the transfer thread. */
export type ToTransferThread =
  | {
      type: 'fetchRange'
      id: number
      signed: Signed
      fd: number
      range: { start: number; end: number }
      headers?: OutgoingHttpHeaders
    }
  | { type: 'md5Of'; id: number; file: string }
  | { type: 'abort'; id: number }

/** What the transfer thread answers: progress (bytes so far), the result, or the failure. */
export type FromTransferThread =
  { type: 'progress'; id: number; bytes: number } | { type: 'result'; id: number; value: unknown } | { type: 'failed'; id: number; error: WireError }

/** A call the transfer thread takes, without its id. */
type Call = ToTransferThread extends infer T ? (T extends { type: 'abort' } ? never : Omit<T, 'id'>) : never

/** An error as it crosses between threads (a structured clone keeps an Error's message, not its class or fields). */
export type WireError =
  | { kind: 'storage-http'; method: string; status: number; code: string; detail: string }
  | { kind: 'storage-unreachable'; origin: string; reason: string }
  | { kind: 'aborted' }
  | { kind: 'system'; message: string; code?: string; syscall?: string; errno?: number; path?: string }
  | { kind: 'other'; message: string }

export function toWire(error: unknown): WireError {
  if (error instanceof StorageHttpError)
    return { kind: 'storage-http', method: error.method, status: error.status, code: error.code, detail: error.detail }
  if (error instanceof StorageUnreachableError) return { kind: 'storage-unreachable', origin: error.origin, reason: error.reason }
  if (error instanceof AbortedError) return { kind: 'aborted' }
  const e = error as NodeJS.ErrnoException
  if (e instanceof Error && e.syscall) return { kind: 'system', message: e.message, code: e.code, syscall: e.syscall, errno: e.errno, path: e.path }
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) }
}

export function fromWire(wire: WireError): Error {
  switch (wire.kind) {
    case 'storage-http':
      return new StorageHttpError(wire.method, wire.status, wire.code, wire.detail)
    case 'storage-unreachable':
      return new StorageUnreachableError(wire.origin, wire.reason)
    case 'aborted':
      return new AbortedError()
    case 'system':
      return Object.assign(new Error(wire.message), { code: wire.code, syscall: wire.syscall, errno: wire.errno, path: wire.path })
    case 'other':
      return new Error(wire.message)
  }
}

/**
 * The worker's entry: tsx's loader registered in the thread first (a worker does not inherit the
 * hooks of the thread that starts it), then transfer-worker.ts.
 */
function bootstrap(entry: URL): string {
  const tsx = import.meta.resolve('tsx/esm/api')
  return `import(${JSON.stringify(tsx)}).then(({ register }) => { register({ tsconfig: false }); return import(${JSON.stringify(entry.href)}) })`
}

interface Pending {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
  onBytes?: (bytes: number) => void
}

class TransferThread {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private nextId = 1

  constructor(start: TransferThreadStart, onGone: () => void) {
    this.worker = new Worker(bootstrap(new URL('./transfer-worker.ts', import.meta.url)), { eval: true, workerData: start })
    this.worker.on('message', (m: FromTransferThread) => {
      const call = this.pending.get(m.id)
      if (!call) return
      if (m.type === 'progress') return call.onBytes?.(m.bytes)
      this.settled(m.id)
      if (m.type === 'result') call.resolve(m.value)
      else call.reject(fromWire(m.error))
    })
    const gone = (why: string) => {
      onGone()
      for (const [id, call] of this.pending) {
        this.settled(id)
        call.reject(new Error(`the transfer thread stopped: ${why}`))
      }
    }
    this.worker.on('error', (error) => gone(error.message))
    this.worker.on('exit', (code) => gone(`exit code ${code}`))
    // Idle, it never holds the process open (after the listeners: adding one holds the worker again).
    this.worker.unref()
  }

  private settled(id: number) {
    this.pending.delete(id)
    // Idle, the thread does not keep the process alive.
    if (this.pending.size === 0) this.worker.unref()
  }

  /** transfer.ts fetchRange, in the transfer thread; `fd` is an open file of this process (threads share them). */
  fetchRange(
    signed: Signed,
    fd: number,
    range: { start: number; end: number },
    opts: { headers?: OutgoingHttpHeaders; onBytes?: (bytes: number) => void; signal?: AbortSignal } = {},
  ): Promise<{ crc32c: number; bytes: number }> {
    return this.call({ type: 'fetchRange', signed, fd, range, headers: opts.headers }, opts) as Promise<{ crc32c: number; bytes: number }>
  }

  /** transfer.ts md5Of (the base64 MD5 of a file), in the transfer thread. */
  md5Of(file: string, signal?: AbortSignal): Promise<string> {
    return this.call({ type: 'md5Of', file }, { signal }) as Promise<string>
  }

  private call(call: Call, opts: { onBytes?: (bytes: number) => void; signal?: AbortSignal }): Promise<unknown> {
    if (opts.signal?.aborted) return Promise.reject(new AbortedError())
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const abort = () => this.worker.postMessage({ type: 'abort', id } satisfies ToTransferThread)
      opts.signal?.addEventListener('abort', abort, { once: true })
      const done = () => opts.signal?.removeEventListener('abort', abort)
      this.pending.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
        onBytes: opts.onBytes,
      })
      this.worker.ref()
      this.worker.postMessage({ ...call, id } as ToTransferThread)
    })
  }
}

/** How a transfer thread is started. */
export interface TransferThreadStart {
  /**
   * At the lowest scheduling priority (nice 19), where Linux gives each thread its own (elsewhere
   * the priority is the whole process's, and the thread keeps the CLI's): the hash thread takes
   * only the CPU that the transfer and the storage leave idle.
   */
  lowPriority: boolean
}

let thread: TransferThread | undefined
let hasher: TransferThread | undefined

/** The process's transfer thread, started now if it is not running (starting it early hides its start behind other requests). */
export function transferThread(): TransferThread {
  thread ??= new TransferThread({ lowPriority: false }, () => (thread = undefined))
  return thread
}

/**
 * The process's hash thread: a transfer thread at the lowest priority, where a large upload's MD5
 * is computed while the file is sent. On two cores the MD5 of a GiB (1.3 s of CPU) at normal
 * priority slowed the upload it checks by a fifth (docs/benchmarks.md); at the lowest it uses
 * what the send leaves idle, and on a machine with a core to spare it costs nothing either way.
 */
export function hashThread(): TransferThread {
  hasher ??= new TransferThread({ lowPriority: true }, () => (hasher = undefined))
  return hasher
}
