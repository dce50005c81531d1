import { Timestamp } from '@google-cloud/firestore'

/**
 * JSON with object keys sorted and undefined members left out, so that equal values give equal
 * text whatever their key order: for hashes (audit events, idempotent requests) and comparisons.
 * Firestore timestamps are written as ISO 8601 strings.
 */
export function canonicalJson(value: unknown): string {
  if (value instanceof Timestamp) return JSON.stringify(value.toDate().toISOString())
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}
