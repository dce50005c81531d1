import { InvalidArgumentError, Option, type Command } from 'commander'
import { AUDIT_OUTCOMES, type AuditEvent, type AuditFilters, type AuditOutcome, type AuditScope } from '../../client.js'
import { action, type Cli } from '../../context.js'
import { usageError } from '../../errors.js'
import { examples } from '../../help.js'
import type { Column } from '../../format.js'
import { formatTime } from '../../output.js'
import { nextCommand, pagingOptions, type PagingOptions } from '../../paging.js'

interface EventsOptions extends PagingOptions {
  entity?: string
  action?: string
  actor?: string
  outcome?: AuditOutcome
  since?: number
  from?: string
  to?: string
  org?: string
  platform?: boolean
}

const DEFAULT_LIMIT = 50
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** "2h", "30m", "1d", "1h30m", "90s", "2w": milliseconds. */
export function duration(value: string): number {
  if (!/^(\d+[smhdw])+$/.test(value)) throw new InvalidArgumentError('expected a duration such as 30m, 2h, 1d or 1h30m (s, m, h, d, w)')
  let ms = 0
  for (const [, n, unit] of value.matchAll(/(\d+)([smhdw])/g)) ms += Number(n) * UNIT_MS[unit!]!
  return ms
}

/** The instants the audit service takes: a date (2026-11-22) or a time with its offset (2026-11-22T06:00:00Z). */
export function instant(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidArgumentError('expected an ISO 8601 date or time with its offset, such as 2026-11-22 or 2026-11-22T06:00:00Z')
  return value
}

const eventColumns: Column<AuditEvent>[] = [
  { header: 'TIME', value: (e) => formatTime(e.occurred_at) },
  { header: 'ACTION', value: (e) => e.action },
  { header: 'OUTCOME', value: (e) => e.outcome, status: true },
  { header: 'ACTOR', value: (e) => e.actor.email ?? (e.actor.type === 'system' ? 'system' : e.actor.id), fit: true },
  { header: 'ENTITY', value: (e) => `${e.entity.type}:${e.entity.id}`, fit: true },
  { header: 'REQUEST ID', value: (e) => e.request?.id },
]

/** The same query from where this page stopped (--since becomes the --from it stood for: the token is bound to it). */
function nextEvents(opts: EventsOptions, filters: AuditFilters, token: string): string {
  const words = ['audit', 'events']
  const add = (flag: string, value: string | undefined) => value !== undefined && words.push(flag, value)
  add('--entity', filters.entity)
  add('--action', filters.action)
  add('--actor', filters.actor)
  add('--outcome', filters.outcome)
  add('--from', filters.from)
  add('--to', filters.to)
  add('--org', opts.org)
  if (opts.platform) words.push('--platform')
  return nextCommand(words, opts, DEFAULT_LIMIT, token)
}

export function register(audit: Command, cli: Cli) {
  const events = audit
    .command('events')
    .description(
      "List audit events, newest first: the current project's by default, an organization's with --org, the platform's own with --platform",
    )
    .option('--entity <type:id>', 'events of one entity (run:<id>, file:gs://<bucket>/<path>) or of one type (run)')
    .option('--action <action>', 'one action (run.submitted), or a group ending in .* (run.*, file.*)')
    .option('--actor <id|email>', "the actor's user id or e-mail")
    .addOption(new Option('--outcome <outcome>', 'only this outcome').choices(AUDIT_OUTCOMES))
    .addOption(new Option('--since <duration>', 'the last 30m, 2h, 1d, 1w… (from now back)').argParser(duration).conflicts('from'))
    .option('--from <time>', 'from this date or time on (ISO 8601, inclusive)', instant)
    .option('--to <time>', 'before this date or time (ISO 8601, exclusive)', instant)
    .addOption(new Option('--org <id>', "an organization's events, its projects' included (its owners and admins)").conflicts('platform'))
    .option('--platform', 'the events of no organization: logins, personal tokens (platform administrators)')
  pagingOptions(events, 'events', 'event', DEFAULT_LIMIT)
    .addHelpText(
      'after',
      examples(
        'platform audit events --since 2h',
        "platform audit events --action 'file.*' --outcome success --limit 20",
        'platform audit events --entity run:5b0c7a52-9f3e-4f4e-8a51-0f6b6a9d2c11',
        'platform audit events --actor admin@example.org --from 2026-11-01 --to 2026-12-01 --json',
        'platform audit events --org <org id> --outcome denied',
      ),
    )
    .action(
      action(cli, async (session, command) => {
        const opts = command.opts<EventsOptions>()
        if ((opts.org !== undefined || opts.platform) && session.globals.project !== undefined)
          throw usageError('--project names a scope of its own: pass only one of --project, --org and --platform')
        const client = session.client()
        const scope: AuditScope =
          opts.org !== undefined ? { org: opts.org } : opts.platform ? { platform: true } : { project: await session.projectId(client) }
        const filters: AuditFilters = {
          entity: opts.entity,
          action: opts.action,
          actor: opts.actor,
          outcome: opts.outcome,
          from: opts.since !== undefined ? new Date(Date.now() - opts.since).toISOString() : opts.from,
          to: opts.to,
        }
        const page = await client.listEvents(scope, filters, { limit: opts.all ? undefined : opts.limit, pageToken: opts.pageToken })
        const next = page.nextPageToken
        session.out.result({ items: page.items, next_page_token: next ?? null }, () =>
          page.items.length ? session.out.table(page.items, eventColumns) : 'No events.',
        )
        if (next && !session.out.whole) session.out.note(`More events exist: ${nextEvents(opts, filters, next)}  (or --all for every event)`)
      }),
    )
}
