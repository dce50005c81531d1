import semver from 'semver'

/** Pipeline versions are semantic versions (semver.org 2.0.0); the `semver` package decides what one is and how they order. */
export const isSemver = (version: string) => semver.valid(version) !== null

/** Semantic-version precedence: negative when a < b. Build metadata is ignored, as semver says. */
export function compareSemver(a: string, b: string): number {
  if (!isSemver(a) || !isSemver(b)) throw new Error(`not a semantic version: ${!isSemver(a) ? a : b}`)
  return semver.compare(a, b)
}

/**
 * A string whose lexical order is semantic-version order, so that Firestore can list versions
 * newest first: zero-padded numbers, then '~' for releases (sorting after any pre-release tag).
 * Between pre-releases of one version the order is lexical, close enough for listing; "latest"
 * is always chosen with compareSemver.
 */
export function versionKey(version: string): string {
  const v = semver.parse(version)
  if (!v) throw new Error(`not a semantic version: ${version}`)
  const pad = (n: number) => String(n).padStart(10, '0')
  return `${pad(v.major)}.${pad(v.minor)}.${pad(v.patch)}${v.prerelease.length ? `-${v.prerelease.join('.')}` : '~'}`
}

export function latestVersion<T extends { version: string }>(items: T[]): T | undefined {
  return items.reduce<T | undefined>((best, p) => (!best || compareSemver(p.version, best.version) > 0 ? p : best), undefined)
}
