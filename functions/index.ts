import { getRequestListener } from '@hono/node-server'
import { http } from '@google-cloud/functions-framework'
import { loadConfig } from '../lib/config.js'
import { createKernel } from '../lib/kernel.js'
import { adminDeps, createAdminApp } from './admin/app.js'

/**
 * Cloud Functions entry points, one HTTP function per service (deploy with --entry-point=<name>).
 * Each builds its app once per instance; the app knows nothing of how it is hosted.
 */
const config = loadConfig()

http('admin', getRequestListener(createAdminApp(adminDeps(createKernel(config, 'admin'))).fetch))
