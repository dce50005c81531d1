/**
 * Text the platform stores must be well-formed Unicode: Firestore refuses a string holding a lone
 * UTF-16 surrogate (which JSON's `\uD800` escapes can carry), and RFC 8785 cannot canonicalize one.
 * Found at the door, such a body is the client's error (400 naming the field), never a failed write.
 */

// With the u flag a surrogate pair is one code point, so only an unpaired half matches.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

export interface IllFormed {
  /** Where in the body, as the validation errors name fields (`a.b.0`); empty for the body itself. */
  path: string
  /** The unpaired code unit, as JSON would escape it (`\uD800`). */
  unit: string
}

/** The first string (key or value) in a parsed JSON value that holds a lone surrogate. */
export function firstIllFormed(value: unknown, path: readonly string[] = []): IllFormed | undefined {
  if (typeof value === 'string') {
    const found = LONE_SURROGATE.exec(value)
    return found ? { path: path.join('.'), unit: `\\u${found[0].charCodeAt(0).toString(16).toUpperCase()}` } : undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, inner] of Object.entries(value)) {
    const here = [...path, key]
    const inKey = firstIllFormed(key, here)
    if (inKey) return inKey
    const inValue = firstIllFormed(inner, here)
    if (inValue) return inValue
  }
  return undefined
}
