import { Timestamp } from '@google-cloud/firestore'
import { html } from '../../../../lib/console/index.js'
import { describe, expect, it } from 'vitest'
import { duration, runLogPage, runPage, runsList, type Links, type LogLine } from '../../../../functions/compute/console/views.js'
import type { RunRecord } from '../../../../domain/runs/store.js'

const links: Links = {
  runs: () => '/runs',
  run: (id) => `/runs/${id}`,
  cancel: (id) => `/runs/${id}/cancel`,
  relaunch: (id) => `/runs/${id}/relaunch`,
  download: (id, path) => `/runs/${id}/download?path=${path}`,
  log: (id, stream) => `/runs/${id}/log${stream ? `?stream=${stream}` : ''}`,
  pipelines: () => '/pipelines',
  pipeline: (id) => `/pipelines/${id}`,
  launch: (id) => `/pipelines/${id}/launch`,
  order: (id) => `https://clinical.example/console/p/p1/orders/${id}`,
  history: (id) => `https://audit.example/console/p/p1/history?entity=run%3A${id}`,
}
const at = (iso: string) => Timestamp.fromDate(new Date(iso))
const run = (patch: Partial<RunRecord> = {}): RunRecord =>
  ({
    id: 'r1',
    name: 'hello-local-20261126T101500Z',
    status: 'queued',
    pipeline_id: 'p1',
    pipeline_slug: 'hello-local',
    pipeline_version: '1.0.0',
    pipeline_type: 'container_entrypoint',
    params: { greeting: '<b>hi</b>', n: 3 },
    tags: [],
    created: at('2026-11-26T10:15:00Z'),
    bucket_name: 'b',
    ...patch,
  }) as RunRecord
const session = { key: 'k' } as Parameters<typeof runPage>[0]['session']
const page = (r: RunRecord, opts: { canCancel?: boolean; relaunchKey?: string; logTail?: LogLine[] } = {}) =>
  runPage({
    run: r,
    links,
    session,
    canCancel: opts.canCancel ?? true,
    relaunchKey: opts.relaunchKey,
    canReadFiles: true,
    logTail: opts.logTail ?? [],
  }).value

