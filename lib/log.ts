export type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent'
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** Structured one-line JSON logs, the shape Cloud Logging parses (severity, message). */
export function createLogger(level: Level, base: Record<string, unknown> = {}): Logger {
  const write = (lvl: Exclude<Level, 'silent'>, message: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < order[level]) return
    const entry: Record<string, unknown> = { severity: lvl.toUpperCase(), message, ...base }
    for (const [k, v] of Object.entries(fields ?? {})) {
      entry[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v
    }
    const line = JSON.stringify(entry)
    if (lvl === 'error' || lvl === 'warn') process.stderr.write(line + '\n')
    else process.stdout.write(line + '\n')
  }
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  }
}
