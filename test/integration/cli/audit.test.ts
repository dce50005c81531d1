import { afterAll, describe, expect, it } from 'vitest'
import type { AuditEvent } from '../../../cli/client.js'
import { SettingsStore } from '../../../cli/settings.js'
import { AuditWriter, type AuditInput } from '../../../lib/audit.js'
import type { Caller } from '../../support/world.js'
import { configHome, parseJson, runMain, startPlatform } from '../../support/cli.js'

interface EventList {
  items: AuditEvent[]
  next_page_token: string | null
}

const T0 = Date.parse('2020-03-01T10:00:00Z')
const minute = (n: number) => new Date(T0 + n * 60_000)
/** Bounds that leave out the audit.queried events the CLI's own queries add (they happen now). */
const PAST = ['--to', '2021-01-01T00:00:00Z']

/** `platform audit events` in process against the audit service on a real port, over events written at known times. */
describe('platform audit events', async () => {
  const platform = await startPlatform()
  const { world } = platform
  const { project, org } = world
  afterAll(() => platform.stop())

  const lab = await world.caller(['lab'])
  let clockAt = minute(0)
  const writer = new AuditWriter(world.deps.db, 'test', { now: () => clockAt }, world.deps.audit.keys, world.deps.log)
  const write = async (at: Date, who: Caller, input: Omit<AuditInput, 'project_id' | 'org_id'>, requestId?: string) => {
    clockAt = at
    const ctx = { actor: { type: 'user' as const, id: who.user.id, email: who.user.email }, ...(requestId ? { request: { id: requestId } } : {}) }
    return writer.record(ctx, { project_id: project.id, org_id: org.id, ...input })
  }
  const e1 = await write(minute(1), world.owner, { action: 'run.submitted', entity: { type: 'run', id: 'r1' } }, 'req-1')
  const e2 = await write(minute(2), world.owner, { action: 'run.cancelled', entity: { type: 'run', id: 'r1' } }, 'req-2')
  const e3 = await write(minute(3), lab, { action: 'run.submitted', entity: { type: 'run', id: 'r2' } })
  const e4 = await write(minute(4), lab, { action: 'order.transitioned', entity: { type: 'order', id: 'o1' } })
  const e5 = await write(minute(5), lab, { action: 'access.denied', outcome: 'denied', entity: { type: 'project', id: project.id } })
  // Recent ones, for --since.
  const hour = 3_600_000
  const old = await write(new Date(Date.now() - 3 * hour), world.owner, { action: 'sample.updated', entity: { type: 'sample', id: 's1' } })
  const recent = await write(new Date(Date.now() - hour / 2), world.owner, { action: 'sample.updated', entity: { type: 'sample', id: 's1' } })

  async function homeFor(token: string) {
    const home = await configHome(platform, project.id)
    new SettingsStore(home).saveCredentials('local', { method: 'personal_token', access_token: token, saved_at: new Date().toISOString() })
    return home
  }
  const home = await homeFor(world.owner.token)
  const cli = (args: string[]) => runMain(['audit', 'events', ...args], { configDir: home })
  const ids = async (args: string[]) => {
    const res = await cli([...args, '--json'])
    expect(res.code, res.stderr).toBe(0)
    return parseJson<EventList>(res).items.map((e) => e.id)
  }

  it("shows the project's events newest first: time, action, outcome, actor, entity, request id", async () => {
    const res = await cli(PAST)
    expect(res.code, res.stderr).toBe(0)
    const lines = res.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^TIME\s+ACTION\s+OUTCOME\s+ACTOR\s+ENTITY\s+REQUEST ID$/)
    expect(lines.slice(1, 6)).toEqual([
      expect.stringMatching(new RegExp(`^2020-03-01T10:05:00Z\\s+access.denied\\s+denied\\s+${lab.user.email}\\s+project:${project.id}\\s+-$`)),
      expect.stringMatching(/^2020-03-01T10:04:00Z\s+order.transitioned\s+success\s+\S+\s+order:o1\s+-$/),
      expect.stringMatching(/^2020-03-01T10:03:00Z\s+run.submitted\s+success\s+\S+\s+run:r2\s+-$/),
      expect.stringMatching(new RegExp(`^2020-03-01T10:02:00Z\\s+run.cancelled\\s+success\\s+${world.owner.user.email}\\s+run:r1\\s+req-2$`)),
      expect.stringMatching(/^2020-03-01T10:01:00Z\s+run.submitted\s+success\s+\S+\s+run:r1\s+req-1$/),
    ])
  })

  it.each<[string, string[], () => Array<{ id: string }>]>([
    ['an entity type:id', ['--entity', 'run:r1', ...PAST], () => [e2, e1]],
    ['an entity type', ['--entity', 'run', ...PAST], () => [e3, e2, e1]],
    ['an action', ['--action', 'run.submitted', ...PAST], () => [e3, e1]],
    ['an action group', ['--action', 'run.*', ...PAST], () => [e3, e2, e1]],
    ['an actor by e-mail', ['--actor', lab.user.email!, ...PAST], () => [e5, e4, e3]],
    ['an outcome', ['--outcome', 'denied', ...PAST], () => [e5]],
    ['a time range', ['--from', minute(2).toISOString(), '--to', minute(4).toISOString()], () => [e3, e2]],
    ['the last hour (--since 1h)', ['--since', '1h', '--action', 'sample.*'], () => [recent]],
    ['the last 4 hours (--since 3h59m)', ['--since', '3h59m', '--action', 'sample.*'], () => [recent, old]],
  ])('filters by %s', async (_, args, expected) => {
    expect(await ids(args)).toEqual(expected().map((e) => e.id))
  })

  it('pages: --limit, the command that lists the next ones (filters kept), --all, and {items, next_page_token}', async () => {
    const first = await cli(['--action', 'run.*', ...PAST, '--limit', '2'])
    expect(first.stdout.trim().split('\n')).toHaveLength(3)
    const hint = /^More events exist: platform (audit events .*--page-token \S+) {2}\(or --all for every event\)$/m.exec(first.stderr)
    expect(hint, first.stderr).not.toBeNull()
    expect(hint![1]).toContain("--action 'run.*' --to 2021-01-01T00:00:00Z --limit 2")
    const words = hint![1]!.replace("'run.*'", 'run.*').split(' ')
    const second = parseJson<EventList>(await runMain([...words, '--json'], { configDir: home }))
    expect(second.items.map((e) => e.id)).toEqual([e1.id])
    expect(second.next_page_token).toBeNull()
    expect(await ids(['--action', 'run.*', ...PAST, '--all'])).toEqual([e3, e2, e1].map((e) => e.id))
  })

  it("reads an organization's events with --org, and the platform's own with --platform", async () => {
    expect(await ids(['--org', org.id, '--entity', 'run:r1', ...PAST])).toEqual([e2, e1].map((e) => e.id))
    const platformWide = await cli(['--platform', '--limit', '5', '--json'])
    expect(platformWide.code, platformWide.stderr).toBe(0)
    for (const event of parseJson<EventList>(platformWide).items) expect(event.org_id).toBeUndefined()
  })

  it('refuses flags that contradict each other, and bad durations or times, with exit 3', async () => {
    for (const args of [
      ['--since', '2h', '--from', '2026-01-01'],
      ['--org', org.id, '--platform'],
      ['--since', 'two hours'],
      ['--from', 'yesterday'],
      ['--outcome', 'maybe'],
    ]) {
      const res = await cli(args)
      expect(res.code, args.join(' ')).toBe(3)
    }
    const scopes = await runMain(['audit', 'events', '--org', org.id, '--project', project.id], { configDir: home })
    expect(scopes.code).toBe(3)
    expect(scopes.stderr).toContain('pass only one of --project, --org and --platform')
  })

  it('is for project admins and auditors: a lab member gets exit 5', async () => {
    const res = await runMain(['audit', 'events'], { configDir: await homeFor(lab.token) })
    expect(res.code).toBe(5)
    expect(res.stderr).toMatch(/^platform: permission denied: /)
  })
})
