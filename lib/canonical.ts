import { Timestamp } from '@google-cloud/firestore'
import canonicalize from 'canonicalize'

/**
 * The platform's own canonical JSON: object keys sorted (by UTF-16 code units) and undefined
 * members left out, so that equal values give equal text whatever their key order; Firestore
 * timestamps are written as ISO 8601 strings. For audit event hashes and the audit chain heads'
 * MACs (lib/audit.ts), comparisons, and the snapshots taken before they recorded their
 * canonicalization (`legacy`, domain/reports/snapshot.ts).
 *
 * Frozen: every audit chain and legacy snapshot hash verifies against this exact text. For a JSON
 * value RFC 8785 accepts it writes the same text as RFC 8785 (test/unit/lib/canonical.test.ts);
 * unlike RFC 8785 it never refuses a value (a lone surrogate is written as a `\udxxx` escape,
 * NaN and ±Infinity as `null`), which an audit event, written in the transaction of the change it
 * records, needs.
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

/**
 * A JSON value's canonical text under RFC 8785, the JSON Canonicalization Scheme (JCS), as the
 * `canonicalize` package (by the RFC's authors) writes it, so that anyone re-derives a hash of it
 * with any JCS implementation in any language. Throws on a value RFC 8785 has no form for (NaN,
 * ±Infinity, a string with a lone surrogate): callers give it well-formed values.
 */
export function rfc8785Json(value: unknown): string {
  const text = canonicalize(value)
  if (text === undefined) throw new TypeError(`rfc8785Json: a ${typeof value} is not a JSON value`)
  return text
}
