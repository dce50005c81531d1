import { z } from 'zod'
import { messageType } from '../../lib/queue.js'

/** The compute service asks the orchestrator to start a run (after the run is recorded). */
export const RUN_REQUESTED = messageType(
  'run.requested',
  z.object({ run_id: z.string().uuid(), project_id: z.string().uuid() }),
  (config) => config.topics.runRequested,
)
