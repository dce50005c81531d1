import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

/** What a test receiver got: the headers, the body, and whether the Standard Webhooks library verified it with each secret it was told. */
export interface Received {
  id: string
  /** When the request's body had arrived and been verified (epoch ms). */
  at: number
  headers: IncomingHttpHeaders
  body: string
  payload: { type: string; timestamp: string; data: Record<string, string> }
  /** Per secret given to `verifyWith`, in order: did `standardwebhooks` verify the delivery with it? */
  verified: boolean[]
}

/**
 * A webhook receiver on 127.0.0.1 that verifies every delivery with the `standardwebhooks` package
 * (the Standard Webhooks reference library, npm), never with the platform's code: a delivery it
 * accepts is one any receiver using a Standard Webhooks library accepts. It answers each request with
 * the next status of `answers` (then the last one again), 204 by default.
 */
export async function startReceiver() {
  const received: Received[] = []
  let secrets: string[] = []
  let answers: number[] = [204]
  let hits = 0
  const waiters: Array<() => void> = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]))
      const verified = secrets.map((secret) => {
        try {
          new Webhook(secret).verify(body, headers)
          return true
        } catch {
          return false
        }
      })
      received.push({
        id: String(req.headers['webhook-id']),
        at: Date.now(),
        headers: req.headers,
        body,
        payload: JSON.parse(body) as Received['payload'],
        verified,
      })
      const status = answers[Math.min(hits++, answers.length - 1)]!
      res.writeHead(status).end()
      waiters.splice(0).forEach((w) => w())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** The secrets each delivery is verified with, from now on. */
    verifyWith(...s: string[]) {
      secrets = s
    },
    /** The statuses the next requests are answered with. */
    answer(...statuses: number[]) {
      answers = statuses
      hits = 0
    },
    async waitFor(count: number, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`timed out: the receiver got ${received.length} of ${count} deliveries`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 100)
        })
      }
      return received
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
