import { cloudEvent, http, type CloudEvent } from '@google-cloud/functions-framework'
import type { Config } from '../lib/config.js'
import type { OrchestratorDeps } from './deps.js'
import { onJobStateChanged } from './job-state-changed.js'
import { reconcile } from './reconcile.js'
import { onRunRequested } from './run-requested.js'

/**
 * The orchestrator's Cloud Functions and what triggers each: a push subscription on a topic, or
 * an HTTP call (Cloud Scheduler for the reconciler). The local suite and infra/ read this list.
 */
export const ORCHESTRATOR_FUNCTIONS = [
  { name: 'runRequested', kind: 'cloudevent', topic: (c: Config) => c.topics.runRequested },
  { name: 'jobStateChanged', kind: 'cloudevent', topic: (c: Config) => c.topics.jobStatus },
  { name: 'reconcile', kind: 'http' },
] as const

export function registerOrchestrator(deps: OrchestratorDeps) {
  cloudEvent('runRequested', (event: CloudEvent<unknown>) => onRunRequested(deps, event))
  cloudEvent('jobStateChanged', (event: CloudEvent<unknown>) => onJobStateChanged(deps, event))
  http('reconcile', async (_req, res) => {
    try {
      res.status(200).json(await reconcile(deps))
    } catch (err) {
      deps.log.error('reconcile failed', { error: err })
      res.status(500).json({ detail: 'internal error' })
    }
  })
}