describe("the runs console's views", () => {
  it.each([
    [0.4, '0 s'],
    [42, '42 s'],
    [185, '3 min 5 s'],
    [7440, '2 h 4 min'],
  ])('writes %d seconds as %s', (seconds, text) => {
    expect(duration(seconds)).toBe(text)
  })

  it("links a run's order to the clinical console's order page, by its accession", () => {
    const html = page(run({ order_id: 'o-1', order_accession: 'ORD-2026-000001' }))
    expect(html).toContain('<a href="https://clinical.example/console/p/p1/orders/o-1">ORD-2026-000001</a>')
  })

  it("links a run's audit history for those who may read it, and not for others", () => {
    expect(page(run())).toContain('<a href="https://audit.example/console/p/p1/history?entity=run%3Ar1" id="history-run">Its history</a>')
    expect(
      runPage({ run: run(), links: { ...links, history: () => undefined }, canCancel: true, canReadFiles: true, session, logTail: [] }).toString(),
    ).not.toContain('id="history-run"')
  })

  it.each<[string, Partial<RunRecord>, boolean]>([
    ['a queued run', { status: 'queued', work_session: 'r1' }, false],
    ['a running run', { status: 'running', work_session: 'r1' }, false],
    ['a failed run', { status: 'failed', work_session: 'r1' }, true],
    ['a cancelled run', { status: 'cancelled', work_session: 'r1' }, true],
    ['a succeeded run', { status: 'succeeded', work_session: 'r1' }, true],
    ['a failed run from before work sessions', { status: 'failed' }, false],
  ])('offers Relaunch on %s, and Resume only once it has ended in a work session: %s', (_, patch, resume) => {
    const html = page(run(patch), { relaunchKey: 'key-1' })
    expect(html).toContain('<form method="post" action="/runs/r1/relaunch" class="actions" id="relaunch-form">')
    expect(html).toContain('<input type="hidden" name="idempotency_key" value="key-1" />')
    expect(html).toContain('id="relaunch"')
    expect(html.includes('id="resume"')).toBe(resume)
  })

  it('offers neither to a person who may not submit runs', () => {
    expect(page(run({ status: 'failed', work_session: 'r1' }))).not.toContain('relaunch-form')
  })

  it('links the run it relaunches and its own relaunches', () => {
    const html = page(run({ relaunched_from: { id: 'r0', name: 'hello-local-0', resume: true }, relaunches: ['r2', 'r3'] }))
    expect(html).toMatch(/<dd id="relaunched-from">\s*<a href="\/runs\/r0">hello-local-0<\/a> \(resumed\)\s*<\/dd>/)
    expect(html).toContain('<a href="/runs/r2"><code>r2</code></a>, <a href="/runs/r3"><code>r3</code></a>')
  })

  it("shows the end of the run's log, stderr lines marked in words, escaped, with links to the whole log and its stderr", () => {
    const job = { name: 'projects/p/locations/r/jobs/run-r1', uid: 'u', created_at: at('2026-11-26T10:15:00Z') }
    const shown = page(run({ status: 'running', job }), {
      logTail: [
        { time: '2026-11-26T10:15:01Z', task: 'u-group0-0', stream: 'stdout', text: 'aligning <chr1>' },
        { time: '2026-11-26T10:15:02Z', task: 'u-group0-0', stream: 'stderr', text: 'low coverage' },
      ],
    })
    expect(shown).toContain('<code class="line">aligning &lt;chr1&gt;</code>')
    expect(shown).toMatch(/<tr class="stderr">\s*<td>[^]*?<\/td>\s*<td>stderr<\/td>\s*<td><code class="line">low coverage<\/code>/)
    expect(shown).toContain('<a href="/runs/r1/log" id="whole-log">The whole log</a>')
    expect(shown).toContain('<a href="/runs/r1/log?stream=stderr" id="stderr-log">')
    expect(page(run({ status: 'running', job }))).toContain('Nothing written yet.')
    expect(page(run())).toContain('The log begins once the run has started.')
  })

  it('pages the whole log, naming the stream shown and offering the others, and says when lines may still come', () => {
    const r = run({ status: 'running' })
    const empty = runLogPage({ run: r, links, lines: [], stream: 'stderr', pager: html``, complete: false }).value
    expect(empty).toContain('<strong aria-current="page">stderr</strong>')
    expect(empty).toContain('<a href="/runs/r1/log">both streams</a>')
    expect(empty).toContain('No lines yet')
    expect(runLogPage({ run: run({ status: 'succeeded' }), links, lines: [], pager: html``, complete: true }).value).toContain('No lines.')
  })

  it('says why a queued run waits, and what a failed run reported', () => {
    expect(page(run({ status_reason: 'quota exceeded in us-central1' }))).toContain('Waiting: quota exceeded in us-central1')
    const failed = page(run({ status: 'failed', error_message: 'exit code 3', finished: at('2026-11-26T10:16:00Z') }))
    expect(failed).toContain('Error: exit code 3')
    expect(failed).not.toContain('id="cancel"')
  })

  it('offers cancelling an active run only to those who may, behind a question', () => {
    expect(page(run())).toMatch(/<form method="post" action="\/runs\/r1\/cancel" class="actions" data-confirm="Cancel run hello-local-/)
    expect(page(run(), { canCancel: false })).not.toContain('id="cancel"')
  })

  it('escapes the params it shows, and gives a duration once started and finished', () => {
    const html = page(run({ status: 'succeeded', started: at('2026-11-26T10:15:10Z'), finished: at('2026-11-26T10:17:15Z') }))
    expect(html).toContain('&lt;b&gt;hi&lt;/b&gt;')
    expect(html).toContain('2 min 5 s')
  })

  it('names the filters in the caption of the list', () => {
    const list = runsList({ runs: [run()], filter: { status: 'queued', order: 'ORD-2026-000001' }, links, pager: html``, canLaunch: false }).value
    expect(list).toContain('that are queued for order ORD-2026-000001')
  })
})
