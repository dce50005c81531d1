import type { OutgoingHttpHeaders } from 'node:http'
import { Worker } from 'node:worker_threads'
import { AbortedError } from './client.js'
import { StorageHttpError, StorageUnreachableError } from './transfer.js'

/**
 * The thread the bytes of a download in parts move in (cli/transfer-worker.ts runs there): a V8
 * heap of its own, holding little beyond the transfer's code. In the CLI's thread, whose heap
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
  | { type: 'abort'; id: number }

/** What the transfer thread answers: progress (bytes so far), the result, or the failure. */
export type FromTransferThread =
  | { type: 'progress'; id: number; bytes: number }
  | { type: 'result'; id: number; value: { crc32c: number; bytes: number } }
  | { type: 'failed'; id: number; error: WireError }

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
  resolve: (value: { crc32c: number; bytes: number }) => void
  reject: (error: Error) => void
  onBytes?: (bytes: number) => void
}

class TransferThread {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private nextId = 1

  constructor(onGone: () => void) {
    this.worker = new Worker(bootstrap(new URL('./transfer-worker.ts', import.meta.url)), { eval: true })
    this.worker.unref()
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
      this.worker.postMessage({ type: 'fetchRange', id, signed, fd, range, headers: opts.headers } satisfies ToTransferThread)
    })
  }
}

let thread: TransferThread | undefined

/** The process's transfer thread, started now if it is not running (starting it early hides its start behind other requests). */
export function transferThread(): TransferThread {
  thread ??= new TransferThread(() => (thread = undefined))
  return thread
}
