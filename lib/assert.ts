/** For the default branch of an exhaustive switch: the compiler proves it unreachable. */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`)
}
