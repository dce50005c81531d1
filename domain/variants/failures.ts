import { isEmulatorAbort } from '../../lib/db.js'
import { VcfFormatError } from './vcf.js'

/**
 * What an error thrown while an ingestion takes a step means for the ingestion: whether another
 * attempt could ever pass. Decided here once, for the local runner's retries (ingest.ts
 * `runIngestion`), the step function that Cloud Workflows calls and retries (orchestrator/
 * ingestion-step.ts), and so for the reconciler, which starts again only ingestions still pending.
 */

/** What is wrong with the ingestion itself (the file, the order): it fails with this reason, and retrying would not help. */
export class IngestionFailure extends Error {
  constructor(
    readonly reason: string,
    readonly line?: number,
  ) {
    super(line === undefined ? reason : `line ${line}: ${reason}`)
    this.name = 'IngestionFailure'
  }
}

/** gRPC INVALID_ARGUMENT, the code Firestore refuses a request with that is wrong in itself. */
const INVALID_ARGUMENT = 3

/**
 * A write Firestore refused as invalid: a value or a document over its limits (a field over
 * 1,048,487 bytes, a document over 1 MiB, too many index entries), a malformed field. Sent again,
 * it is refused again. The Firestore emulator reports a transaction it aborted for a concurrent one
 * with the same code ("Transaction is invalid or closed"): that one is contention, and passes on a
 * retry (lib/db.ts `isEmulatorAbort`).
 */
export function isRefusedWrite(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === INVALID_ARGUMENT && !isEmulatorAbort(error)
}

const MESSAGE_CHARS = 300

/** The error's own words, short enough to keep on the ingestion. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)}…` : text
}

/** The failure an error ends the ingestion with, or undefined when another attempt may pass (or the run stops). */
export function failureOf(error: unknown): IngestionFailure | undefined {
  if (error instanceof IngestionFailure) return error
  if (error instanceof VcfFormatError) return new IngestionFailure(error.reason, error.line)
  if (isRefusedWrite(error)) return new IngestionFailure(`Firestore refused a write of the ingestion: ${messageOf(error)}`)
  return undefined
}

/**
 * - `fail`: retrying cannot help (failureOf): the ingestion ends as failed, with the reason and the
 *   VCF line when there is one, and is never started again.
 * - `stop`: a bug of this code (a TypeError or RangeError), or a crash a test injects (`crash: true`):
 *   this run stops without another attempt, and the ingestion stays pending, so that the reconciler
 *   starts it again once its lock's lease has run out (on a fixed deployment, for a bug).
 * - `retry`: anything else may pass on another attempt (Firestore or storage unreachable or busy,
 *   contention, a deadline): the step is taken again.
 */
export type StepErrorOutcome = 'fail' | 'stop' | 'retry'

export function stepErrorOutcome(error: unknown): StepErrorOutcome {
  if (failureOf(error)) return 'fail'
  if (error instanceof TypeError || error instanceof RangeError || (error as { crash?: unknown } | null)?.crash === true) return 'stop'
  return 'retry'
}
