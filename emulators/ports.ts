/**
 * Where each part of the local suite listens, all derived from one base port (default 8100):
 *
 *   base            the OIDC provider
 *   base + 1..19    the HTTP services, at their registry port's offset from 8100 (admin 8101 → base + 1)
 *   base + 20..39   the orchestrator functions, in the order they are hosted
 *   base + 40       the local storage server (Cloud Storage's XML API for the local buckets)
 *   base + 80       the Firestore emulator
 *   base + 85       the Pub/Sub emulator
 *
 * So a second suite beside the first needs only another base (e.g. --base-port 8200).
 */
export const DEFAULT_BASE_PORT = 8100
const REGISTRY_BASE = 8100
const FUNCTIONS_OFFSET = 20
const MAX_FUNCTIONS = 20
const STORAGE_OFFSET = 40

export interface SuitePorts {
  oidc: number
  services: Record<string, number>
  functions: Record<string, number>
  storage: number
  firestore: number
  pubsub: number
}

export function suitePorts(base: number, services: ReadonlyArray<{ name: string; port: number }>, functionNames: readonly string[]): SuitePorts {
  const servicePorts: Record<string, number> = {}
  for (const { name, ...def } of services) {
    const offset = def.port - REGISTRY_BASE
    if (offset < 1 || offset >= FUNCTIONS_OFFSET) {
      throw new Error(
        `service ${name} has registry port ${def.port}; the local suite needs ports ${REGISTRY_BASE + 1}..${REGISTRY_BASE + FUNCTIONS_OFFSET - 1}`,
      )
    }
    const taken = Object.entries(servicePorts).find(([, port]) => port === base + offset)
    if (taken) throw new Error(`services ${taken[0]} and ${name} share registry port ${def.port}`)
    servicePorts[name] = base + offset
  }
  if (functionNames.length > MAX_FUNCTIONS) throw new Error(`the local suite hosts at most ${MAX_FUNCTIONS} functions`)
  const functionPorts = Object.fromEntries(functionNames.map((name, i) => [name, base + FUNCTIONS_OFFSET + i]))
  return { oidc: base, services: servicePorts, functions: functionPorts, storage: base + STORAGE_OFFSET, firestore: base + 80, pubsub: base + 85 }
}

export function allPorts(p: SuitePorts): number[] {
  return [p.oidc, ...Object.values(p.services), ...Object.values(p.functions), p.storage, p.firestore, p.pubsub]
}

/** The highest base that keeps every port of the scheme below 65536. */
export const MAX_BASE_PORT = 65535 - 85
