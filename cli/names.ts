/**
 * Records named the way a lab names them, wherever the CLI takes an id: subjects and samples by
 * their external id, orders by accession. The clinical API takes an order's accession in its paths
 * itself, so an order is read as named; subjects and samples are looked up through the list
 * filters (`external_id`), as the API takes only their ids in paths. Every other service takes an
 * order's accession where its id goes too (/orders/{order_id}/variants, POST /reports, GET
 * /reports?order_id=), so the CLI passes it on. Reports have no name of their own: a report is
 * named by its id, or by its order's accession (its current report).
 */
import { HttpError, UUID_RE, type Order, type PlatformClient, type Report, type Sample, type Subject } from './client.js'
import { CliError, EXIT, usageError } from './errors.js'

/** Where names are looked up: the client and the project. */
export interface Scope {
  client: PlatformClient
  project: string
}

/** The kinds of record named by a lab's identifier, with the command that lists them. */
const NAMED = {
  subject: { label: 'subject', idName: 'external id', list: 'platform subjects list' },
  sample: { label: 'sample', idName: 'external id', list: 'platform samples list' },
  order: { label: 'order', idName: 'accession', list: 'platform orders list' },
} as const
type NamedKind = keyof typeof NAMED

/**
 * The one record a name stands for, among the records whose identifier matched it: none is "not
 * found" (exit 6), several is a usage error listing them by id (exit 3), so the user picks one.
 */
export function chooseNamed<T extends { id: string }>(kind: NamedKind, ref: string, matches: readonly T[]): T {
  const { label, idName, list } = NAMED[kind]
  const [only, ...others] = matches
  if (!only) return notFoundNamed(kind, ref)
  if (others.length) throw usageError(`${label} ${idName} '${ref}' is ambiguous: ${matches.map((m) => m.id).join(', ')}; pass the id (${list})`)
  return only
}

function notFoundNamed(kind: NamedKind, ref: string): never {
  const { label, idName, list } = NAMED[kind]
  throw new CliError(`not found: no ${label} with id or ${idName} '${ref}' in this project (${list} shows them)`, EXIT.notFound)
}

/** How a reference is read: as an id (then, if no record has it, as an external id) or as an external id alone. */
const looksLikeId = (ref: string) => UUID_RE.test(ref)

const isNotFound = (error: unknown) => error instanceof HttpError && error.status === 404

/**
 * A record by id, else by its external id: an id-shaped reference is tried as an id first, and as
 * an external id when no record has that id (an external id may be any text without spaces).
 */
async function byIdOrExternalId<T extends { id: string }>(
  kind: NamedKind,
  ref: string,
  get: (id: string) => Promise<T>,
  findByExternalId: (externalId: string) => Promise<T[]>,
): Promise<T> {
  if (looksLikeId(ref)) {
    try {
      return await get(ref)
    } catch (error) {
      if (!isNotFound(error)) throw error
    }
  }
  return chooseNamed(kind, ref, await findByExternalId(ref))
}

/** Two are enough to tell one from several. */
const ENOUGH = { limit: 2 }

export function resolveSubject({ client, project }: Scope, ref: string): Promise<Subject> {
  return byIdOrExternalId(
    'subject',
    ref,
    (id) => client.getSubject(project, id),
    async (external_id) => (await client.listSubjects(project, { external_id }, ENOUGH)).items,
  )
}

export function resolveSample({ client, project }: Scope, ref: string): Promise<Sample> {
  return byIdOrExternalId(
    'sample',
    ref,
    (id) => client.getSample(project, id),
    async (external_id) => (await client.listSamples(project, { external_id }, ENOUGH)).items,
  )
}

/** An order by id or accession: the service resolves either, and a 404 says how to find the order. */
export async function resolveOrder({ client, project }: Scope, ref: string): Promise<Order> {
  try {
    return await client.getOrder(project, ref)
  } catch (error) {
    if (isNotFound(error)) return notFoundNamed('order', ref)
    throw error
  }
}

/** A user named by id, or `me`: the caller (its own id, as `platform whoami` shows it). */
export async function resolveUser(client: PlatformClient, ref: string): Promise<string>
export async function resolveUser(client: PlatformClient, ref: string | undefined): Promise<string | undefined>
export async function resolveUser(client: PlatformClient, ref: string | undefined): Promise<string | undefined> {
  return ref === 'me' ? (await client.me()).id : ref
}

/** Statuses of a report no one works on any more: a later revision, or a report withdrawn. */
const ENDED: ReadonlySet<Report['status']> = new Set<Report['status']>(['superseded', 'cancelled', 'entered_in_error'])

type Candidate = Pick<Report, 'id' | 'revision' | 'status' | 'template_type'>

/**
 * The report an order's accession names: of the order's reports not superseded, cancelled or
 * entered in error, the one of the highest revision (an amendment in draft before the signed
 * revision it replaces). None is a not-found; two of the same revision (two reports of one order,
 * germline and secondary findings) are a usage error listing them.
 */
export function currentReport<T extends Candidate>(order: string, reports: readonly T[]): T {
  const live = reports.filter((r) => !ENDED.has(r.status))
  const top = Math.max(...live.map((r) => r.revision))
  const newest = live.filter((r) => r.revision === top)
  const [only] = newest
  if (!only) {
    const ended = reports.length ? ` (its ${reports.length} report${reports.length === 1 ? ' has' : 's have'} ended: pass a report id)` : ''
    throw new CliError(`not found: order ${order} has no current report${ended}`, EXIT.notFound)
  }
  if (newest.length > 1) {
    const list = newest.map((r) => `${r.id} (${r.template_type}, ${r.status})`).join(', ')
    throw usageError(`order ${order} has ${newest.length} current reports: ${list}; pass the report's id`)
  }
  return only
}

/** A report by id, or by its order's id or accession (currentReport). */
export async function resolveReport(client: PlatformClient, project: string, ref: string): Promise<Report> {
  if (UUID_RE.test(ref)) return client.getReport(project, ref)
  const { items } = await client.listReports(project, { order_id: ref }, {})
  return currentReport(ref, items)
}
