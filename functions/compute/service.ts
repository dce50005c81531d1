import { defineService, serviceApp } from '../../lib/service.js'
import { seedPipelines } from '../../domain/pipelines/catalogue.js'
import { PipelineStore } from '../../domain/pipelines/store.js'
import { computeConsole } from './console/index.js'
import { computeDeps, type ComputeDeps } from './deps.js'
import { pipelines } from './routes/pipelines.js'
import { runPrefetch, runs } from './routes/runs.js'
import { webhooks } from './routes/webhooks.js'
import { wes } from './wes/index.js'

/** The compute service: the pipeline catalogue and pipeline runs. */
export const compute = defineService<ComputeDeps>({
  name: 'compute',
  title: 'Compute service',
  description:
    "The pipeline catalogue (platform-wide pipelines and the project's own, versioned per slug) and pipeline runs: submit, list, watch, outputs, cancel. Every request needs X-Project-ID. The same runs are also served as GA4GH WES 1.1 under /ga4gh/wes/v1 (docs/wes.md).",
  port: 8102,
  projectScoped: true,
  collections: ['pipelines', 'runs', 'idempotency_keys', 'run_names', 'webhooks', 'webhook_deliveries'],
  tags: [
    { name: 'pipelines', description: "The pipeline catalogue: the platform's pre-registered pipelines and the project's own, versioned per slug" },
    { name: 'runs', description: 'Pipeline runs: submit, list, follow, list outputs, cancel' },
    {
      name: 'webhooks',
      description:
        "The project's webhooks: endpoints that receive its run, ingestion, order and report events, signed as Standard Webhooks, at least once, retried over hours (project admins)",
    },
  ],
  deps: (kernel) => computeDeps(kernel),
  routes: [pipelines, runs, webhooks],
  pages: [computeConsole],
  standardApis: [wes],
  prefetch: [runPrefetch],
  seed: async ({ kernel }) => {
    await seedPipelines(new PipelineStore(kernel.db, kernel.audit, kernel.clock))
  },
})

export const createComputeApp = (deps: ComputeDeps) => serviceApp(compute.definition, deps)
