/**
 * How a result is printed: `--format json|yaml|csv|table`, each optionally with the fields to keep,
 * as gcloud writes it (`--format 'table(id,status,created)'`, `--format 'csv(name,size)'`). One
 * module for every command: a command hands over its result and its human view, this decides.
 */
import { stringify as csvStringify } from 'csv-stringify/sync'
import { InvalidArgumentError } from 'commander'
import stringWidth from 'string-width'

/** How many terminal cells `text` takes: wide characters two, colour codes none. */
export const displayWidth = (text: string) => stringWidth(text)
import { stringify as yamlStringify } from 'yaml'

export const FORMAT_NAMES = ['table', 'json', 'yaml', 'csv'] as const
export type FormatName = (typeof FORMAT_NAMES)[number]

export interface Format {
  name: FormatName
  /** Field paths to keep (`id`, `actor.email`), in this order; none: the whole result. */
  fields?: string[]
}

export const DEFAULT_FORMAT: Format = { name: 'table' }

const FIELD = /^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$/

/** `json`, `table(id,status)`, `csv( name , size )`: the value of --format. */
export function parseFormat(spec: string): Format {
  const match = /^\s*([a-z]+)\s*(?:\((.*)\))?\s*$/.exec(spec)
  const name = match?.[1] as FormatName | undefined
  if (!match || !name || !FORMAT_NAMES.includes(name))
    throw new InvalidArgumentError(`expected ${FORMAT_NAMES.join(', ')}, optionally with fields: table(id,status)`)
  if (match[2] === undefined) return { name }
  const fields = match[2].split(',').map((f) => f.trim())
  const bad = fields.find((f) => !FIELD.test(f))
  if (bad !== undefined) throw new InvalidArgumentError(`'${bad}' is not a field name: write fields as id,status or actor.email`)
  return { name, fields }
}

/** The value at a dotted path (`actor.email`); undefined when any step is missing. */
export function pick(record: unknown, path: string): unknown {
  let value = record
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/**
 * The records of a result: a listing's items (`{items, next_page_token}`), an array's elements,
 * or the one object a command such as `runs status` prints.
 */
export function recordsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value
  if (value !== null && typeof value === 'object' && Array.isArray((value as { items?: unknown }).items)) return (value as { items: unknown[] }).items
  return [value]
}

const isSingle = (value: unknown) => recordsOf(value).length === 1 && recordsOf(value)[0] === value

/** Only the chosen fields of each record, as an object keyed by field path; a single record stays one object. */
function project(value: unknown, fields: string[]): unknown {
  const one = (record: unknown) => Object.fromEntries(fields.map((f) => [f, pick(record, f) ?? null]))
  return isSingle(value) ? one(value) : recordsOf(value).map(one)
}

/** Every top-level key of the records, in the order first seen: the columns of a csv without fields. */
function keysOf(records: unknown[]): string[] {
  const keys = new Set<string>()
  for (const r of records) if (r !== null && typeof r === 'object') for (const k of Object.keys(r)) keys.add(k)
  return [...keys]
}

