/** What commands print: raw JSON with --json, aligned tables and fields otherwise. Results go to stdout, notes to stderr. */

export interface Writable {
  write(chunk: string): unknown
}

export interface Column<T> {
  header: string
  value: (row: T) => unknown
}

const EMPTY = '-'

export function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return EMPTY
  if (Array.isArray(value)) return value.length ? value.map(cell).join(', ') : EMPTY
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** Columns padded to their widest cell; the last column is not padded, so lines carry no trailing spaces. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((row) => columns.map((c) => cell(c.value(row))))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => (line[i] ?? '').length)))
  return cells.map((line) => line.map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i] ?? 0))).join('  ')).join('\n')
}

/** "label  value" lines, labels aligned. */
export function fields(pairs: Array<[label: string, value: unknown]>): string {
  const width = Math.max(...pairs.map(([label]) => label.length))
  // Continuation lines of a multi-line value (an error with its stderr) stay in the value column.
  const indent = '\n' + ' '.repeat(width + 2)
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${cell(value).replace(/\r?\n/g, indent)}`).join('\n')
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
    readonly json: boolean,
    private readonly stdout: Writable,
    private readonly stderr: Writable,
    /** stdout is a terminal: a status line can be rewritten in place. */
    private readonly terminal = false,
  ) {}

  /** Whether `status` shows anything: on a terminal, and not with --json (a script reads that output). */
  get live(): boolean {
    return this.terminal && !this.json
  }

  /** The result of a command: `value` as JSON with --json, else `text()`. */
  result(value: unknown, text: () => string) {
    this.write(this.stdout, (this.json ? JSON.stringify(value, null, 2) : text()) + '\n')
  }

  /** One JSON document per line (a stream of events such as `runs watch` changes). */
  jsonLine(value: unknown) {
    this.write(this.stdout, JSON.stringify(value) + '\n')
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
