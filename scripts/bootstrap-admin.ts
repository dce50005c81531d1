/**
 * Makes the first platform administrator of a deployment, once (docs/deploying.md, "The first
 * administrator"):
 *
 *   npm run bootstrap-admin -- --email ann@lab.example
 *
 * Run by an operator with their own Google credentials (Application Default Credentials:
 * `gcloud auth application-default login`) against the deployment's Firestore, with the settings
 * that name it, as the functions have them: GOOGLE_CLOUD_PROJECT, COLLECTION_PREFIX (when the
 * deployment has one), and the audit key ring from Secret Manager (AUDIT_HMAC_KEYS,
 * AUDIT_HMAC_ACTIVE_KEY), since the grant is recorded as a keyed audit event. infra/deploy.sh
 * prints the whole command.
 *
 * Exit status: 0 made; 2 a bad argument or setting; 3 refused (the deployment has its first
 * administrator already); 1 anything else (Firestore unreachable, no credentials).
 */
import { hostname, userInfo } from 'node:os'
import { bootstrapPlatformAdmin, BOOTSTRAPPED } from '../domain/tenancy/bootstrap.js'
import { ConfigError, loadConfig } from '../lib/config.js'
import { Refused } from '../lib/decision.js'
import { newId } from '../lib/ids.js'
import { createKernel } from '../lib/kernel.js'

const USAGE = 'usage: npm run bootstrap-admin -- --email <e-mail of the first platform administrator>'

function exit(code: number, message: string): never {
  process.stderr.write(`bootstrap-admin: ${message}\n`)
  process.exit(code)
}

function emailArgument(args: string[]): string {
  let email: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--email') email = args[++i]
    else if (arg.startsWith('--email=')) email = arg.slice('--email='.length)
    else if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`)
      process.exit(0)
    } else exit(2, `unknown argument ${arg}\n${USAGE}`)
  }
  return email || exit(2, `--email is required\n${USAGE}`)
}

const email = emailArgument(process.argv.slice(2))
// Without it the configuration's local default would name no real deployment.
if (!process.env.GOOGLE_CLOUD_PROJECT) exit(2, 'GOOGLE_CLOUD_PROJECT is required: the project of the deployment')

let kernel: ReturnType<typeof createKernel>
try {
  kernel = createKernel(loadConfig(), 'bootstrap-admin')
} catch (error) {
  if (error instanceof ConfigError) exit(2, error.message)
  throw error
}

try {
  const operator = `${userInfo().username}@${hostname()}`
  const user = await bootstrapPlatformAdmin(
    kernel,
    { actor: { type: 'system', id: 'bootstrap-admin' }, request: { id: newId(), user_agent: `scripts/bootstrap-admin.ts, run by ${operator}` } },
    { email },
  )
  process.stdout.write(
    `${user.email} (user ${user.id}) is the first platform administrator of ${kernel.config.gcpProject}; the grant is in the audit log as ${BOOTSTRAPPED}.\n` +
      'They log in at the admin service, create the organizations, and grant everything else through the API.\n',
  )
} catch (error) {
  if (error instanceof Refused) exit(error.status === 409 ? 3 : 2, `refused: ${error.message}`)
  throw error
} finally {
  await kernel.db.firestore.terminate()
}
