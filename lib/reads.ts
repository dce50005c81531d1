import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore'

/** Reads one document: straight from Firestore, or from what the request has already read (RequestReads). */
export interface DocReader {
  get(ref: DocumentReference): Promise<DocumentSnapshot>
}

export const directReads: DocReader = { get: (ref) => ref.get() }

/** The record in a snapshot, or undefined when the document does not exist (or was not read). */
export const recordOf = <T>(snap: DocumentSnapshot | undefined): T | undefined => (snap?.exists ? (snap.data() as T) : undefined)

/**
 * One round trip for several documents (a single getAll), answered in the order asked; an
 * undefined entry is not read and answers undefined, so callers can name optional documents in place.
 */
export async function readBatch(
  firestore: Firestore,
  refs: ReadonlyArray<DocumentReference | undefined>,
): Promise<Array<DocumentSnapshot | undefined>> {
  const present = refs.filter((r): r is DocumentReference => r !== undefined)
  const snaps = present.length ? await firestore.getAll(...present) : []
  let i = 0
  return refs.map((r) => (r ? snaps[i++] : undefined))
}

/**
 * The documents a route declared it will read (`prefetch` in lib/http.ts), read by the kernel in
 * the same round trip as the caller's account, and handed to the route's store when it asks for
 * them. One per request, on its context, dropped with it: nothing is shared between requests, so
 * every request sees Firestore as it is now. A document is handed over once; asked for again in the
 * same request (after a write, say), it is read afresh.
 */
export class RequestReads implements DocReader {
  private readonly wanted = new Map<string, DocumentReference>()
  private readonly read = new Map<string, DocumentSnapshot>()

  want(refs: Iterable<DocumentReference>) {
    for (const ref of refs) this.wanted.set(ref.path, ref)
  }

  /** The declared documents, for the kernel's batch. */
  pending(): DocumentReference[] {
    return [...this.wanted.values()]
  }

  /** Keeps what the kernel's batch read of the declared documents. */
  keep(snaps: Iterable<DocumentSnapshot | undefined>) {
    for (const snap of snaps) if (snap && this.wanted.has(snap.ref.path)) this.read.set(snap.ref.path, snap)
  }

  async get(ref: DocumentReference): Promise<DocumentSnapshot> {
    const snap = this.read.get(ref.path)
    if (!snap) return ref.get()
    this.read.delete(ref.path)
    return snap
  }
}
