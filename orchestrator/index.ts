import { loadConfig } from '../lib/config.js'
import { createKernel } from '../lib/kernel.js'
import { orchestratorDeps } from './deps.js'
import { registerOrchestrator } from './functions.js'

/** Cloud Functions entry of the orchestrator: deploy with --entry-point=runRequested, jobStateChanged or reconcile. */
registerOrchestrator(orchestratorDeps(createKernel(loadConfig(), 'orchestrator')))
