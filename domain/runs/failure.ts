/**
 * Whose fault a failed run is, as far as its job tells: the pipeline's own code exited with an
 * error (`executor`, with that exit code), or something around it failed (`system`: Batch refused
 * or lost the job, the VM was preempted or became unreachable, the task ran out of time, the job
 * could not be built). GA4GH WES tells the two apart (EXECUTOR_ERROR, SYSTEM_ERROR), and so does a
 * person deciding whether to fix the pipeline or submit it again.
 */
export interface RunFailure {
  kind: 'executor' | 'system'
  /** The failing task's exit code, when its job reported one. */
  exit_code?: number
}

/**
 * Exit codes Cloud Batch gives a task it stopped itself (Google's "Troubleshoot exit codes"): VM
 * preempted (50001), VM reporting lost (50002), VM rebooted (50003), task unresponsive (50004),
 * maxRunDuration exceeded (50005), VM recreated (50006). The local executor uses 50005 too.
 */
const BATCH_EXIT_CODES: ReadonlySet<number> = new Set([50001, 50002, 50003, 50004, 50005, 50006])

/**
 * Batch states a task's exit code only in the text of its failure event ("Task state is updated
 * from RUNNING to FAILED on zones/…/instances/… with exit code 1."), which the run's error message
 * begins with (domain/runs/lifecycle.ts errorMessageOf); Nextflow's Batch executor reads it the same
 * way. Only the first line is read: what follows may quote the task's stderr, which says anything.
 */
const EXIT_CODE_RE = /\bexit code (\d+)\b/

/** The failure an error message describes; a message naming no exit code is the system's. */
export function failureOf(errorMessage: string | undefined): RunFailure {
  const firstLine = errorMessage?.split('\n', 1)[0] ?? ''
  const match = EXIT_CODE_RE.exec(firstLine)
  if (!match) return { kind: 'system' }
  const exit_code = Number(match[1])
  return { kind: BATCH_EXIT_CODES.has(exit_code) ? 'system' : 'executor', exit_code }
}
