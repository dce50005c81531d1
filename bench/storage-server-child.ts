import { readFileSync } from 'node:fs'
import { startStorageServer } from '../emulators/storage-server.js'
import { LocalObjectStorage } from '../lib/storage.js'

/**
 * The local storage server alone in a process of its own, so the benchmark can read its memory:
 *   tsx bench/storage-server-child.ts <buckets root> <account> <public key PEM file>
 * Prints its address on stdout once listening; stops on SIGTERM.
 */
const [root, account, keyFile] = process.argv.slice(2)
if (!root || !account || !keyFile) {
  process.stderr.write('usage: storage-server-child <buckets root> <account> <public key file>\n')
  process.exit(2)
}
const server = await startStorageServer({ storage: new LocalObjectStorage(root), keys: { [account]: readFileSync(keyFile, 'utf8') } })
process.stdout.write(`${server.url}\n`)
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)))
