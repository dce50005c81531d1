import { z } from 'zod'
import { messageType } from '../../lib/queue.js'

/** An ingestion was recorded (or must go on): the orchestrator starts, or resumes, its steps. */
export const INGESTION_REQUESTED = messageType(
  'ingestion.requested',
  z.object({ ingestion_id: z.string().uuid(), project_id: z.string().uuid() }),
  (config) => config.topics.ingestionRequested,
)
