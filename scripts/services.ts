/**
 * Prints the registry's HTTP services (functions/services.ts), one per line, for shell scripts
 * such as infra/deploy.sh: the name, then `project-scoped` or `global`.
 */
import { SERVICES } from '../functions/services.js'

for (const [name, service] of Object.entries(SERVICES)) {
  process.stdout.write(`${name} ${service.projectScoped ? 'project-scoped' : 'global'}\n`)
}
