import { createServer } from 'node:http'
import { Firestore } from '@google-cloud/firestore'

/**
 * The baseline of the benchmark: an HTTP endpoint that does nothing but read one Firestore
 * document and answer it as JSON, with the same client library and the same emulator as the
 * platform. It runs in a process of its own, as the suite's services do.
 */
const [host, project, collection, port] = process.argv.slice(2)
if (!host || !project || !collection || !port) {
  process.stderr.write('usage: bare-server <firestore host> <gcp project> <collection> <port>\n')
  process.exit(2)
}
const db = new Firestore({ projectId: project, host, ssl: false, customHeaders: { Authorization: 'Bearer owner' } })
const server = createServer((req, res) => {
  const id = (req.url ?? '').split('/').pop() ?? ''
  db.collection(collection)
    .doc(id)
    .get()
    .then((snap) => {
      res.writeHead(snap.exists ? 200 : 404, { 'content-type': 'application/json' })
      res.end(JSON.stringify(snap.data() ?? { detail: 'not found' }))
    })
    .catch((err: Error) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ detail: err.message }))
    })
})
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
