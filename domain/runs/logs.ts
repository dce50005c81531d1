import { TERMINAL, type RunStatus } from './status.js'

/**
 * When a run's log is complete: the rule a follower (the API's long poll, its event stream, the
 * CLI) stops on. The log of a run that can still run may grow; a finished run's log may still
 * receive lines for `lagMs` after it finished (Cloud Logging ingests with a delay; the local
 * executor's file has every line once the job has settled), and is complete once a read reached
 * its end after that.
 */
export interface LogProgress {
  status: RunStatus
  /** When the run finished (terminal runs only). */
  finished?: Date
  /** The read just made reached the end of what the log holds now. */
  atEnd: boolean
  now: Date
  /** How long after a job ends its last lines may still arrive in the log. */
  lagMs: number
}

export function logComplete(p: LogProgress): boolean {
  if (!TERMINAL.has(p.status) || !p.atEnd) return false
  return p.finished === undefined || p.now.getTime() - p.finished.getTime() >= p.lagMs
}
