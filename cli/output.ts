/** What commands print, in the --format chosen (see format.ts). Results go to stdout, notes to stderr. */
import { stringify as yamlStringify } from 'yaml'
import { paint, render, table, type Column, type Format, type Style } from './format.js'

export interface Writable {
  write(chunk: string): unknown
}

/** 3725 → "1h 02m 05s", 65 → "1m 05s", 4.2 → "4s". */
export function formatDuration(seconds: number | null | undefined): string | undefined {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return undefined
  const total = Math.max(0, Math.round(seconds))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (h) return `${h}h ${String(m).padStart(2, '0')}m ${String(s).padStart(2, '0')}s`
  if (m) return `${m}m ${String(s).padStart(2, '0')}s`
  return `${s}s`
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** 512 → "512 B", 1536 → "1.5 KiB", 1073741824 → "1.0 GiB": binary units, one decimal from KiB on. */
export function formatBytes(bytes: number): string {
  let value = bytes
  let unit = 0
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`
}

/** How long a transfer took and its rate: "1.0 GiB in 2.4s (427.1 MiB/s)". */
export function formatTransfer(bytes: number, seconds: number): string {
  const time = seconds < 60 ? `${seconds.toFixed(1)}s` : formatDuration(seconds)
  return `${formatBytes(bytes)} in ${time}${seconds > 0 ? ` (${formatBytes(bytes / seconds)}/s)` : ''}`
}

/** ISO timestamps without milliseconds: 2026-11-22T06:15:30Z. */
export function formatTime(iso: string | null | undefined): string | undefined {
  if (!iso) return undefined
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Moves to the start of the line and erases it (ANSI): how a status line is rewritten in place. */
export const CLEAR_LINE = '\r\x1b[2K'

export class Output {
  private statusShown = false

  constructor(
    readonly format: Format,
    private readonly stdout: Writable,
    private readonly stderr: Writable,
    /** stdout is a terminal: a status line can be rewritten in place. */
    private readonly terminal = false,
    /** Colour and the width to fit: a terminal's, unless NO_COLOR or --no-color says otherwise. */
    readonly style: Style = { colour: false },
  ) {}

  /** --format json (or --json): results are JSON for a script. */
  get json(): boolean {
    return this.format.name === 'json'
  }

  /** The command's own human view: the default table format, no fields chosen. */
  get human(): boolean {
    return this.format.name === 'table' && !this.format.fields
  }

  /** json or yaml: a stream (`runs watch`) prints documents, not lines of text. */
  get structured(): boolean {
    return this.format.name === 'json' || this.format.name === 'yaml'
  }

  /** The whole result document is printed (json or yaml without fields): a listing's next_page_token is in it. */
  get whole(): boolean {
    return (this.format.name === 'json' || this.format.name === 'yaml') && !this.format.fields
  }

  /** Whether `status` shows anything: on a terminal, and only with the table format (a script reads the others). */
  get live(): boolean {
    return this.terminal && this.format.name === 'table'
  }

  /** The result of a command in the chosen format; `text()` is its human view. */
  result(value: unknown, text: () => string) {
    this.write(this.stdout, render(value, this.format, text, this.style) + '\n')
  }

  /**
   * One record of a stream (a `runs watch` change): a JSON document per line, a YAML document
   * after `---`, else `text` (field selection applies to listings, not to streams).
   */
  record(value: unknown, text: string) {
    if (this.format.name === 'json') this.write(this.stdout, JSON.stringify(value) + '\n')
    else if (this.format.name === 'yaml') this.write(this.stdout, `---\n${yamlStringify(value)}`)
    else this.line(text)
  }

  /** A table in this output's style: statuses coloured, fitted to the terminal's width. */
  table<T>(rows: T[], columns: Column<T>[]): string {
    return table(rows, columns, this.style)
  }

  /** A status word in its colour, when this output has colour. */
  paint(text: string): string {
    return paint(this.style, text)
  }

  line(text: string) {
    this.write(this.stdout, text + '\n')
  }

  /** Notes for the person at the terminal; never mixed into the results a script parses. */
  note(text: string) {
    this.write(this.stderr, text + '\n')
  }

  /** A line rewritten in place on a terminal (a watch's elapsed time), erased before anything else is printed; nothing elsewhere. */
  status(text: string) {
    if (!this.live) return
    this.stdout.write(CLEAR_LINE + text)
    this.statusShown = true
  }

  /** Erases the status line, if one is shown. */
  clearStatus() {
    if (!this.statusShown) return
    this.stdout.write(CLEAR_LINE)
    this.statusShown = false
  }

  private write(stream: Writable, text: string) {
    this.clearStatus()
    stream.write(text)
  }
}
