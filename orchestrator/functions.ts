import { cloudEvent, http, type CloudEvent } from '@google-cloud/functions-framework'
import type { Config } from '../lib/config.js'
import { createOrchestrator, type OrchestratorDeps } from './orchestrator.js'

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
  const orchestrator = createOrchestrator(deps)
  cloudEvent('runRequested', (event: CloudEvent<unknown>) => orchestrator.onRunRequested(event))
  cloudEvent('jobStateChanged', (event: CloudEvent<unknown>) => orchestrator.onJobStateChanged(event))
  http('reconcile', async (_req, res) => {
    try {
      res.status(200).json(await orchestrator.reconcile())
    } catch (err) {
      deps.log.error('reconcile failed', { error: err })
      res.status(500).json({ detail: 'internal error' })
    }
  })
  return orchestrator
}
