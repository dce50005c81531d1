/**
 * Prints every Cloud Function of the platform, one per line, for shell scripts such as
 * infra/deploy.sh, from the code's own lists:
 *
 *   service <name> <project-scoped|global>          an HTTP service of functions/services.ts
 *   orchestrator <name> cloudevent <topic>          fed by a push subscription on <topic>
 *   orchestrator <name> http                        called on a schedule (the reconciler)
 *   orchestrator <name> workflow-step               called by a Cloud Workflows execution (an ingestion's steps)
 *
 * Topic names follow TOPIC_RUN_REQUESTED, TOPIC_JOB_STATUS, TOPIC_INGESTION_REQUESTED and TOPIC_WEBHOOK_DELIVERY, as the functions will.
 */
import { loadConfig } from '../lib/config.js'
import { SERVICES } from '../functions/services.js'
import { ORCHESTRATOR_FUNCTIONS } from '../orchestrator/functions.js'

const config = loadConfig({
  TOPIC_RUN_REQUESTED: process.env.TOPIC_RUN_REQUESTED,
  TOPIC_JOB_STATUS: process.env.TOPIC_JOB_STATUS,
  TOPIC_INGESTION_REQUESTED: process.env.TOPIC_INGESTION_REQUESTED,
  TOPIC_WEBHOOK_DELIVERY: process.env.TOPIC_WEBHOOK_DELIVERY,
})

for (const service of SERVICES) {
  process.stdout.write(`service ${service.name} ${service.projectScoped ? 'project-scoped' : 'global'}\n`)
}
for (const fn of ORCHESTRATOR_FUNCTIONS) {
  process.stdout.write(fn.kind === 'cloudevent' ? `orchestrator ${fn.name} cloudevent ${fn.topic(config)}\n` : `orchestrator ${fn.name} ${fn.kind}\n`)
}
