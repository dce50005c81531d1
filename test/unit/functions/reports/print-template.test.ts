import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { REPORT_TEMPLATES, snapshotTemplate } from '../../../../domain/reports/template.js'
import type { SnapshotContent } from '../../../../domain/reports/snapshot.js'
import { documentHtml } from '../../../../functions/reports/pages/render.js'

/** A real format 1 snapshot's content (test/fixtures/reports/legacy-snapshot.json), taken before snapshots held their template's text. */
const legacy = JSON.parse(
  (JSON.parse(readFileSync(new URL('../../../fixtures/reports/legacy-snapshot.json', import.meta.url), 'utf8')) as { content: string }).content,
) as SnapshotContent

describe('what a snapshot prints as its methods and limitations', () => {
  const then = { title: 'Genetic test report (2026 wording)', methods: ['Sequenced on the 2026 instrument.'], limitations: ['The 2026 limits.'] }

  it.each([
    ['a format 2 snapshot: the text it holds, whatever the template says today', { template_type: 'germline_diagnostic', template: then }, then],
    [
      'a format 1 snapshot (no template in it): the template of today',
      { template_type: 'germline_diagnostic' },
      REPORT_TEMPLATES.germline_diagnostic,
    ],
    ['a format 2 snapshot of a template unknown when it was taken: none', { template_type: 'somatic', template: null }, undefined],
  ])('%s', (_name, report, expected) => {
    expect(snapshotTemplate(report)).toEqual(expected)
  })

  it('prints the snapshot’s own wording, not the template’s of today, in the signed document', () => {
    const content: SnapshotContent = { ...legacy, format: 'platform.report-snapshot/2', report: { ...legacy.report, template: then } }
    const page = documentHtml(content).toString()
    expect(page).toContain('Sequenced on the 2026 instrument.')
    expect(page).toContain('The 2026 limits.')
    expect(page).toContain('Genetic test report (2026 wording)')
    for (const line of REPORT_TEMPLATES.germline_diagnostic.methods) expect(page).not.toContain(line)
  })

  it('prints a format 1 snapshot with the template’s text of today', () => {
    const page = documentHtml(legacy).toString()
    const today = snapshotTemplate(legacy.report)
    expect(today).toBeDefined()
    for (const line of today!.methods) expect(page).toContain(line.slice(0, 40))
  })
})
