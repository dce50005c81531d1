import { performance } from 'node:perf_hooks'
import { Firestore, type DocumentReference, type DocumentSnapshot } from '@google-cloud/firestore'

export interface RecordedRead {
  /** The paths of the documents read, as Firestore names them (`<prefix><collection>/<id>`). */
  paths: string[]
  started: number
  ended: number
}

/**
 * A real Firestore client (nothing is mocked: every read reaches the emulator) that records each
 * batch of document reads it sends, with when it was sent and answered: every getAll, which
 * DocumentReference.get also goes through. Queries and transactions are not recorded.
 */
export class ReadRecordingFirestore extends Firestore {
  readonly reads: RecordedRead[] = []

  override async getAll(...refsOrOptions: Parameters<Firestore['getAll']>): Promise<DocumentSnapshot[]> {
    const paths = refsOrOptions.filter((r): r is DocumentReference => 'path' in r).map((r) => r.path)
    const started = performance.now()
    try {
      return await super.getAll(...refsOrOptions)
    } finally {
      this.reads.push({ paths, started, ended: performance.now() })
    }
  }

  /** The reads recorded since the last call, forgotten here. */
  take(): RecordedRead[] {
    return this.reads.splice(0)
  }
}

/**
 * The sequential round trips among `reads`: a read sent before another was answered ran beside it;
 * one sent after waited for it. Each read's round is one more than the latest round among the reads
 * answered before it was sent, so the number of rounds is the longest chain of reads each waiting
 * for the one before. Returns, for each round, the collections it read (sorted, without `prefix`).
 */
export function readRounds(reads: readonly RecordedRead[], prefix = ''): string[][] {
  const sorted = [...reads].sort((a, b) => a.started - b.started)
  const roundOf: number[] = []
  sorted.forEach((read, i) => {
    const before = sorted.slice(0, i).map((other, j) => (other.ended <= read.started ? roundOf[j]! : 0))
    roundOf.push(1 + Math.max(0, ...before))
  })
  const rounds: string[][] = Array.from({ length: Math.max(0, ...roundOf) }, () => [])
  sorted.forEach((read, i) => rounds[roundOf[i]! - 1]!.push(...read.paths.map((p) => p.split('/')[0]!.slice(prefix.length))))
  return rounds.map((r) => r.sort())
}
