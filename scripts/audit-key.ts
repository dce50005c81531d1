/**
 * Prints a new entry of the audit key ring, `<id>:<32 random bytes in base64>`, without a newline,
 * for piping into Secret Manager: infra/deploy.sh makes a deployment's first key with it, and an
 * operator the next one of a rotation (docs/audit.md). The key is printed only to standard output.
 *
 *   tsx scripts/audit-key.ts <key id>
 */
import { newAuditKeyEntry } from '../lib/audit-keys.js'

const id = process.argv[2]
if (!id || process.argv.length > 3) {
  process.stderr.write('usage: tsx scripts/audit-key.ts <key id>\n')
  process.exit(2)
}
try {
  process.stdout.write(newAuditKeyEntry(id))
} catch (err) {
  process.stderr.write(`audit-key: ${(err as Error).message}\n`)
  process.exit(2)
}