/** A csv cell: scalars as they are, nothing for a missing value, nested values as JSON. */
function csvCell(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** How a table looks on this output: statuses coloured or not, the width to fit (a terminal's), or none. */
export interface Style {
  colour: boolean
  width?: number
}

export const PLAIN: Style = { colour: false }

const ANSI: Record<string, number> = { green: 32, red: 31, yellow: 33, cyan: 36, grey: 90 }
/** The colour of a status or outcome word: done well green, failed or refused red, waiting yellow, under way cyan. */
const TONE: Record<string, keyof typeof ANSI> = {
  succeeded: 'green',
  success: 'green',
  failed: 'red',
  failure: 'red',
  denied: 'red',
  error: 'red',
  queued: 'yellow',
  running: 'cyan',
  cancelled: 'grey',
}

/** A status word in its colour, when the style has colour and the word has one. */
export function paint(style: Style, text: string): string {
  const tone = style.colour ? TONE[text] : undefined
  return tone ? `\x1b[${ANSI[tone]}m${text}\x1b[39m` : text
}

export interface Column<T> {
  header: string
  value: (row: T) => unknown
  /** A status word: coloured on a terminal. */
  status?: boolean
  /** Free text that may be cut short (with …) to fit the terminal; ids and times never are. */
  fit?: boolean
}

const EMPTY = '-'
const GAP = 2
/** A column cut to fit keeps at least this many characters (or its header's width). */
const MIN_FIT = 8

export function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return EMPTY
  if (Array.isArray(value)) return value.length ? value.map(cell).join(', ') : EMPTY
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** `text` cut to `width` terminal cells, ending in …; wide characters (CJK, emoji) count as two. */
export function truncate(text: string, width: number): string {
  if (stringWidth(text) <= width) return text
  let kept = ''
  for (const { segment } of new Intl.Segmenter().segment(text)) {
    if (stringWidth(kept + segment) > width - 1) break
    kept += segment
  }
  return kept + '…'
}

/**
 * Columns padded to their widest cell (measured in terminal cells); the last column is not padded,
 * so lines carry no trailing spaces. With a width, the widest `fit` columns give up characters
 * one at a time until the table fits.
 */
export function table<T>(rows: T[], columns: Column<T>[], style: Style = PLAIN): string {
  const texts = rows.map((row) => columns.map((c) => cell(c.value(row))))
  const widths = columns.map((c, i) => Math.max(stringWidth(c.header), ...texts.map((line) => stringWidth(line[i] ?? ''))))
  if (style.width !== undefined) {
    let over = widths.reduce((a, b) => a + b, 0) + GAP * (columns.length - 1) - style.width
    const floor = (i: number) => Math.max(MIN_FIT, stringWidth(columns[i]!.header))
    while (over > 0) {
      let widest = -1
      columns.forEach((c, i) => {
        if (c.fit && widths[i]! > floor(i) && (widest < 0 || widths[i]! > widths[widest]!)) widest = i
      })
      if (widest < 0) break
      widths[widest]!--
      over--
    }
  }
  const line = (cells: string[], isHeader: boolean) =>
    cells
      .map((raw, i) => {
        const text = truncate(raw, widths[i]!)
        const shown = !isHeader && columns[i]!.status ? paint(style, text) : text
        return i === cells.length - 1 ? shown : shown + ' '.repeat(widths[i]! - stringWidth(text))
      })
      .join(' '.repeat(GAP))
  return [
    line(
      columns.map((c) => c.header),
      true,
    ),
    ...texts.map((cells) => line(cells, false)),
  ].join('\n')
}

/** "label  value" lines, labels aligned. */
export function fields(pairs: Array<[label: string, value: unknown]>): string {
  const width = Math.max(...pairs.map(([label]) => label.length))
  // Continuation lines of a multi-line value (an error with its stderr) stay in the value column.
  const indent = '\n' + ' '.repeat(width + 2)
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${cell(value).replace(/\r?\n/g, indent)}`).join('\n')
}

/** A field shown as a column: its path upper-cased as the header; ids never cut, statuses coloured. */
function fieldColumn(path: string): Column<unknown> {
  const last = path.split('.').at(-1)!
  return {
    header: path.toUpperCase(),
    value: (row) => pick(row, path),
    status: last === 'status' || last === 'outcome',
    fit: last !== 'id' && !last.endsWith('_id'),
  }
}

/**
 * The text of a result in `format`: `human` is the command's own view (the default table format
 * without fields); the others are made from `value`, the document `--format json` prints whole.
 */
export function render(value: unknown, format: Format, human: () => string, style: Style = PLAIN): string {
  const { name, fields: chosen } = format
  switch (name) {
    case 'json':
      return JSON.stringify(chosen ? project(value, chosen) : value, null, 2)
    case 'yaml':
      return yamlStringify(chosen ? project(value, chosen) : value).replace(/\n$/, '')
    case 'csv': {
      const records = recordsOf(value)
      const columns = chosen ?? keysOf(records)
      return csvStringify([columns, ...records.map((r) => columns.map((f) => csvCell(pick(r, f))))]).replace(/\r?\n$/, '')
    }
    case 'table':
      return chosen ? table(recordsOf(value), chosen.map(fieldColumn), style) : human()
  }
}
