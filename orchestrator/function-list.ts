import type { Config } from '../lib/config.js'

/**
 * The orchestrator's Cloud Functions and what triggers each: a push subscription on a topic, an
 * HTTP call on a schedule (Cloud Scheduler, for the reconciler), or an HTTP call of a Cloud
 * Workflows step (an ingestion's steps). The local suite and infra/ read this list;
 * it imports nothing of the functions-framework, so that reading it loads none of it (the
 * framework's Node domains slow every promise of a process that loads them).
 */
export const ORCHESTRATOR_FUNCTIONS = [
  { name: 'runRequested', kind: 'cloudevent', topic: (c: Config) => c.topics.runRequested },
  { name: 'jobStateChanged', kind: 'cloudevent', topic: (c: Config) => c.topics.jobStatus },
  { name: 'ingestionRequested', kind: 'cloudevent', topic: (c: Config) => c.topics.ingestionRequested },
  { name: 'reconcile', kind: 'http' },
  { name: 'ingestionStep', kind: 'workflow-step' },
  // Last, so that the local suite's ports of the functions before it stay as they were (emulators/ports.ts).
  { name: 'webhookDelivery', kind: 'cloudevent', topic: (c: Config) => c.topics.webhookDelivery },
] as const
