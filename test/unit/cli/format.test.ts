import { stripVTControlCharacters } from 'node:util'
import { InvalidArgumentError } from 'commander'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { displayWidth as stringWidth, parseFormat, render, table, truncate, type Column, type Format } from '../../../cli/format.js'
import { Output } from '../../../cli/output.js'

interface Row {
  id: string
  name: string
  status: string
  actor: { email: string }
}

const rows: Row[] = [
  { id: 'a1', name: 'hello-local-20261122T171710Z', status: 'succeeded', actor: { email: 'ana@example.org' } },
  { id: 'b2', name: 'trio, "proband"', status: 'failed', actor: { email: 'bo@example.org' } },
]
const listing = { items: rows, next_page_token: 'tok' }
const human = () => 'the human view'

describe('--format', () => {
  it.each<[string, Format]>([
    ['json', { name: 'json' }],
    ['table(id,status)', { name: 'table', fields: ['id', 'status'] }],
    [' csv( name , actor.email ) ', { name: 'csv', fields: ['name', 'actor.email'] }],
    ['yaml', { name: 'yaml' }],
  ])('reads %j', (spec, format) => {
    expect(parseFormat(spec)).toEqual(format)
  })

  it.each(['xml', 'table(id', 'table(id,,status)', 'json(a b)', ''])('refuses %j as a usage error', (spec) => {
    expect(() => parseFormat(spec)).toThrow(InvalidArgumentError)
  })

  it("prints the command's own view for table without fields, and the whole document for json and yaml", () => {
    expect(render(listing, { name: 'table' }, human)).toBe('the human view')
    expect(JSON.parse(render(listing, { name: 'json' }, human))).toEqual(listing)
    expect(parseYaml(render(listing, { name: 'yaml' }, human))).toEqual(listing)
  })

  it('keeps only the chosen fields, dotted paths included, of each record of a listing or of the one record', () => {
    const format: Format = { name: 'json', fields: ['id', 'actor.email', 'missing'] }
    expect(JSON.parse(render(listing, format, human))).toEqual([
      { id: 'a1', 'actor.email': 'ana@example.org', missing: null },
      { id: 'b2', 'actor.email': 'bo@example.org', missing: null },
    ])
    expect(parseYaml(render(rows[0], { name: 'yaml', fields: ['status'] }, human))).toEqual({ status: 'succeeded' })
  })

  it('writes csv with a header row, quoting commas and quotes, every top-level key without fields', () => {
    expect(render(listing, { name: 'csv', fields: ['id', 'name'] }, human)).toBe('id,name\na1,hello-local-20261122T171710Z\nb2,"trio, ""proband"""')
    expect(render(rows, { name: 'csv' }, human).split('\n')[0]).toBe('id,name,status,actor')
    expect(render(rows, { name: 'csv' }, human).split('\n')[1]).toBe('a1,hello-local-20261122T171710Z,succeeded,"{""email"":""ana@example.org""}"')
  })

  it('makes a table of the chosen fields, headed by their upper-cased paths', () => {
    expect(render(listing, { name: 'table', fields: ['id', 'status'] }, human)).toBe('ID  STATUS\na1  succeeded\nb2  failed')
  })
})

describe('tables on a terminal', () => {
  const columns: Column<Row>[] = [
    { header: 'ID', value: (r) => r.id },
    { header: 'NAME', value: (r) => r.name, fit: true },
    { header: 'STATUS', value: (r) => r.status, status: true },
  ]

  it('colours statuses only when the style has colour, and pads by what is visible', () => {
    const plain = table(rows, columns)
    const coloured = table(rows, columns, { colour: true })
    expect(plain).not.toContain('\x1b[')
    expect(coloured).toContain('\x1b[32msucceeded\x1b[39m')
    expect(coloured).toContain('\x1b[31mfailed\x1b[39m')
    expect(stripVTControlCharacters(coloured)).toBe(plain)
  })

  it('cuts the free-text column with an ellipsis to fit the width, never the id', () => {
    const fitted = table(rows, columns, { colour: false, width: 30 })
    for (const line of fitted.split('\n')) expect(stringWidth(line)).toBeLessThanOrEqual(30)
    expect(fitted).toContain('…')
    expect(fitted.split('\n')[1]!.startsWith('a1  ')).toBe(true)
  })

  it('measures wide characters as two cells', () => {
    const wide = [{ ...rows[0]!, name: '患者サンプルの解析結果ファイル' }]
    const fitted = table(wide, columns, { colour: false, width: 32 })
    for (const line of fitted.split('\n')) expect(stringWidth(line)).toBeLessThanOrEqual(32)
  })

  it('truncates any text to at most the width, ending in … when cut (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.integer({ min: 1, max: 40 }), (text, width) => {
        const cut = truncate(text, width)
        if (stringWidth(text) <= width) expect(cut).toBe(text)
        else {
          expect(stringWidth(cut)).toBeLessThanOrEqual(width)
          expect(cut.endsWith('…')).toBe(true)
        }
      }),
    )
  })

  it('has no colour without a terminal, with NO_COLOR or --no-color: only the style the session builds says so', () => {
    const written: string[] = []
    const out = new Output({ name: 'table' }, { write: (t: string) => written.push(t) }, { write: () => undefined }, false, { colour: false })
    out.line(out.paint('failed'))
    expect(written.join('')).toBe('failed\n')
  })
})
