import { getRequestListener } from '@hono/node-server'
import { http } from '@google-cloud/functions-framework'
import { loadConfig } from '../lib/config.js'
import { createKernel } from '../lib/kernel.js'
import { SERVICES } from './services.js'

/**
 * Cloud Functions entry points, one HTTP function per service (deploy with --entry-point=<name>).
 * Only the service being served is built, once per instance.
 */
const target = process.env.FUNCTION_TARGET
for (const service of SERVICES) {
  if (target && target !== service.name) continue
  http(service.name, getRequestListener(service.create(createKernel(loadConfig(), service.name)).fetch))
}
