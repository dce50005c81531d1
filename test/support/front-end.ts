import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

/**
 * A stand-in for Google's front end of the shared Cloud Functions host,
 * `https://REGION-PROJECT.cloudfunctions.net/<function>/…`: one HTTPS server, with a certificate
 * made for that very host name, that routes `/<function>/<rest>` to the function's own process at
 * `/<rest>` (the function name stripped, as Cloud Functions does), appends the caller's address to
 * X-Forwarded-For, sets X-Forwarded-Proto: https, and keeps the Host the caller used. It reaches the
 * functions from its own address, FRONT_END_ADDRESS, as Google's front end reaches an instance from
 * an address of Google's: a function that read the socket's peer would see the front end, not the
 * client.
 *
 * Browsers reach it under the real host name (Chromium's --host-resolver-rules maps it here); the
 * test's own requests go through `publicFetch`, which does the same. The same routes are served over
 * plain HTTP too (`plainUrl`), for the one caller that cannot be given the test's certificate: the
 * Pub/Sub emulator, when a push endpoint is on this host.
 */

export const FRONT_END_ADDRESS = '127.0.0.2'

/** Hop-by-hop headers (RFC 9110 §7.6.1): a proxy does not pass them on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer'])

export interface FrontEnd {
  /** `https://<host>`, the public base address of every function. */
  publicUrl: string
  host: string
  /** Where the HTTPS server listens on 127.0.0.1 (Chromium's --host-resolver-rules target). */
  port: number
  /** The same routes over plain HTTP, `http://127.0.0.1:<port>`. */
  plainUrl: string
  /** The certificate (PEM) the HTTPS server presents, for clients to trust. */
  cert: string
  /** Routes `/<name>/…` to the process listening on 127.0.0.1:`port`. */
  route(name: string, port: number): void
  stop(): Promise<void>
}

/** A self-signed certificate for `host` (openssl), its key and certificate as PEM. */
function selfSigned(host: string, dir: string): { key: string; cert: string } {
  const keyFile = join(dir, 'front-end.key')
  const certFile = join(dir, 'front-end.crt')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=DNS:${host}`,
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  )
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') }
}

const listenOn = (server: Server) =>
  new Promise<number>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
  })

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })

export async function startFrontEnd(opts: { host: string; dir: string }): Promise<FrontEnd> {
  const routes = new Map<string, number>()
  const { key, cert } = selfSigned(opts.host, opts.dir)

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/([^/?#]+)(.*)$/.exec(req.url ?? '/')
    const port = m ? routes.get(m[1]!) : undefined
    if (!m || port === undefined) {
      res.writeHead(404, { 'content-type': 'text/html; charset=UTF-8' }).end('<h1>Error: Page not found</h1>')
      return
    }
    const rest = m[2] || '/'
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value
    headers['x-forwarded-for'] = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ')
    headers['x-forwarded-proto'] = 'https'
    const upstream = httpRequest(
      { host: '127.0.0.1', port, localAddress: FRONT_END_ADDRESS, method: req.method, path: rest.startsWith('/') ? rest : `/${rest}`, headers },
      (answer) => {
        const raw: string[] = []
        for (let i = 0; i < answer.rawHeaders.length; i += 2) {
          if (!HOP_BY_HOP.has(answer.rawHeaders[i]!.toLowerCase())) raw.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!)
        }
        res.writeHead(answer.statusCode ?? 502, raw)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end('Error: could not handle the request')
    })
    req.pipe(upstream)
  }

  const tls = createHttpsServer({ key, cert }, forward)
  const plain = createHttpServer(forward)
  const [port, plainPort] = await Promise.all([listenOn(tls), listenOn(plain)])
  return {
    publicUrl: `https://${opts.host}`,
    host: opts.host,
    port,
    plainUrl: `http://127.0.0.1:${plainPort}`,
    cert,
    route: (name, to) => void routes.set(name, to),
    stop: async () => {
      await Promise.all([close(tls), close(plain)])
    },
  }
}

/**
 * fetch() for addresses on the front end's host, as a client on the internet sends them: over
 * TLS, to the front end, with the host name as SNI and Host. Redirects are not followed.
 */
export function publicFetch(frontEnd: FrontEnd, url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const target = new URL(url)
  if (target.host !== frontEnd.host) throw new Error(`${url} is not on the front end's host ${frontEnd.host}`)
  return new Promise<Response>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: frontEnd.port,
        servername: frontEnd.host,
        ca: frontEnd.cert,
        method: init.method ?? 'GET',
        path: target.pathname + target.search,
        headers: { host: frontEnd.host, ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const headers = new Headers()
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!)
          const status = res.statusCode ?? 502
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks)
          resolve(new Response(body, { status, headers }))
        })
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}
