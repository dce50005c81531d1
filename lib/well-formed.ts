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

interface Visit {
  value: unknown
  key?: string
  parent?: Visit
}

const pathOf = (visit: Visit | undefined): string[] => {
  const path: string[] = []
  for (let v = visit; v?.key !== undefined; v = v.parent) path.push(v.key)
  return path.reverse()
}

const illFormedUnit = (text: string): string | undefined => {
  const found = LONE_SURROGATE.exec(text)
  return found ? `\\u${found[0].charCodeAt(0).toString(16).toUpperCase()}` : undefined
}

/**
 * The first string (key or value, in document order) in a parsed JSON value that holds a lone
 * surrogate. Walked with a stack of its own, not recursion: a body nested 100,000 levels deep is
 * the validator's to refuse (a 400), not a stack overflow here.
 */
export function firstIllFormed(value: unknown): IllFormed | undefined {
  const stack: Visit[] = [{ value }]
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    if (visit.key !== undefined) {
      const unit = illFormedUnit(visit.key)
      if (unit) return { path: pathOf(visit).join('.'), unit }
    }
    const here = visit.value
    if (typeof here === 'string') {
      const unit = illFormedUnit(here)
      if (unit) return { path: pathOf(visit).join('.'), unit }
    } else if (typeof here === 'object' && here !== null) {
      const entries = Object.entries(here)
      // Pushed last first, so that they are visited in document order.
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], key: entries[i]![0], parent: visit })
    }
  }
  return undefined
}
