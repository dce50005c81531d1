import type { Server } from 'node:http'
import { createServer } from 'node:net'

/** Listening and closing the local suite's servers, in its own thread and in the functions' thread (functions-thread.ts). */

export class PortInUseError extends Error {
  override name = 'PortInUseError'
}

export async function ensurePortFree(port: number) {
  await new Promise<void>((resolvePort, reject) => {
    const srv = createServer()
    srv.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' ? new PortInUseError(`port ${port} on 127.0.0.1 is in use; stop what uses it or choose another --base-port`) : err,
      ),
    )
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolvePort()))
  })
}

export async function listen(server: Server, port: number, what: string) {
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new PortInUseError(`port ${port} for ${what} is in use; choose another --base-port`) : err),
    )
    server.listen(port, '127.0.0.1', () => resolveListen())
  })
}

export async function closeServer(server: Server) {
  await new Promise<void>((resolveClose) => {
    server.close(() => resolveClose())
    // Keep-alive connections from clients would otherwise hold close() open.
    server.closeAllConnections()
  })
}
