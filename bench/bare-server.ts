import { createServer } from 'node:http'
import { Firestore } from '@google-cloud/firestore'

/**
 * The baseline of the benchmark: an HTTP endpoint that does nothing but read one Firestore
 * document and answer it as JSON, with the same client library and the same emulator as the
 * platform. It runs in a process of its own, as the suite's services do, and stops on SIGTERM or
 * SIGINT: open connections closed, the Firestore client terminated.
 */
const [host, project, collection, port] = process.argv.slice(2)
if (!host || !project || !collection || !port) {
  process.stderr.write('usage: bare-server <firestore host> <gcp project> <collection> <port>\n')
  process.exit(2)
}
const db = new Firestore({ projectId: project, host, ssl: false, customHeaders: { Authorization: 'Bearer owner' } })
const answer = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}
const server = createServer((req, res) => {
  const id = (req.url ?? '').split('/').pop() ?? ''
  if (!/^[\w-]+$/.test(id)) return answer(res, 404, { detail: 'not found' })
  db.collection(collection)
    .doc(id)
    .get()
    .then((snap) => answer(res, snap.exists ? 200 : 404, snap.data() ?? { detail: 'not found' }))
    .catch((err: Error) => answer(res, 500, { detail: err.message }))
})
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'))

const stop = () => {
  server.close()
  server.closeAllConnections()
  void db.terminate().finally(() => process.exit(0))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
