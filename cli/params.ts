import type { PipelineInput } from './client.js'
import { usageError } from './errors.js'

/**
 * Run parameters from `--params-file` and `--param` flags, typed by the pipeline's declared inputs:
 *   --param key=value    a string; an integer, number or boolean input is converted;
 *                        an array input splits the value on commas, and repeated flags append
 *                        (--param fastq=a.fq,b.fq  is  --param fastq=a.fq --param fastq=b.fq);
 *   --param key:=JSON    the value as JSON, for any input (objects, arrays of numbers, null).
 * Flags override the file's keys; an input that takes one value may be given once.
 */

const KEY_RE = /^[A-Za-z_][\w.-]*$/

const isArray = (input: PipelineInput) => input.type === 'array'

function convert(key: string, type: string, raw: string): unknown {
  switch (type) {
    case 'integer':
      if (!/^-?\d+$/.test(raw)) throw usageError(`--param ${key}: expected an integer, got '${raw}'`)
      return Number(raw)
    case 'number': {
      const n = Number(raw)
      if (raw.trim() === '' || !Number.isFinite(n)) throw usageError(`--param ${key}: expected a number, got '${raw}'`)
      return n
    }
    case 'boolean':
      if (/^(true|yes|1)$/i.test(raw)) return true
      if (/^(false|no|0)$/i.test(raw)) return false
      throw usageError(`--param ${key}: expected true or false, got '${raw}'`)
    default:
      return raw
  }
}

function split(flag: string): { key: string; raw: string; json: boolean } {
  const eq = flag.indexOf('=')
  if (eq <= 0) throw usageError(`--param '${flag}': expected key=value or key:=JSON`)
  const json = flag[eq - 1] === ':'
  const key = flag.slice(0, json ? eq - 1 : eq)
  if (!KEY_RE.test(key)) throw usageError(`--param '${flag}': '${key}' is not a parameter name`)
  return { key, raw: flag.slice(eq + 1), json }
}

export function paramsFromFlags(inputs: PipelineInput[], flags: string[]): Record<string, unknown> {
  const byName = new Map(inputs.map((i) => [i.name, i]))
  const out: Record<string, unknown> = {}
  const appendable = new Set<string>()
  for (const flag of flags) {
    const { key, raw, json } = split(flag)
    const input = byName.get(key)
    if (json) {
      if (key in out) throw usageError(`--param ${key} is given twice`)
      try {
        out[key] = JSON.parse(raw)
      } catch (error) {
        throw usageError(`--param ${key}:= is not valid JSON: ${(error as Error).message}`)
      }
      continue
    }
    if (input && isArray(input)) {
      if (key in out && !appendable.has(key)) throw usageError(`--param ${key} is given twice`)
      const type = input.items ?? 'string'
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map((s) => convert(key, type, s))
      out[key] = [...((out[key] as unknown[] | undefined) ?? []), ...items]
      appendable.add(key)
      continue
    }
    if (key in out) throw usageError(`--param ${key} is given twice; it takes one value (use ${key}:=JSON for a list)`)
    out[key] = input ? convert(key, input.type, raw) : raw
  }
  return out
}

export function parseParamsFile(path: string, text: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw usageError(`${path} is not valid JSON: ${(error as Error).message}`)
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError(`${path} must hold a JSON object of parameter names to values`)
  return parsed as Record<string, unknown>
}
